"""``cat-code mcp add NAME {URL | -- COMMAND [ARGS...]}``: one entry written, then tried.

argparse hands over NAME and everything after it untouched (see `parse_add`); the options
after NAME are read with the table argparse built from the add parser's own declarations
(`cat_code.cli.verbs.mcp_config.add_option_table`), never a second list of them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from cat_code.cli.add_options import add_option_table
from cat_code.cli.mcp_entries import (
    NAME_PATTERN,
    PROJECT,
    SCOPES,
    URL_LIKE,
    USER,
    UsageError,
    approve_if_project,
    config_reason,
    connect_one,
    say_note,
    scope_path,
    validate_entry,
    write_target,
)
from cat_code.cli.options import Options
from cat_code.cli.output import EXIT_FAILED, EXIT_OK, print_error, print_line
from cat_code.host.config.edit import ConfigFile, editing
from cat_code.host.config.load import (
    parse_entry,
)
from cat_code.mcp.errors import ConfigError
from cat_code.mcp.roots import Roots

if TYPE_CHECKING:
    pass


# -- add ----------------------------------------------------------------------------------


@dataclass(slots=True)
class AddRequest:
    """What ``mcp add`` was asked for, its command line taken apart."""

    name: str
    #: None: not given (user, unless ``--mcp-config`` names the file).
    scope: str | None = None
    env: list[str] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    transport: str | None = None
    force: bool = False
    verbose: bool = False
    url: str | None = None
    command: list[str] = field(default_factory=list)
    mcp_config: list[str] = field(default_factory=list)

    def entry(self) -> dict[str, Any]:
        """The entry to write, in cat-code's shape (key order as written)."""
        if self.url is not None:
            if self.env:
                raise UsageError("--env applies to stdio servers; a URL server takes --header")
            if self.transport == "stdio":
                raise UsageError("--transport stdio needs a command after --, not a URL")
            entry: dict[str, Any] = {"type": self.transport or "http", "url": self.url}
            if self.headers:
                entry["headers"] = _pairs(self.headers, ":", "--header", "'Name: value'")
            return entry
        if not self.command:
            raise UsageError(
                f"say what to run: cat-code mcp add {self.name} -- COMMAND [ARGS...], "
                f"or where it is: cat-code mcp add {self.name} https://HOST/PATH"
            )
        if self.headers:
            raise UsageError("--header applies to URL servers; a stdio server takes --env")
        if self.transport in ("http", "sse"):
            raise UsageError(
                f"--transport {self.transport} needs a URL (http:// or https://), "
                f"not the command {self.command[0]!r}"
            )
        entry = {"command": self.command[0], "args": self.command[1:]}
        if self.env:
            entry["env"] = _pairs(self.env, "=", "--env", "KEY=VALUE")
        return entry


def _pairs(items: Sequence[str], sep: str, option: str, form: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(sep)
        key = key.strip()
        if not found or not key:
            raise UsageError(f"{option} {item!r}: expected {form}")
        out[key] = value.strip() if sep == ":" else value
    return out


#: AddRequest's attribute for an option's ``dest`` where the two differ.
_ATTRIBUTE = {"header": "headers"}


def _option_table() -> dict[str, tuple[str, bool]]:
    """``mcp add``'s options that may follow NAME: flag → (attribute, takes a value), read
    from the parser's declarations (`add_option_table`); ``--add-dir`` and
    ``--trust-project`` belong before NAME."""
    fields = {f.name for f in dataclasses.fields(AddRequest)}
    table = {}
    for flag, (dest, takes_value) in add_option_table().items():
        attribute = _ATTRIBUTE.get(dest, dest)
        if attribute in fields:
            table[flag] = (attribute, takes_value)
    return table


def parse_add(args: Options) -> AddRequest:
    """Take ``mcp add``'s arguments apart: options, then a URL (more options may follow)
    or ``--`` and a command; everything after ``--`` is the command, its options included.
    A command without ``--`` is refused (its options would be read as ``mcp add``'s), so
    is a URL that is not http(s) (``ftp://h`` is a typo, not a command to run).

    argparse hands over NAME and everything after it untouched (its ``*`` positionals
    cannot be followed by ``--`` in Python 3.11, and a positional NAME would swallow a
    ``--`` right after it), so NAME and the options after it are read here.
    """
    words: list[str] = list(args.rest)
    if not words or words[0].startswith("-"):
        raise UsageError(
            "say which server to add: cat-code mcp add NAME -- COMMAND [ARGS...], "
            "or cat-code mcp add NAME https://HOST/PATH"
        )
    request = AddRequest(
        name=words[0],
        scope=args.scope,
        env=list(args.env),
        headers=list(args.header),
        transport=args.transport,
        force=args.force,
        mcp_config=list(args.mcp_config),
    )
    rest = words[1:]
    options = _option_table()
    i = 0
    while i < len(rest):
        token = rest[i]
        if token == "--":
            if request.url is not None:
                raise UsageError("give either a URL or a command after --, not both")
            request.command = rest[i + 1 :]
            break
        flag, eq, inline = token.partition("=")
        if token.startswith("-") and flag in options:
            attribute, takes_value = options[flag]
            if not takes_value:
                setattr(request, attribute, True)
                i += 1
                continue
            if eq:
                value = inline
            elif i + 1 < len(rest):
                value = rest[i + 1]
                i += 1
            else:
                raise UsageError(f"{flag} needs a value")
            current = getattr(request, attribute)
            if isinstance(current, list):
                current.append(value)
            else:
                setattr(request, attribute, value)
            i += 1
            continue
        if token.startswith("-") and len(token) > 1:
            raise UsageError(
                f"unknown option {token!r} for mcp add (put the server's command and its "
                f"options after --: cat-code mcp add {request.name} -- COMMAND ARGS...)"
            )
        if request.url is not None:
            raise UsageError(f"unexpected {token!r} after the URL {request.url}")
        if not token.startswith(("http://", "https://")):
            _refuse_target(request.name, token, rest[i:])
        request.url = token
        i += 1
    if request.command and request.command[0].startswith(("http://", "https://")):
        if len(request.command) > 1:
            raise UsageError(f"unexpected {request.command[1]!r} after the URL")
        request.url, request.command = request.command[0], []
    if request.command and URL_LIKE.match(request.command[0]):
        _refuse_target(request.name, request.command[0], request.command)
    if request.scope not in (None, *SCOPES):
        raise UsageError(f"--scope must be user or project, not {request.scope!r}")
    if request.transport not in (None, "stdio", "http", "sse"):
        raise UsageError(f"--transport must be http, sse or stdio, not {request.transport!r}")
    if not NAME_PATTERN.match(request.name):
        raise UsageError(
            f"server name {request.name!r}: use letters, digits, '-', '_' and '.' only"
        )
    return request


def _refuse_target(name: str, token: str, words: Sequence[str]) -> NoReturn:
    """A word where the URL or ``--`` belongs: a URL of another scheme, or a command
    given without ``--`` (its own options would be taken for ``mcp add``'s)."""
    if URL_LIKE.match(token):
        raise UsageError(f"a URL must start with http:// or https://, not {token!r}")
    raise UsageError(f"put the command after --: cat-code mcp add {name} -- {shlex.join(words)}")


def run_add(args: Options) -> int:
    request = parse_add(args)
    if request.verbose and not args.verbose:  # -v after NAME: argparse did not see it
        from cat_code.cli.log import configure_logging

        configure_logging(1)
    entry = request.entry()
    scope, path = write_target(request.mcp_config, request.scope, "add")
    validate_entry(request.name, entry, path)
    with editing(path):  # held from the check to the write: no concurrent add is lost
        file = ConfigFile.read(path)
        existed = request.name in file.servers
        if existed and not request.force:
            print_error(
                f"MCP server '{request.name}' already exists in {path}; use --force to "
                f"replace it, or remove it first: cat-code mcp remove {request.name}"
            )
            return EXIT_FAILED
        file.set_entry(request.name, entry)
        file.write()
        approve_if_project(path, {request.name: entry})
    kind = entry.get("type", "stdio")
    replaced = " (replaced the previous entry)" if existed else ""
    print_line(f"Added {kind} server '{request.name}' to {path}{replaced}")
    if scope in SCOPES:
        other = scope_path(PROJECT if scope == USER else USER)
        try:
            shadowed = request.name in ConfigFile.read(other).servers
        except ConfigError:
            shadowed = False
        if shadowed:
            user = path if scope == USER else other
            say_note(
                f"{other} also defines '{request.name}'; the entry in {user} is the one used "
                "(a project entry never takes the name of your own server)"
            )
    return asyncio.run(_try_entry(request.name, entry, path, Roots(args.add_dir)))


async def _try_entry(name: str, entry: dict[str, Any], source: Path, roots: Roots) -> int:
    """Connect the entry just written, alone, and say how that went. Always exit 0 but
    for a signal: the entry is written either way."""
    try:
        config = parse_entry(name, entry, source=source)
    except ConfigError as exc:
        print_line(f"could not connect: {config_reason(exc)}")
        return EXIT_OK
    from cat_code.host.servers.server import ServerState

    status, tools = await connect_one(config, roots)
    code = int(status.pop("exit", EXIT_OK))
    state = ServerState(status["state"]) if code == EXIT_OK else None  # None: a signal
    if state is ServerState.CONNECTED:
        print_line(f"connected: {len(tools)} tool(s)")
    elif state is ServerState.NEEDS_LOGIN:
        print_line(f"needs a sign-in: cat-code mcp login {name}")
    else:
        print_line(f"could not connect: {status.get('error') or status.get('state')}")
        print_line(
            f"(the entry is saved; fix it with cat-code mcp add {name} --force ..., "
            f"or remove it: cat-code mcp remove {name})"
        )
    return code
