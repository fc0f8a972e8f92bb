"""The servers' lifecycle from the REPL: ``/mcp login|logout``, ``/mcp reload``,
``/mcp restart|disable|enable`` (this session only) and ``/mcp approve|reject`` (project
servers of ./.mcp.json, remembered for the folder).

The handlers check the names against the config; the effects let the pool do the work (to
the end, even past a Ctrl-C), then one line says where things stand. Nothing else needs
telling: every model request reads the tools and the servers' instructions afresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rich.text import Text

from cat_code.base.safe_text import SafeWriter
from cat_code.host.config.load import Scope
from cat_code.host.config.trust import TrustDecision, decide
from cat_code.host.servers.server import McpServer, ServerState
from cat_code.host.status import not_connected_line, tools_registered, unusable_line
from cat_code.mcp.errors import ConfigError, describe_error
from cat_code.repl.commands.registry import (
    Cancelled,
    CommandContext,
    Handler,
    Outcome,
    ReplHost,
    Show,
    SlashCommand,
    names_starting,
    only_argument,
)
from cat_code.repl.render import error_line, note_line

Verb = Literal["restart", "disable", "enable"]
_DOING = {"restart": "restarting", "disable": "disabling", "enable": "enabling"}
_IN_BACKGROUND = "⎿ goes on in the background; /mcp shows when it is done"


@dataclass(frozen=True, slots=True)
class Login:
    server: str

    async def perform(self, repl: ReplHost) -> None:
        """Sign in, then reconnect the server: its tools come without a restart."""
        from cat_code.host.servers.signin import sign_in, sign_in_entry
        from cat_code.mcp.auth.callback import LoopbackAuthorizer

        pool = repl.pool
        if pool is None or not await repl.wait_for_mcp():
            return
        name = self.server
        entry = sign_in_entry(pool.config, name)  # checked by the command already
        authorizer = LoopbackAuthorizer(
            name,
            port=entry.oauth.callback_port if entry.oauth else None,
            open_browser=True,
            out=SafeWriter(),  # the authorization URL comes from the server's metadata
        )
        repl.console.print(note_line(f"signing in to {name} (Ctrl-C cancels)…"))
        try:
            outcome = await repl.in_foreground(sign_in(entry, authorizer, pool.token_store))
        except Exception as exc:  # the command's boundary: any failure is the sign-in's
            repl.console.print(error_line(f"sign-in to {name} failed: {describe_error(exc)}"))
            return
        if isinstance(outcome, Cancelled):
            repl.console.print(note_line("⎿ sign-in cancelled"))
            return
        server = await repl.in_foreground(pool.reconnect(name))
        if isinstance(server, Cancelled):
            return
        if server.state is ServerState.CONNECTED:
            repl.console.print(Text(f"Signed in to {name}. {tools_registered(server)}."))
        else:
            why = f": {server.error}" if server.error else ""
            repl.console.print(error_line(f"signed in to {name}, but it is {server.state}{why}"))


@dataclass(frozen=True, slots=True)
class Logout:
    server: str

    async def perform(self, repl: ReplHost) -> None:
        """Forget the sign-in, then reconnect the server: its tools go."""
        from cat_code.host.servers.signin import sign_in_entry, sign_out

        pool = repl.pool
        if pool is None or not await repl.wait_for_mcp():
            return
        name = self.server
        had = sign_out(sign_in_entry(pool.config, name), pool.token_store)
        said = (
            f"Signed out of {name}."
            if had
            else f"No sign-in was stored for '{name}'; nothing to do."
        )
        repl.console.print(note_line(said))
        await repl.in_foreground(pool.reconnect(name))


@dataclass(frozen=True, slots=True)
class ReloadConfig:
    """``/mcp reload``: re-read the config files and apply what changed."""

    async def perform(self, repl: ReplHost) -> None:
        pool = repl.pool
        if pool is None or not await repl.wait_for_mcp():
            return
        config = repl.reread_config()
        if config is None:
            return
        repl.view.begin("reloading the MCP config…")
        try:
            plan = await repl.in_foreground(pool.reload(config))
        finally:
            repl.view.end()
        if isinstance(plan, Cancelled):
            repl.console.print(note_line(_IN_BACKGROUND))
            return
        repl.console.print(Text(f"MCP config reloaded: {plan.summary()}"))
        repl.say_mcp_summary(pool)


@dataclass(frozen=True, slots=True)
class ManageServer:
    """``/mcp restart|disable|enable SERVER`` (disable and enable: this session only)."""

    verb: Verb
    server: str

    async def perform(self, repl: ReplHost) -> None:
        pool = repl.pool
        if pool is None or not await repl.wait_for_mcp():
            return
        operations = {"restart": pool.restart, "disable": pool.disable, "enable": pool.enable}
        repl.view.begin(f"{_DOING[self.verb]} {self.server}…")
        try:
            server = await repl.in_foreground(operations[self.verb](self.server))
        finally:
            repl.view.end()
        if isinstance(server, Cancelled):
            repl.console.print(note_line(_IN_BACKGROUND))
            return
        self._report(repl, server)

    def _report(self, repl: ReplHost, server: McpServer) -> None:
        name = server.name
        if self.verb == "disable":
            repl.console.print(Text(f"Disabled {name} for this session; its tools are gone."))
        elif server.state is ServerState.CONNECTED:
            done = "Restarted" if self.verb == "restart" else "Enabled"
            repl.console.print(Text(f"{done} {name}: {tools_registered(server)}."))
        else:
            repl.console.print(error_line(not_connected_line(server)))


@dataclass(frozen=True, slots=True)
class DecideProject:
    """``/mcp approve|reject NAME...``: record the decision about project servers, then
    apply the config at once (an approved server starts, a rejected one stops)."""

    verb: Literal["approve", "reject"]
    servers: tuple[str, ...]

    async def perform(self, repl: ReplHost) -> None:
        pool = repl.pool
        if pool is None or not await repl.wait_for_mcp():
            return
        decision = TrustDecision.APPROVED if self.verb == "approve" else TrustDecision.REJECTED
        try:
            decided = decide(self.servers, decision)
        except ConfigError as exc:
            repl.console.print(error_line(str(exc)))
            return
        from cat_code.host.status import decision_line

        for item in decided:
            repl.console.print(Text(decision_line(item.name, item.target, decision)))
        config = repl.reread_config()
        if config is None:
            return
        repl.view.begin("starting…" if decision is TrustDecision.APPROVED else "stopping…")
        try:
            plan = await repl.in_foreground(pool.reload(config))
        finally:
            repl.view.end()
        if isinstance(plan, Cancelled):
            repl.console.print(note_line(_IN_BACKGROUND))
            return
        for item in decided:
            server = pool.server(item.name)
            if decision is TrustDecision.REJECTED or server is None:
                continue
            if server.state is ServerState.CONNECTED:
                repl.console.print(Text(f"{item.name}: {tools_registered(server)}."))
            else:
                repl.console.print(error_line(not_connected_line(server)))


# -- the handlers ----------------------------------------------------------------------------


def _sign_handler(sub: Literal["login", "logout"]) -> Handler:
    def handler(name: str, ctx: CommandContext) -> Outcome:
        from cat_code.host.servers.signin import SignInTarget, sign_in_entry

        if not name:
            return Show(f"usage: /mcp {sub} SERVER", "error")
        if ctx.pool is None:
            return Show("no MCP servers are configured", "error")
        try:
            sign_in_entry(ctx.pool.config, name)
        except SignInTarget as exc:
            return Show(str(exc), "error")
        return Login(name) if sub == "login" else Logout(name)

    return handler


def _reload(rest: str, ctx: CommandContext) -> Outcome:
    if rest:
        return Show("usage: /mcp reload (it re-reads every config file)", "error")
    return ReloadConfig()


def _manage_handler(verb: Verb) -> Handler:
    def handler(name: str, ctx: CommandContext) -> Outcome:
        if not name:
            return Show(f"usage: /mcp {verb} SERVER", "error")
        if ctx.pool is None:
            return Show("no MCP servers are configured", "error")
        broken = next((b for b in ctx.pool.broken if b.name == name), None)
        if broken is not None:
            return Show(f"{unusable_line(name, broken.error)} — fix its entry, then /mcp reload",
                        "error")  # fmt: skip
        server = ctx.pool.server(name)
        if server is None:
            known = ", ".join(ctx.pool.config.names) or "none"
            return Show(f"no MCP server named {name!r} (configured: {known})", "error")
        disabled = server.state is ServerState.DISABLED
        if verb == "restart" and disabled:
            return Show(f"MCP server '{name}' is disabled — /mcp enable {name} starts it", "error")
        if verb == "disable" and disabled:
            return Show(f"MCP server '{name}' is already disabled")
        if verb == "enable" and not disabled:
            failed = server.state is ServerState.FAILED
            hint = f" — /mcp restart {name} starts it again" if failed else ""
            return Show(f"MCP server '{name}' is already enabled ({server.state}){hint}")
        return ManageServer(verb, name)

    return handler


def _decide_handler(verb: Literal["approve", "reject"]) -> Handler:
    def handler(text: str, ctx: CommandContext) -> Outcome:
        names = tuple(dict.fromkeys(text.split()))
        if not names:
            return Show(f"usage: /mcp {verb} SERVER... (a server of ./.mcp.json)", "error")
        project = project_servers(ctx)
        for name in names:
            if name not in project:
                known = ", ".join(project) or "none"
                return Show(f"no project server named {name!r} (project servers, from "
                            f"./.mcp.json: {known})", "error")  # fmt: skip
        return DecideProject(verb, names)

    return handler


def project_servers(ctx: CommandContext) -> list[str]:
    """The names of the project's servers: waiting for approval, rejected, or approved."""
    if ctx.pool is None:
        return []
    config = ctx.pool.config
    approved = [s.name for s in config.servers if s.scope is Scope.PROJECT]
    return [n for n in config.order if n in approved or n in {w.name for w in config.waiting}]


def _complete_project(words: list[str], ctx: CommandContext) -> list[str]:
    return names_starting(project_servers(ctx), words[-1])


def _running(ctx: CommandContext) -> list[str]:
    return [s.name for s in ctx.pool.servers] if ctx.pool is not None else []


def _remote(ctx: CommandContext) -> list[str]:
    if ctx.pool is None:
        return []
    return [s.name for s in ctx.pool.config.servers if s.type in ("http", "sse")]


COMMANDS = (
    SlashCommand("/mcp login", "sign in to a remote MCP server (OAuth, in a browser)",
                 _sign_handler("login"), args="SERVER", complete=only_argument(_remote)),
    SlashCommand("/mcp logout", "forget a remote MCP server's sign-in",
                 _sign_handler("logout"), args="SERVER", complete=only_argument(_remote)),
    SlashCommand("/mcp reload", "re-read the MCP config: new servers start, removed ones stop, "
                 "changed ones restart", _reload),
    SlashCommand("/mcp restart", "stop and start an MCP server again (also one that gave up "
                 "restarting)", _manage_handler("restart"), args="SERVER",
                 complete=only_argument(_running)),
    SlashCommand("/mcp disable", "stop an MCP server and drop its tools (this session only)",
                 _manage_handler("disable"), args="SERVER", complete=only_argument(_running)),
    SlashCommand("/mcp enable", "start a disabled MCP server (this session only)",
                 _manage_handler("enable"), args="SERVER", complete=only_argument(_running)),
    SlashCommand("/mcp approve", "let project servers (./.mcp.json) run in this folder; "
                 "they start at once", _decide_handler("approve"), args="SERVER...",
                 complete=_complete_project),
    SlashCommand("/mcp reject", "keep project servers (./.mcp.json) from running in this "
                 "folder", _decide_handler("reject"), args="SERVER...",
                 complete=_complete_project),
)  # fmt: skip
