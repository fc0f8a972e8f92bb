"""The questions the REPL asks while it runs: a tool's permission, a server's elicitation
(a form, or a URL to open with consent), and whether to trust the project's servers and
its allow rules.

Every question takes one lock and pauses the spinner, so only one is ever on screen, and
uses its own prompt (not the main one, which is busy awaiting the turn). Ctrl-C at the
permission question cancels the turn (also when a subagent asked: its question names it);
Ctrl-D answers no. Everything a server sent is shown
through the safe-text helpers (`fill_form` and `compact_json` do it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.patch_stdout import patch_stdout
from rich.console import Console
from rich.text import Text

from cat_code.agent.permissions import Answer, RuleBook, server_of
from cat_code.agent.subagents import asking_subagent
from cat_code.agent.transcript import compact_json
from cat_code.agent.write_guard import question_notes
from cat_code.base.safe_text import safe_line
from cat_code.host.config.load import McpConfig
from cat_code.host.config.project_trust import project_content, record as record_content
from cat_code.host.config.trust import TrustDecision, decide
from cat_code.host.status import waiting_lines
from cat_code.mcp.auth.callback import open_in_background
from cat_code.mcp.errors import ConfigError
from cat_code.repl.elicitation import fill_form
from cat_code.repl.render import TurnView, change_diff, error_line, note_line

logger = logging.getLogger(__name__)


def parse_permission(raw: str, *, has_server: bool) -> Answer | None:
    """The answer typed at the permission question (None: ask again)."""
    answer = raw.strip().lower()
    if answer in ("y", "yes"):
        return Answer.YES
    if answer in ("", "n", "no"):
        return Answer.NO
    if answer in ("a", "always"):
        return Answer.ALWAYS_TOOL
    if has_server and answer in ("s", "server"):
        return Answer.ALWAYS_SERVER
    return None


class Questions:
    """The REPL's questions, one at a time. ``busy`` says whether a turn or a command runs
    (a server asking for input with nothing running is declined)."""

    def __init__(
        self,
        console: Console,
        view: TurnView,
        busy: Callable[[], bool],
        cancel_turn: Callable[[], None] = lambda: None,
    ) -> None:
        self.console = console
        self.view = view
        self._busy = busy
        #: Ctrl-C at a subagent's question cancels the whole turn, not only that subagent.
        self._cancel_turn = cancel_turn
        self._lock = asyncio.Lock()
        #: `Permissions.workspace`, for the notes on where a path really leads.
        self.workspace: Callable[[], Iterable[Path]] | None = None
        self._prompt: PromptSession[str] | None = None

    async def question(self, message: str, default: str = "") -> str:
        """One answer typed at the questions' prompt (EOFError, KeyboardInterrupt pass)."""
        if self._prompt is None:
            self._prompt = PromptSession()
        with patch_stdout(raw=True):
            return await self._prompt.prompt_async(message, default=default, handle_sigint=False)

    async def ask_permission(self, tool: Any, arguments: dict[str, Any]) -> Answer:
        server = server_of(tool)
        options = "y yes · n no · a always this tool"
        if server is not None:
            options += f" · s always server '{server}'"
        who = asking_subagent()  # a subagent's call: the question says whose
        async with self._lock:
            with self.view.paused():
                change = await tool.preview(arguments)
                shown = dict(arguments)
                if change is not None:  # the diff shows the text: only the path here
                    shown = {"path": change.shown}
                self.console.print(
                    Text.assemble(
                        ("? ", "yellow"),
                        (f"[subagent {who}] " if who else "", "cyan"),
                        (tool.name, "bold"),
                        " ",
                        (compact_json(shown), "bright_black"),
                    )
                )
                for note in question_notes(tool, arguments, self.workspace):  # where links lead
                    self.console.print(Text(f"  {safe_line(note)}", style="yellow"))
                if change is not None:
                    self.console.print(change_diff(change), end="")
                while True:
                    try:
                        raw = await self.question(f"  allow? {options} › ")
                    except KeyboardInterrupt:
                        if who is not None:
                            self._cancel_turn()
                        raise asyncio.CancelledError from None  # Ctrl-C cancels the turn
                    except EOFError:
                        return Answer.NO
                    answer = parse_permission(raw, has_server=server is not None)
                    if answer is not None:
                        return answer

    async def elicit(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        """A server's elicitation: a form filled in, or a URL opened with consent."""
        if not self._busy():
            logger.warning("an MCP server asked for input while nothing was running; declined")
            return {"action": "decline"}
        async with self._lock:
            with self.view.paused():
                return await fill_form(
                    params,
                    self.question,
                    lambda line: self.console.print(Text(line)),
                    server=server,
                    open_url=open_in_background,
                    show_url=self._show_url,
                )

    def _show_url(self, parts: tuple[str, str, str, str]) -> None:
        head, subdomains, site, rest = parts  # the site: what the browser really visits
        self.console.print(
            Text.assemble("  ", (head, "dim"), (subdomains, "yellow"), (site, "bold yellow"), rest)
        )

    async def trust_project(self, config: McpConfig) -> bool:
        """Name the project's servers waiting for approval and ask once whether to start
        them all; True when they were approved (the config is then read again)."""
        waiting = [w.name for w in config.needs_approval]
        self.console.print(
            Text(
                f"./.mcp.json (this project) has {len(waiting)} MCP server(s) you have not "
                "approved; nothing of them runs until you do:",
                style="yellow",
            )
        )
        for line in waiting_lines(config):
            self.console.print(Text(line))
        try:
            answer = await self.question("approve and start them all? [y/N] › ")
        except (EOFError, KeyboardInterrupt):
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            self.console.print(
                note_line(
                    "not started — /mcp approve NAME starts one, /mcp reject NAME stops the "
                    "question for it"
                )
            )
            return False
        try:
            decide(waiting, TrustDecision.APPROVED)
        except ConfigError as exc:
            self.console.print(error_line(str(exc)))
            return False
        return True

    async def trust_project_rules(self, rules: RuleBook) -> None:
        """Name the project's allow rules the user has not approved; ask once to apply them."""
        waiting = [c for c in project_content() if c.decision is None]
        if not waiting:  # rejected: said once, not asked
            self.console.print(note_line(str(rules.project_allows())))
            return
        self.console.print(Text(str(rules.project_allows()), style="yellow"))
        try:
            answer = await self.question("approve and apply them? [y/N] › ")
        except (EOFError, KeyboardInterrupt):
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            self.console.print(note_line("not applied — cat-code project approve applies them"))
            return
        for content in waiting:
            record_content(content, TrustDecision.APPROVED)
        rules.reload()
        self.console.print(note_line("approved for this folder"))


__all__ = ["Questions", "parse_permission"]
