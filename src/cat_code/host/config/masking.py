"""Masking secrets for display: what ``mcp get``, ``mcp import`` and status lines show.

A literal value that may be a secret — an env or header value, a URL's user:password
or query value, the value of a secret-looking option (``--api-key X``, ``--token=X``,
``GITHUB_TOKEN=X``), an OAuth client secret — is shown as ``****``. A ``${VAR}``
reference is shown as written (it names where the secret comes from, not the secret),
except its default, which is a literal: ``${VAR:-****}``. In a command's arguments, a
header (``--header 'Authorization: Bearer X'``, ``-H``, or any ``Secret-Name: X``) has its
value masked, and so has the credential after ``Bearer``/``Basic``/``Token`` anywhere.
Masking is by name, so it may hide a harmless value; it must never show a secret one. A
command line is shown with `shlex.join`'s quoting, masks and ``${VAR}`` references left
bare (`shown_command`). Status, errors and logs show entries only this way: the host
hands its transports the masked, written target to name in their messages.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

#: A ``${NAME}`` or ``${NAME:-default}`` reference as config files write it: the one
#: pattern for `config` (which expands them) and for masking (which shows them).
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_AUTH_SCHEME = re.compile(r"^\s*(?:Bearer|Basic|Token|Bot)?\s*$", re.IGNORECASE)
_MASK = "****"
#: The options whose value is an HTTP header line (``Name: value``).
_HEADER_OPTIONS = frozenset({"--header", "-H", "--headers"})
#: ``Name: value``, as a header is written on a command line.
_HEADER = re.compile(r"([A-Za-z0-9_-]+)\s*:\s*(.*)", re.DOTALL)
#: A credential after its scheme, anywhere in a word (a ``${VAR}`` after it is kept).
_CREDENTIAL = re.compile(r"\b(Bearer|Basic|Token)(\s+)(?!\$\{)\S+", re.IGNORECASE)
#: What `shlex.quote` leaves unquoted; any other character needs quotes.
_UNSAFE = re.compile(r"[^\w@%+=:,./-]", re.ASCII)
#: An option or ``KEY=`` name whose value is a secret: ``--api-key``, ``--token``,
#: ``--client-secret``, ``--password``, ``GITHUB_TOKEN=``, ``--auth``.
_SECRET_NAME = re.compile(
    r"secret|token|passw(?:or)?d|api[-_]?key|access[-_]?key|private[-_]?key|credential"
    r"|(?:^|[-_])(?:key|pass|pwd|auth|authorization)$",
    re.IGNORECASE,
)


def mask_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The entry with its secrets masked: env and header values, the URL's userinfo and
    query values, secret-looking arguments, an OAuth client secret. ``${VAR}`` references
    are kept as written (their defaults masked)."""
    out = dict(entry)
    if isinstance(out.get("args"), list):
        out["args"] = mask_args(out["args"])
    for key in ("env", "headers"):
        value = out.get(key)
        if isinstance(value, dict):
            out[key] = {k: mask_value(v) for k, v in value.items()}
    if isinstance(out.get("url"), str):
        out["url"] = mask_url(out["url"])
    oauth = out.get("oauth")
    if isinstance(oauth, dict) and "clientSecret" in oauth:
        out["oauth"] = {**oauth, "clientSecret": mask_value(oauth["clientSecret"])}
    return out


def mask_value(value: Any) -> Any:
    """``****``, but ``${VAR}`` references (and a ``Bearer`` before them) as written; a
    reference's default is a literal too: ``${VAR:-****}``."""
    if not isinstance(value, str):
        return _MASK
    if not VARIABLE.search(value):
        return _MASK if value else value
    pieces: list[str] = []
    last = 0
    for match in VARIABLE.finditer(value):
        pieces.append(_masked_literal(value[last : match.start()]))
        pieces.append(_masked_reference(match))
        last = match.end()
    pieces.append(_masked_literal(value[last:]))
    return "".join(pieces)


def _masked_reference(match: re.Match[str]) -> str:
    default = match.group(2)
    if not default:
        return match.group(0)
    return f"${{{match.group(1)}:-{_MASK}}}"


def _masked_literal(text: str) -> str:
    return text if _AUTH_SCHEME.match(text) else _MASK


def mask_url(url: str) -> str:
    """The URL with its userinfo and each query value masked (``${VAR}`` kept)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _MASK
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        reference = VARIABLE.fullmatch(userinfo)
        kept = _masked_reference(reference) if reference else _MASK
        netloc = f"{kept}@{host}"
    query = parts.query
    if query:
        fields = []
        for item in query.split("&"):
            key, eq, value = item.partition("=")
            fields.append(f"{key}={mask_value(value)}" if eq else item)
        query = "&".join(fields)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def mask_args(args: Sequence[Any]) -> list[Any]:
    """A command's arguments with the value of each secret-looking option masked (as
    `mask_value` does): ``--api-key ****``, ``--token=****``, ``GITHUB_TOKEN=****``; URLs
    as `mask_url` does. An option followed by another option has no value to mask."""
    out: list[Any] = []
    secret_next = header_next = False
    for arg in args:
        if not isinstance(arg, str):
            out.append(arg)
            secret_next = header_next = False
            continue
        if (secret_next or header_next) and not arg.startswith("-"):
            out.append(_masked_header(arg) if header_next else mask_value(arg))
            secret_next = header_next = False
            continue
        name, eq, value = arg.partition("=")
        secret_name = bool(_SECRET_NAME.search(name.lstrip("-")))
        if arg.startswith(("http://", "https://")):
            out.append(mask_url(arg))
        elif eq and name in _HEADER_OPTIONS:
            out.append(f"{name}={_masked_header(value)}")
        elif eq and secret_name and " " not in name:
            out.append(f"{name}={mask_value(value)}" if value else arg)
        else:
            out.append(_masked_word(arg))
        secret_next = not eq and secret_name and arg.startswith("-")
        header_next = not eq and arg in _HEADER_OPTIONS
    return out


def _masked_header(text: str) -> str:
    """A header line with its value masked (``Authorization: ****``); not one: all masked."""
    header = _HEADER.fullmatch(text)
    if header is None:
        return str(mask_value(text))
    return f"{header.group(1)}: {mask_value(header.group(2))}" if header.group(2) else text


def _masked_word(word: str) -> str:
    """Any other argument: a secret-named header's value, a scheme's credential, masked."""
    header = _HEADER.fullmatch(word)
    if header is not None and _SECRET_NAME.search(header.group(1)):
        return _masked_header(word)
    return _CREDENTIAL.sub(lambda m: f"{m.group(1)}{m.group(2)}{_MASK}", word)


def masked_target(entry: Mapping[str, Any]) -> str:
    """An entry's command line (arguments masked) or URL (masked), for showing."""
    command = entry.get("command")
    if isinstance(command, str):
        raw_args = entry.get("args")
        args = mask_args(raw_args) if isinstance(raw_args, list) else []
        return shown_command([command, *(str(a) for a in args)])
    url = entry.get("url")
    return mask_url(url) if isinstance(url, str) else ""


def written_target(raw: Any) -> str:
    """An entry's command line (with its string arguments) or URL as written, masked: what
    status shows, also for an entry that was never parsed (broken, or awaiting approval)."""
    if not isinstance(raw, Mapping):
        return ""
    if isinstance(raw.get("command"), str):
        args = raw.get("args")
        written = [a for a in args if isinstance(a, str)] if isinstance(args, list) else []
        return masked_target({"command": raw["command"], "args": written})
    return masked_target({"url": raw.get("url")})


def written_word(word: str) -> str:
    """One word of an entry as written, for an error text (the program, the working
    directory): ``${VAR}`` references bare, as in `shown_command`, a credential masked;
    unquoted, as the error has always named it."""
    return _masked_word(word)


def shown_command(words: Sequence[str]) -> str:
    """A command line for showing, quoted as `shlex.join` does where a word needs it
    (``-c 'import sys; print(1)'``) but with masks and ``${VAR}`` references left bare:
    ``--api-key ****``, ``${TOKEN}``, ``--token=${T:-****}`` (cat-code expands those, not
    a shell, so quoting them would only add noise)."""
    return " ".join(_shown_word(word) for word in words)


def _shown_word(word: str) -> str:
    bare = VARIABLE.sub("", word).replace(_MASK, "")
    if word and not _UNSAFE.search(bare):
        return word
    return shlex.quote(word)
