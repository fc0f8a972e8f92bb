"""``cat-code mcp list | tools | call | login | logout``: the MCP plugin from the shell.

The output formats are stable (scripts and tests read them): ``list`` prints aligned
columns or, with ``--json``, an array of status objects; ``tools`` one line per tool;
``call`` the flattened result. Every command connects, works, and closes every server
before it returns, on every path; SIGINT, SIGTERM and SIGHUP stop the command, close every
server and exit 128 + N (`cat_code.shutdown`). `format_status` is shared with the REPL's
``/mcp``; `sign_in` and `sign_out` with its ``/mcp login`` and ``/mcp logout``. A sign-in
connects the one server once through an ``McpAuth`` with a person at hand (a
`LoopbackAuthorizer`), so the whole OAuth flow runs and its tokens are stored; no token
is ever printed.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cat_code.mcp.adapter import may_belong_to
from cat_code.mcp.config import HttpServerConfig, McpConfig, load_config
from cat_code.mcp.errors import describe_error
from cat_code.mcp.pool import McpPool, ServerStatus
from cat_code.shutdown import run_until_signal

if TYPE_CHECKING:
    from cat_code.mcp.auth.callback import LoopbackAuthorizer
    from cat_code.mcp.auth.types import TokenStore
    from cat_code.mcp.client import McpClient

logger = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def load_config_from_args(args: argparse.Namespace) -> McpConfig:
    """The config the ``--mcp-config`` options (or the default files) describe, warnings logged."""
    paths = [Path(p) for p in args.mcp_config] if getattr(args, "mcp_config", None) else None
    config = load_config(paths)
    for warning in config.warnings:
        logger.warning("%s", warning)
    if paths is not None:
        for path in paths:
            if not path.exists():
                logger.warning("%s: MCP config file not found", path)
    return config


def format_status(
    statuses: Sequence[ServerStatus],
    files: Sequence[Path] = (),
    *,
    in_repl: bool = False,
    unreadable: Sequence[Path] = (),
) -> str:
    """The ``MCP servers:`` block, columns aligned, failures with their reason and stderr.

    ``files`` are the config files read: with no servers, the hint names them, unless some
    of them are ``unreadable`` (then "none configured" would be untrue: it names those).
    ``in_repl``: a server that gave up restarting says which command starts it (the shell
    has none: the next run starts it).
    """
    if not statuses and unreadable:
        bad = " and ".join(str(f) for f in unreadable)
        return f"MCP servers: none loaded — could not read {bad} (see the warning above)"
    if not statuses:
        where = " or ".join(str(f) for f in files) or "~/.cat-code/mcp.json or ./.mcp.json"
        return (
            "MCP servers: none configured\n"
            f'  (add servers to {where}, in the {{"mcpServers": {{...}}}} format)'
        )
    name_width = max(len(s.name) for s in statuses)
    state_width = max(len(s.state) for s in statuses)
    count_width = max((len(f"{s.tools} tool(s)") for s in statuses if s.state == "CONNECTED"),
                      default=0)  # fmt: skip
    lines = ["MCP servers:"]
    for s in statuses:
        head = f"  {s.name.ljust(name_width)}  {s.state.ljust(state_width)}"
        # A broken entry may have no target to show: then no empty "(?: )".
        where = f"({s.transport}: {s.target})" if s.target else ""
        if s.state == "CONNECTED":
            line = f"{head}  {f'{s.tools} tool(s)'.ljust(count_width)}  {where}".rstrip()
        elif s.error:
            line = f"{head}  {where} — {s.error}" if where else f"{head}  {s.error}"
        else:
            line = f"{head}  {where}".rstrip()
        if s.restarts:
            line += f"  restarted {s.restarts}×"
        if s.gave_up:
            line += (
                f" — /mcp restart {s.name} starts it" if in_repl else " — the next run starts it"
            )
        lines.append(line)
        if s.state == "FAILED" and s.stderr_tail and "last stderr" not in (s.error or ""):
            indent = " " * (4 + name_width + state_width)
            lines.append(f"{indent}stderr (last lines):")
            lines.extend(f"{indent}  {line}" for line in s.stderr_tail[-5:])
    return "\n".join(lines)


def format_tools(pool: McpPool, server: str | None = None) -> str:
    tools = pool.tools(server)
    if not tools:
        return "MCP tools: none"
    width = max(len(t.name) for t in tools)
    lines = ["MCP tools:"]
    for tool in tools:
        summary = " ".join(tool.description.split())
        if len(summary) > 100:
            summary = summary[:99] + "…"
        lines.append(f"  {tool.name.ljust(width)}  {summary}".rstrip())
    return "\n".join(lines)


def tool_json(pool: McpPool, server: str | None = None) -> list[dict[str, Any]]:
    return [
        {
            "name": t.name,
            "server": t.server,
            "tool": t.tool_name,
            "description": t.description,
            "inputSchema": t.input_schema,
            "readOnly": t.read_only,
        }
        for t in pool.tools(server)
    ]


#: The verbs that edit config files (`cat_code.mcp.manage`).
MANAGE_COMMANDS = frozenset({"add", "remove", "get", "enable", "disable", "import"})


def run_mcp_command(args: argparse.Namespace) -> int:
    command = args.mcp_command
    if command in MANAGE_COMMANDS:  # they edit the files: no config loaded here
        # Imported only when chosen: `mcp list` and `mcp call` start faster without it.
        from cat_code.mcp.manage import run_manage_command

        return run_manage_command(args)
    config = load_config_from_args(args)
    if command == "list":
        return asyncio.run(_list(config, as_json=args.json))
    if command == "tools":
        return asyncio.run(_tools(config, args.server, as_json=args.json))
    if command == "call":
        return asyncio.run(_call(config, args.tool, args.arguments, as_json=args.json))
    if command == "login":
        return asyncio.run(_login(config, args.server, no_browser=args.no_browser))
    if command == "logout":
        return asyncio.run(_logout(config, args.server))
    if command in ("resources", "read", "prompts"):
        from cat_code.mcp.resource_commands import run_resource_command

        return run_resource_command(args, config)
    raise AssertionError(f"unknown mcp command {command!r}")


def print_line(text: str) -> None:
    """One line to stdout, flushed (a pipe reader sees it at once)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def print_error(text: str) -> None:
    """One ``cat-code: …`` line to stderr."""
    sys.stderr.write(f"cat-code: {text}\n")


async def _list(config: McpConfig, *, as_json: bool) -> int:
    pool = McpPool(config)

    async def work() -> int:
        await pool.connect_all()
        statuses = pool.status()
        unreadable = config.unreadable
        if as_json:
            print_line(json.dumps([s.to_json() for s in statuses], indent=2, ensure_ascii=False))
        else:
            print_line(format_status(statuses, config.files, unreadable=unreadable))
        if not statuses and unreadable:
            return EXIT_FAILED  # nothing listed because a file is broken, not because none
        return EXIT_OK if pool.all_connected else EXIT_FAILED

    return await run_until_signal(pool, work)


async def _tools(config: McpConfig, server: str | None, *, as_json: bool) -> int:
    if server is not None and server not in config.names:
        print_error(
            f"no MCP server named {server!r} (configured: {', '.join(config.names) or 'none'})"
        )
        return EXIT_USAGE
    pool = McpPool(_only(config, [server] if server else None))

    async def work() -> int:
        await pool.connect_all()
        down = [s for s in pool.status() if s.name == server and _unavailable(s)]
        if down:  # "MCP tools: none" would hide why
            print_error(_unavailable(down[0]) or "")
            return EXIT_FAILED
        if as_json:
            print_line(json.dumps(tool_json(pool, server), indent=2, ensure_ascii=False))
        else:
            print_line(format_tools(pool, server))
        failed = [s for s in pool.status() if s.state == "FAILED"]
        for s in failed:
            print_error(f"MCP server '{s.name}' failed: {s.error}")
        return EXIT_FAILED if failed else EXIT_OK

    return await run_until_signal(pool, work)


async def _call(config: McpConfig, name: str, raw_arguments: str, *, as_json: bool) -> int:
    try:
        arguments = json.loads(raw_arguments)
    except json.JSONDecodeError as exc:
        # "{msg}: column N", as json words it: some messages end in "at" already.
        print_error(f"JSON_ARGS is not valid JSON ({exc.msg}: column {exc.colno}): {raw_arguments}")
        return EXIT_USAGE
    if not isinstance(arguments, dict):
        print_error(
            f'JSON_ARGS must be a JSON object like \'{{"key": "value"}}\', got: {raw_arguments}'
        )
        return EXIT_USAGE
    candidates = [s.name for s in config.servers if may_belong_to(s.name, name)]
    pool = McpPool(_only(config, candidates or None))

    async def work() -> int:
        await pool.connect_all()
        tool = pool.find_tool(name)
        statuses = pool.status()
        if tool is None and candidates and not any(s.state == "CONNECTED" for s in statuses):
            # The servers the name points at are all down: say so, not "unknown tool".
            for s in statuses:
                print_error(_unavailable(s) or f"MCP server '{s.name}' is {s.state}")
            return EXIT_FAILED
        if tool is None:
            known = [t.name for t in pool.tools()]
            guesses = _guesses(name, known)
            hint = f" — did you mean {' or '.join(map(repr, guesses))}?" if guesses else ""
            print_error(f"unknown tool {name!r}{hint}")
            if known:
                sys.stderr.write("available tools:\n" + "".join(f"  {k}\n" for k in known))
            failed = [s for s in pool.status() if s.state == "FAILED"]
            for s in failed:
                print_error(f"(MCP server '{s.name}' failed: {s.error})")
            # The server the name points at is down: the call failed, the command line did not.
            return EXIT_FAILED if candidates and failed else EXIT_USAGE

        def progress(done: float, total: float | None, message: str | None) -> None:
            amount = f"{done:g}/{total:g}" if total is not None else f"{done:g}"
            sys.stderr.write(f"progress {amount}{': ' + message if message else ''}\n")

        # `call`, not `execute`: the whole result; the size policy is for what a model reads.
        result = await tool.call(arguments, progress=progress)
        if as_json and result.raw is not None:
            print_line(json.dumps(result.raw, indent=2, ensure_ascii=False))
        elif result.is_error and result.raw is None:
            print_error(result.content)
        else:
            print_line(result.content)
        return EXIT_FAILED if result.is_error else EXIT_OK

    return await run_until_signal(pool, work)


def _unavailable(status: ServerStatus) -> str | None:
    """Why a server's tools cannot be used, naming its state and the way out; None if they can."""
    name = status.name
    if status.state == "DISABLED":
        return f"MCP server '{name}' is disabled (cat-code mcp enable {name})"
    if status.state == "FAILED":
        return f"MCP server '{name}' failed: {status.error}"
    if status.state == "NEEDS_LOGIN":
        return f"MCP server '{name}' needs a sign-in (cat-code mcp login {name})"
    return None


def _guesses(name: str, known: list[str]) -> list[str]:
    """Registered names the user may have meant: the tool's own name, or a near miss."""
    suffix = [k for k in known if k.endswith(f"__{name}")]
    return suffix[:3] or difflib.get_close_matches(name, known, n=3, cutoff=0.85)


def _only(config: McpConfig, names: list[str] | None) -> McpConfig:
    if names is None:
        return config
    return McpConfig(
        servers=[s for s in config.servers if s.name in names],
        broken=[b for b in config.broken if b.name in names],
        warnings=config.warnings,
        files=config.files,
        order=[n for n in config.order if n in names],
        unreadable=config.unreadable,
    )


# -- sign-in ---------------------------------------------------------------------------


class SignInTarget(Exception):
    """The named server cannot sign in (unknown, stdio, or its own Authorization header)."""


def sign_in_entry(config: McpConfig, name: str) -> HttpServerConfig:
    """The HTTP entry ``name`` names, or `SignInTarget` saying why there is none."""
    entry = next((s for s in config.servers if s.name == name), None)
    if entry is None:
        broken = next((b for b in config.broken if b.name == name), None)
        if broken is not None:
            raise SignInTarget(f"MCP server '{name}' cannot be used: {broken.error}")
        known = ", ".join(config.names) or "none"
        raise SignInTarget(f"no MCP server named {name!r} (configured: {known})")
    if not isinstance(entry, HttpServerConfig):
        raise SignInTarget(
            f"MCP server '{name}' is a stdio server; only http and sse servers sign in"
        )
    if entry.has_own_authorization:
        raise SignInTarget(
            f"MCP server '{name}' sends its own Authorization header (its 'headers'); "
            "cat-code does not sign it in"
        )
    return entry


class _SignIn:
    """One server's connection during a sign-in: what `run_until_signal` closes."""

    def __init__(
        self, entry: HttpServerConfig, authorizer: LoopbackAuthorizer, store: TokenStore
    ) -> None:
        from cat_code.mcp.auth.provider import McpAuth
        from cat_code.mcp.auth.types import OAuthSettings
        from cat_code.mcp.client import McpClient
        from cat_code.mcp.pool import default_transport, legacy_fallback

        self.authorizer = authorizer
        self.auth = McpAuth(
            entry.url,
            settings=entry.oauth or OAuthSettings(),
            store=store,
            authorizer=authorizer,
            fresh=True,
        )
        # A person is signing in: the entry's request timeout must not cut them short
        # (the authorizer bounds the wait for them).
        self.client: McpClient = McpClient(
            default_transport(entry, auth=self.auth),
            name=entry.name,
            request_timeout=authorizer.timeout + entry.request_timeout_s,
            fallback=legacy_fallback(entry, auth=self.auth),
        )

    async def run(self) -> None:
        # Connecting meets the server's 401 (whose challenge may name where its metadata
        # is) and signs in; a server that lets a first request in without a token is
        # signed in to explicitly, from its well-known metadata.
        await self.client.connect()
        if not self.auth.signed_in:
            await self.auth.sign_in()
        await self.client.list_tools()

    async def close_all(self) -> None:
        try:
            await asyncio.shield(self.client.close())
        finally:
            await asyncio.shield(self.auth.aclose())
            await asyncio.shield(self.authorizer.aclose())

    def hurry(self) -> None:
        self.client.transport.hurry()

    def kill_now(self) -> None:
        self.client.transport.kill_now()


async def sign_in(
    entry: HttpServerConfig, authorizer: LoopbackAuthorizer, store: TokenStore
) -> None:
    """Sign in to one server (the whole OAuth flow, tokens stored) and close again; raises
    on failure with a message fit to show (never a secret)."""
    attempt = _SignIn(entry, authorizer, store)
    try:
        await attempt.run()
    finally:
        await attempt.close_all()


def sign_out(entry: HttpServerConfig, store: TokenStore) -> bool:
    """Forget one server's tokens; whether there were any."""
    from cat_code.mcp.auth.types import canonical_server_url

    key = canonical_server_url(entry.url)
    had = store.tokens(key) is not None
    store.forget(key)
    return had


async def _login(config: McpConfig, name: str, *, no_browser: bool) -> int:
    from cat_code.mcp.auth.callback import LoopbackAuthorizer
    from cat_code.mcp.auth.store import FileTokenStore

    try:
        entry = sign_in_entry(config, name)
    except SignInTarget as exc:
        print_error(str(exc))
        return EXIT_USAGE
    settings = entry.oauth
    authorizer = LoopbackAuthorizer(
        name,
        port=settings.callback_port if settings else None,
        open_browser=not no_browser,
        paste=no_browser,
    )
    attempt = _SignIn(entry, authorizer, FileTokenStore())

    async def work() -> int:
        try:
            await attempt.run()
        except Exception as exc:  # the command's boundary: any failure is the sign-in's
            logger.debug("sign-in to %s failed", name, exc_info=True)
            print_error(f"sign-in to {name} failed: {describe_error(exc)}")
            return EXIT_FAILED
        print_line(f"Signed in to {name}.")
        return EXIT_OK

    return await run_until_signal(attempt, work)


class _Nothing:
    """`run_until_signal`'s servers when there are none (``logout``)."""

    async def close_all(self) -> None:
        return None

    def hurry(self) -> None:
        return None

    def kill_now(self) -> None:
        return None


async def _logout(config: McpConfig, name: str) -> int:
    from cat_code.mcp.auth.store import FileTokenStore

    try:
        entry = sign_in_entry(config, name)
    except SignInTarget as exc:
        print_error(str(exc))
        return EXIT_USAGE

    async def work() -> int:
        if sign_out(entry, FileTokenStore()):
            print_line(f"Signed out of {name}.")
        else:
            print_line(f"No sign-in was stored for '{name}'; nothing to do.")
        return EXIT_OK

    return await run_until_signal(_Nothing(), work)
