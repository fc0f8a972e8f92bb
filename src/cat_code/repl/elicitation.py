"""Elicitation in the REPL: a server asks the user for input, field by field.

`fields_of` reads the flat ``requestedSchema`` MCP allows (string, number, integer,
boolean, single- and multi-select enums) into `Field` objects; `parse_answer` turns
what the user typed into a value of the field's type, or raises `ValueError` saying
what is wrong, so the form asks again. `fill_form` drives one request through two
injected callables (``ask`` a line with a pre-filled default, ``say`` a line), so it is
tested without a terminal. Ctrl-C anywhere is "cancel", Ctrl-D is "decline"; only an
explicit accept sends content back. A URL request (``mode: "url"``) shows the server, its
message and the whole URL with the registrable domain of the host a browser will visit
highlighted and named on a "site:" line (look-alike hosts flagged), and opens the browser
only after the user says yes; "c" accepts without opening (the user copies the URL). An
address whose site is in doubt (`cat_code.host.web_address`: a backslash, a user part,
not https...) is declined unopened, saying why.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from cat_code.base.safe_text import safe_line
from cat_code.host.web_address import UnsafeAddress, parse_web_address
from cat_code.mcp.elicitation import is_url_request

logger = logging.getLogger(__name__)

Kind = Literal["string", "number", "integer", "boolean", "choice", "multi"]
#: Ask one question: (prompt, pre-filled default) → the line typed. Raises
#: KeyboardInterrupt (Ctrl-C) or EOFError (Ctrl-D).
Ask = Callable[[str, str], Awaitable[str]]
Say = Callable[[str], None]
#: Open a URL in the user's browser; False when there is none to open.
OpenUrl = Callable[[str], bool]
#: Show a URL as (before the host, the host before its site, the site, the rest), the
#: site highlighted (`WebAddress.parts`).
ShowUrl = Callable[[tuple[str, str, str, str]], None]

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_YES = {"y", "yes", "true", "1", "on"}
_NO = {"n", "no", "false", "0", "off"}


@dataclass(slots=True)
class Field:
    name: str
    kind: Kind
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = None
    #: (value, label) pairs for choice and multi.
    choices: list[tuple[str, str]] = field(default_factory=list)
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None


def fields_of(schema: Any) -> list[Field]:
    """The fields of a ``requestedSchema``, in the order the server listed them."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return []
    listed = schema.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    fields = []
    for name, prop in schema["properties"].items():
        prop = prop if isinstance(prop, dict) else {}
        fields.append(_field(str(name), prop, name in required))
    return fields


def _field(name: str, prop: dict[str, Any], required: bool) -> Field:
    f = Field(
        name=name,
        kind="string",
        title=str(prop.get("title") or ""),
        description=str(prop.get("description") or ""),
        required=required,
        default=prop.get("default"),
        format=prop.get("format") if isinstance(prop.get("format"), str) else None,
    )
    kind = prop.get("type")
    if kind == "array":
        f.kind = "multi"
        items = prop.get("items")
        f.choices = _choices(items if isinstance(items, dict) else {})
        f.minimum = _number(prop.get("minItems"))
        f.maximum = _number(prop.get("maxItems"))
    elif _choices(prop):
        f.kind = "choice"
        f.choices = _choices(prop)
    elif kind in ("number", "integer", "boolean"):
        f.kind = kind
        f.minimum = _number(prop.get("minimum"))
        f.maximum = _number(prop.get("maximum"))
    else:
        min_length, max_length = _number(prop.get("minLength")), _number(prop.get("maxLength"))
        f.min_length = int(min_length) if min_length is not None else None
        f.max_length = int(max_length) if max_length is not None else None
    return f


def _choices(prop: dict[str, Any]) -> list[tuple[str, str]]:
    if isinstance(prop.get("enum"), list):
        values = [str(v) for v in prop["enum"]]
        names = prop.get("enumNames")
        labels = [str(n) for n in names] if isinstance(names, list) else values
        return list(zip(values, labels + values[len(labels) :], strict=False))
    options = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(options, list):
        return [
            (str(o["const"]), str(o.get("title") or o["const"]))
            for o in options
            if isinstance(o, dict) and "const" in o
        ]
    return []


def _number(value: Any) -> float | None:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if is_number else None


class _Omit:
    """The user left an optional field empty: the key is left out of the content."""


OMIT = _Omit()


def default_text(f: Field) -> str:
    """The default as the text pre-filled in the answer line."""
    if f.default is None:
        return ""
    if f.kind == "boolean":
        return "yes" if f.default else "no"
    if f.kind == "multi" and isinstance(f.default, list):
        return ", ".join(str(v) for v in f.default)
    if isinstance(f.default, float) and f.default.is_integer() and f.kind == "integer":
        return str(int(f.default))
    return str(f.default)


def parse_answer(f: Field, raw: str) -> Any:
    """The value ``raw`` gives field ``f`` (`OMIT` for an empty optional field)."""
    text = raw.strip()
    if not text:
        if f.required:
            raise ValueError("an answer is required")
        return OMIT
    if f.kind == "boolean":
        if text.lower() in _YES:
            return True
        if text.lower() in _NO:
            return False
        raise ValueError("answer yes or no")
    if f.kind in ("number", "integer"):
        return _parse_number(f, text)
    if f.kind == "choice":
        return _pick(f, text)
    if f.kind == "multi":
        picked = list(dict.fromkeys(_pick(f, part) for part in text.split(",") if part.strip()))
        if f.minimum is not None and len(picked) < f.minimum:
            raise ValueError(f"pick at least {f.minimum:g}")
        if f.maximum is not None and len(picked) > f.maximum:
            raise ValueError(f"pick at most {f.maximum:g}")
        return picked
    if f.min_length is not None and len(text) < f.min_length:
        raise ValueError(f"at least {f.min_length} characters")
    if f.max_length is not None and len(text) > f.max_length:
        raise ValueError(f"at most {f.max_length} characters")
    if f.format == "email" and not _EMAIL.match(text):
        raise ValueError("not an email address")
    return text


def _parse_number(f: Field, text: str) -> int | float:
    try:
        value: int | float = int(text) if f.kind == "integer" else float(text)
    except ValueError:
        wanted = "a whole number, please" if f.kind == "integer" else "a number, please"
        raise ValueError(wanted) from None
    if f.kind == "number" and float(value).is_integer() and "." not in text:
        value = int(value)
    if f.minimum is not None and value < f.minimum:
        raise ValueError(f"at least {f.minimum:g}")
    if f.maximum is not None and value > f.maximum:
        raise ValueError(f"at most {f.maximum:g}")
    return value


def _pick(f: Field, text: str) -> str:
    text = text.strip()
    for value, label in f.choices:
        if text in (value, label) or text.lower() in (value.lower(), label.lower()):
            return value
    if text.isdigit() and 1 <= int(text) <= len(f.choices):
        return f.choices[int(text) - 1][0]
    raise ValueError("pick one of: " + ", ".join(label for _, label in f.choices))


def question(f: Field) -> str:
    """The prompt for one field: ``  Title (description, required): ``."""
    notes = [f.description] if f.description and f.description != f.title else []
    if f.kind == "boolean":
        notes.append("yes/no")
    elif f.kind == "multi":
        notes.append("comma-separated")
    elif f.kind in ("number", "integer"):
        bounds = [f"≥ {f.minimum:g}"] if f.minimum is not None else []
        bounds += [f"≤ {f.maximum:g}"] if f.maximum is not None else []
        notes.append(" ".join([f.kind, *bounds]))
    if f.required:
        notes.append("required")
    label = f.title or f.name
    return f"  {label} ({', '.join(notes)}): " if notes else f"  {label}: "


async def fill_form(
    params: dict[str, Any],
    ask: Ask,
    say: Say,
    *,
    server: str | None,
    open_url: OpenUrl | None = None,
    show_url: ShowUrl | None = None,
) -> dict[str, Any]:
    """Run one ``elicitation/create`` request with the user; returns the result to send.
    A URL request goes to `_visit` (``open_url`` starts the browser; without it the
    user can only copy the URL)."""
    who = f"MCP server '{server}'" if server else "An MCP server"
    message = str(params.get("message") or "(no message)")
    try:
        if is_url_request(params):
            return await _visit(params, ask, say, who=who, open_url=open_url, show_url=show_url)
        say(f"⏺ {who} asks: {message}")
        say("  (Enter keeps a [default]; Ctrl-C cancels, Ctrl-D declines)")
        content: dict[str, Any] = {}
        for f in fields_of(params.get("requestedSchema")):
            if f.choices:
                say(
                    "    " + "  ".join(f"{i}) {label}" for i, (_, label) in enumerate(f.choices, 1))
                )
            while True:
                raw = await ask(question(f), default_text(f))
                try:
                    value = parse_answer(f, raw)
                except ValueError as exc:
                    say(f"    ✗ {exc}")
                    continue
                if value is not OMIT:
                    content[f.name] = value
                break
        return await _final(ask, content=content)
    except KeyboardInterrupt:
        say("  cancelled")
        return {"action": "cancel"}
    except EOFError:
        say("  declined")
        return {"action": "decline"}


async def _visit(
    params: dict[str, Any],
    ask: Ask,
    say: Say,
    *,
    who: str,
    open_url: OpenUrl | None,
    show_url: ShowUrl | None,
) -> dict[str, Any]:
    """A URL request: the server, its message and the whole URL (its site highlighted),
    then the user's choice. Nothing is opened before a "yes"; an address whose site is in
    doubt is declined unasked."""
    url = str(params["url"])
    message = str(params.get("message") or "(no message)")
    say(f"⏺ {who} asks you to open a web page: {message}")
    try:
        address = parse_web_address(url)
    except UnsafeAddress as exc:
        say(f"  {safe_line(url)}")
        say(f"  not opened: {exc.reason}; declined")
        return {"action": "decline"}
    if show_url is not None:
        show_url(address.parts())
    else:
        say(f"  {url}")
    host = f" (host {address.host})" if address.host.removesuffix(".") != address.site else ""
    say(f"  site: {address.site}{host}")
    if address.lookalike:
        say("  ⚠ the site's name uses look-alike (punycode or non-ASCII) characters")
    options = "y open in the browser · c copy it myself · n decline"
    while True:
        answer = (await ask(f"  open it? {options} › ", "")).strip().lower()
        if answer in ("y", "yes", "o", "open"):
            if open_url is not None and open_url(url):
                say("  opened in your browser")
            else:
                say(f"  no browser here; open it yourself: {url}")
            return {"action": "accept"}
        if answer in ("c", "copy"):
            say(f"  open it yourself: {url}")
            return {"action": "accept"}
        if answer in ("n", "no", "d", "decline"):
            say("  declined")
            return {"action": "decline"}


async def _final(ask: Ask, *, content: dict[str, Any] | None) -> dict[str, Any]:
    while True:
        answer = (await ask("  send? [a]ccept / [d]ecline / [c]ancel: ", "a")).strip().lower()
        if answer in ("a", "accept", "y", "yes"):
            return (
                {"action": "accept"}
                if content is None
                else {"action": "accept", "content": content}
            )
        if answer in ("d", "decline", "n", "no"):
            return {"action": "decline"}
        if answer in ("c", "cancel"):
            return {"action": "cancel"}
