"""``cat-code mcp resources | read | prompts | skills``: what the servers offer, from the shell.

Like the other ``mcp`` commands, each connects only the servers it needs, works, and
closes them on every path (signals included, `cat_code.host.servers.shutdown`). Exit codes: 0 on
success, 1 when a server failed (to connect, to list, to read) or is a project server
waiting for approval (named, with the ``cat-code mcp approve`` hint, as ``mcp tools``
does), 2 on a usage error (an unknown server, named with those configured). ``read``
writes a resource as it is: text (with a final newline added if it lacks one), a blob's
decoded bytes, exact, when stdout is not a terminal (on a terminal it says the type and
size instead, and how to save it, and text is shown through `safe_text`: control
characters escaped); ``--json`` prints the wire contents. ``skills`` lists the skills
(SEP-2640) and reads none of their files; ``--json`` prints each entry as listed, with
its server.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

from cat_code.base.safe_text import safe_json, safe_text
from cat_code.cli.connected import with_pool
from cat_code.cli.options import Options
from cat_code.cli.output import EXIT_FAILED, EXIT_OK, EXIT_USAGE, print_error, print_line
from cat_code.host.config.load import McpConfig, only_servers
from cat_code.mcp.roots import Roots

# The rest is imported after the stdio servers are spawned (`cat_code.host.servers.prestart`).
if TYPE_CHECKING:
    from cat_code.host.servers.catalog import Gathered
    from cat_code.host.servers.pool import McpPool

COMMANDS = ("resources", "read", "prompts", "skills")


def run_resource_command(args: Options, config: McpConfig, roots: Roots) -> int:
    """``mcp resources``, ``read``, ``prompts`` or ``skills``, by ``args.mcp_command``."""
    server = args.server
    if server is not None and server not in config.names:
        known = ", ".join(config.names) or "none"
        print_error(f"no MCP server named {server!r} (configured: {known})")
        return EXIT_USAGE
    return asyncio.run(_run(args, only_servers(config, [server] if server else None), roots))


async def _run(args: Options, config: McpConfig, roots: Roots) -> int:
    command, server = args.mcp_command, args.server

    async def work(pool: McpPool) -> int:
        if command == "resources":
            return await _resources(pool, as_json=args.json)
        if command == "read":
            return await _read(pool, server or "", args.uri or "", as_json=args.json)
        if command == "skills":
            return await _skills(pool, as_json=args.json)
        return await _prompts(pool, as_json=args.json)

    return await with_pool(config, roots, work)


def _connect_failures(pool: McpPool) -> int:
    """Say which servers did not connect; how many."""
    from cat_code.host.servers.server import ServerState

    failed = [s for s in pool.status() if s.state in (ServerState.FAILED, ServerState.NEEDS_LOGIN)]
    for status in failed:
        print_error(f"MCP server '{status.name}' {status.state.lower()}: {status.error}")
    return len(failed)


def _waiting(pool: McpPool) -> int:
    """Say which project servers wait for approval (what they offer is unknown, not
    absent: a bare "none" would hide it); how many."""
    from cat_code.host.servers.server import ServerState
    from cat_code.host.status import waiting_line

    waiting = [s for s in pool.status() if s.state is ServerState.NEEDS_APPROVAL]
    for status in waiting:
        print_error(waiting_line(status))
    return len(waiting)


def _listing_failures(*listings: Gathered[Any]) -> int:
    failures: dict[str, str] = {}
    for listing in listings:
        failures.update(listing.failures)
    for name, why in failures.items():
        print_error(f"MCP server '{name}' could not list: {why}")
    return len(failures)


# -- resources ---------------------------------------------------------------------------


async def _resources(pool: McpPool, *, as_json: bool) -> int:
    from cat_code.host.status import format_resources

    await pool.connect_all()
    failed = _connect_failures(pool)
    resources = await pool.resources(None)
    templates = await pool.resource_templates(None)
    failed += _listing_failures(resources, templates)
    if as_json:
        document = {
            "resources": [{"server": s, **r} for s, r in resources.items],
            "resourceTemplates": [{"server": s, **t} for s, t in templates.items],
        }
        print_line(safe_json(document))
    else:
        print_line(format_resources(resources.items, templates.items))
    failed += _waiting(pool)
    return EXIT_FAILED if failed else EXIT_OK


# -- read --------------------------------------------------------------------------------


async def _read(pool: McpPool, server: str, uri: str, *, as_json: bool) -> int:
    from cat_code.host.mcp_tools.resource_tools import read_failure
    from cat_code.mcp.resources import blob_bytes, contents_text, decoded_text, describe_blob

    await pool.connect_all()
    if _connect_failures(pool):
        return EXIT_FAILED
    try:
        result = await pool.use(server, lambda c: c.read_resource(uri), heal=True)
    except Exception as exc:  # the command's boundary: any failure is the read's
        print_error(read_failure(server, uri, exc))
        return EXIT_FAILED
    if as_json:
        print_line(safe_json(result))
        return EXIT_OK
    terminal = sys.stdout.isatty()
    for contents in result["contents"]:
        # On a terminal a textual blob is shown as text; piped, every blob goes out as bytes.
        text = decoded_text(contents) if terminal else contents.get("text")
        if isinstance(text, str):
            # A pipe gets the text as it is (a file of it must be exact); a terminal, safe.
            sys.stdout.write(safe_text(text) if terminal else text)
            if not text.endswith("\n"):  # a shell prompt must not run on from its last line
                sys.stdout.write("\n")
        elif terminal:
            # Raw bytes would garble the terminal: say what it is and how to keep it.
            print_line(f"{describe_blob(contents)} — redirect stdout to a file to save it")
        else:
            sys.stdout.flush()
            sys.stdout.buffer.write(blob_bytes(contents) or b"")
    if not result["contents"]:
        print_error(contents_text(result))
    sys.stdout.flush()
    return EXIT_OK


# -- prompts -----------------------------------------------------------------------------


async def _prompts(pool: McpPool, *, as_json: bool) -> int:
    from cat_code.host.mcp_tools.prompts import command_names
    from cat_code.host.status import format_prompts

    await pool.connect_all()
    failed = _connect_failures(pool)
    prompts = await pool.prompts(None)
    failed += _listing_failures(prompts)
    commands = {id(p): c for c, (_, p) in command_names(prompts.items).items()}
    if as_json:
        listed = [{"server": s, **p, "command": commands.get(id(p), "")} for s, p in prompts.items]
        print_line(safe_json(listed))
    else:
        print_line(format_prompts([(commands.get(id(p), ""), p) for _, p in prompts.items]))
    failed += _waiting(pool)
    return EXIT_FAILED if failed else EXIT_OK


# -- skills ------------------------------------------------------------------------------


async def _skills(pool: McpPool, *, as_json: bool) -> int:
    from cat_code.host.status import format_skills

    await pool.connect_all()
    failed = _connect_failures(pool)
    skills = await pool.skills(None)
    failed += _listing_failures(skills)
    if as_json:
        print_line(safe_json([{"server": s, **skill.entry} for s, skill in skills.items]))
    else:
        print_line(format_skills(skills.items))
    failed += _waiting(pool)
    return EXIT_FAILED if failed else EXIT_OK


__all__ = ["COMMANDS", "run_resource_command"]
