"""``cat-code mcp list | tools | call | login | logout``: the MCP servers from the shell.

The output formats are stable (scripts and tests read them): ``list`` prints aligned
columns or, with ``--json``, an array of status objects; ``tools`` one line per tool;
``call`` the flattened result. Every command connects, works, and closes every server
before it returns, on every path; SIGINT, SIGTERM and SIGHUP stop the command, close every
server and exit 128 + N (`cat_code.host.servers.shutdown`). The texts come from
`cat_code.host.status` (`format_status`, shared with the REPL's ``/mcp``) and sign-in/out
from `cat_code.host.servers.signin` (shared with ``/mcp login`` and ``/mcp logout``). A sign-in
connects the one server once through an ``McpAuth`` with a person at hand (a
`LoopbackAuthorizer`), so the whole OAuth flow runs and its tokens are stored; no token
is ever printed.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import logging
import sys
from typing import TYPE_CHECKING, Any

from cat_code.base.safe_text import SafeWriter, safe_json, safe_text
from cat_code.cli.connected import with_pool
from cat_code.cli.options import Options, Run
from cat_code.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_error, print_line
from cat_code.host.config.load import McpConfig, load_run_config, only_servers
from cat_code.host.servers.shutdown import run_until_signal
from cat_code.host.state.run_records import reap_orphans
from cat_code.mcp.errors import describe_error
from cat_code.mcp.roots import Roots

# The rest is imported after the stdio servers are spawned (`cat_code.host.servers.prestart`):
# a server boots on the other core while these load.
if TYPE_CHECKING:
    from cat_code.host.servers.pool import McpPool
    from cat_code.host.servers.server import ServerStatus

logger = logging.getLogger(__name__)


def _config(args: Options, *, connects: bool = True) -> tuple[McpConfig, Roots]:
    """The run's config and roots (the working directory and ``--add-dir``); a verb that
    connects servers first ends the groups a killed cat-code left (meanwhile they boot)."""
    config = load_run_config(args.config_paths, trust_project=args.trust_project)
    if connects:
        reap_orphans()
    return config, Roots(args.add_dir)


def _run_list(args: Options) -> int:
    config, roots = _config(args)
    return asyncio.run(_list(config, roots, as_json=args.json))


def _run_tools(args: Options) -> int:
    config, roots = _config(args)
    return asyncio.run(_tools(config, roots, args.server, as_json=args.json))


def _run_call(args: Options) -> int:
    config, roots = _config(args)
    return asyncio.run(_call(config, roots, args.tool or "", args.arguments, as_json=args.json))


def _run_login(args: Options) -> int:
    config, _ = _config(args, connects=False)  # a sign-in connects no pool
    return asyncio.run(_login(config, args.server or "", no_browser=args.no_browser))


def _run_logout(args: Options) -> int:
    config, _ = _config(args, connects=False)
    return asyncio.run(_logout(config, args.server or ""))


def _run_offering(args: Options) -> int:
    from cat_code.cli.mcp_resources import run_resource_command

    config, roots = _config(args)
    return run_resource_command(args, config, roots)


#: ``mcp`` subcommand → its run function (`cat_code.cli.verbs` sets them on the parsers).
VERBS: dict[str, Run] = {
    "list": _run_list,
    "tools": _run_tools,
    "call": _run_call,
    "login": _run_login,
    "logout": _run_logout,
    "resources": _run_offering,
    "read": _run_offering,
    "prompts": _run_offering,
    "skills": _run_offering,
}


async def _list(config: McpConfig, roots: Roots, *, as_json: bool) -> int:
    async def work(pool: McpPool) -> int:
        from cat_code.host.status import format_status

        await pool.connect_all()
        statuses = pool.status()
        unreadable = config.unreadable
        if as_json:
            print_line(safe_json([s.to_json() for s in statuses]))
        else:
            print_line(format_status(statuses, config.files, unreadable=unreadable))
        if not statuses and unreadable:
            return EXIT_FAILED  # nothing listed because a file is broken, not because none
        return EXIT_OK if pool.all_connected else EXIT_FAILED

    return await with_pool(config, roots, work)


async def _tools(config: McpConfig, roots: Roots, server: str | None, *, as_json: bool) -> int:
    if server is not None and server not in config.names:
        print_error(
            f"no MCP server named {server!r} (configured: {', '.join(config.names) or 'none'})"
        )
        return EXIT_USAGE
    chosen = only_servers(config, [server] if server else None)

    async def work(pool: McpPool) -> int:
        from cat_code.host.servers.server import ServerState
        from cat_code.host.status import format_tools, tool_json

        await pool.connect_all()
        down = [s for s in pool.status() if s.name == server and _unavailable(s)]
        if down:  # "MCP tools: none" would hide why
            print_error(_unavailable(down[0]) or "")
            return EXIT_FAILED
        if as_json:
            print_line(safe_json(tool_json(pool, server)))
        else:
            print_line(format_tools(pool, server))
        failed = [s for s in pool.status() if s.state is ServerState.FAILED]
        for s in failed:
            print_error(f"MCP server '{s.name}' failed: {s.error}")
        waiting = [s for s in pool.status() if s.state is ServerState.NEEDS_APPROVAL]
        for s in waiting:  # its tools are unknown, not absent: say why and how
            print_error(_unavailable(s) or "")
        return EXIT_FAILED if failed or waiting else EXIT_OK

    return await with_pool(chosen, roots, work)


async def _call(
    config: McpConfig, roots: Roots, name: str, raw_arguments: str, *, as_json: bool
) -> int:
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
    from cat_code.host.mcp_tools.tool_adapter import may_belong_to

    known = [s.name for s in config.servers] + [w.name for w in config.waiting]
    candidates = [server for server in known if may_belong_to(server, name)]
    chosen = only_servers(config, candidates or None)

    async def work(pool: McpPool) -> int:
        from cat_code.host.servers.server import ServerState

        await pool.connect_all()
        tool = pool.find_tool(name)
        statuses = pool.status()
        if (
            tool is None
            and candidates
            and not any(s.state is ServerState.CONNECTED for s in statuses)
        ):
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
                sys.stderr.write(
                    safe_text("available tools:\n" + "".join(f"  {k}\n" for k in known))
                )
            failed = [s for s in pool.status() if s.state is ServerState.FAILED]
            for s in failed:
                print_error(f"(MCP server '{s.name}' failed: {s.error})")
            # The server the name points at is down: the call failed, the command line did not.
            return EXIT_FAILED if candidates and failed else EXIT_USAGE

        def progress(done: float, total: float | None, message: str | None) -> None:
            amount = f"{done:g}/{total:g}" if total is not None else f"{done:g}"
            sys.stderr.write(safe_text(f"progress {amount}{': ' + message if message else ''}\n"))

        # `call`, not `execute`: the whole result; the size policy is for what a model reads.
        result = await tool.call(arguments, progress=progress)
        if as_json and result.raw is not None:
            print_line(safe_json(result.raw))
        elif result.is_error and result.raw is None:
            print_error(result.content)
        else:
            print_line(result.content)
        return EXIT_FAILED if result.is_error else EXIT_OK

    return await with_pool(chosen, roots, work, elicitation_handler=_decline)


async def _decline(server: str, params: dict[str, Any]) -> dict[str, Any]:
    """``mcp call`` has nobody to ask: it declines, and says so (a URL in full, unopened)."""
    from cat_code.host.status import declined_line

    print_error(
        declined_line(server, params, "by `mcp call`") + " (the REPL, `cat-code`, can ask you)"
    )
    return {"action": "decline"}


def _unavailable(status: ServerStatus) -> str | None:
    """Why a server's tools cannot be used, naming its state and the way out; None if they can."""
    from cat_code.host.status import unavailable_line

    return unavailable_line(status)


def _guesses(name: str, known: list[str]) -> list[str]:
    """Registered names the user may have meant: the tool's own name, or a near miss."""
    suffix = [k for k in known if k.endswith(f"__{name}")]
    return suffix[:3] or difflib.get_close_matches(name, known, n=3, cutoff=0.85)


# -- sign-in ---------------------------------------------------------------------------


async def _login(config: McpConfig, name: str, *, no_browser: bool) -> int:
    from cat_code.host.servers.signin import SignIn, SignInTarget, sign_in_entry
    from cat_code.host.state.home import token_store
    from cat_code.mcp.auth.callback import LoopbackAuthorizer

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
        out=SafeWriter(),  # the authorization URL comes from the server's metadata
    )
    attempt = SignIn(entry, authorizer, token_store())

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
    from cat_code.host.servers.signin import SignInTarget, sign_in_entry, sign_out
    from cat_code.host.state.home import token_store

    try:
        entry = sign_in_entry(config, name)
    except SignInTarget as exc:
        print_error(str(exc))
        return EXIT_USAGE

    async def work() -> int:
        if sign_out(entry, token_store()):
            print_line(f"Signed out of {name}.")
        else:
            print_line(f"No sign-in was stored for '{name}'; nothing to do.")
        return EXIT_OK

    return await run_until_signal(_Nothing(), work)
