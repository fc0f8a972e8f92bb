"""``cat-code -p PROMPT``: run the agent once, for scripts.

stdout carries the model's text, written (and flushed) as it is generated, each message
ending with a newline; everything else a human watching wants (tool calls as ``⏺``
lines, progress, retries, MCP failures, errors) goes to stderr. Text the model writes
before asking for tools is on stdout too: while it streams, nobody knows yet whether
tool calls follow. A message that did not stream is written whole when complete. Nothing
can ask: tools that would need approval are refused unless ``--yes`` or
``--allow-tool`` approves them, elicitation requests are declined, and a server that
needs a sign-in is named on stderr, never signed in (no browser). Exit 0 when the model
gave its answer, 1 otherwise. SIGINT, SIGTERM and SIGHUP end the run through the
same cleanup as success (`cat_code.host.shutdown`): every MCP server is closed before the
process exits, with 128 + N.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from cat_code.agent.loop import DEFAULT_MAX_TURNS, Agent, AgentEvents
from cat_code.agent.permissions import Permissions, RuleBook
from cat_code.agent.providers import (
    ModelSpecError,
    NoModelConfigured,
    create_provider,
    resolve_model,
)
from cat_code.agent.providers.base import ModelError, ToolCall
from cat_code.agent.system_prompt import build_system_prompt
from cat_code.agent.transcript import tool_line
from cat_code.host.shutdown import run_until_signal
from cat_code.tools.base import ToolResult
from cat_code.tools.builtin import builtin_tools
from cat_code.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_FAILED = 1


def run_oneshot(args: argparse.Namespace) -> int:
    """Entry point for ``cat-code -p``."""
    prompt: str = args.prompt
    if prompt == "-":
        prompt = sys.stdin.read()
    if not prompt.strip():
        _say("cat-code: the prompt is empty")
        return EXIT_FAILED
    return asyncio.run(_run(args, prompt))


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class _OneShotEvents(AgentEvents):
    """The model's text on stdout as it comes; tool calls and progress on stderr."""

    def __init__(self) -> None:
        self._last_progress: dict[str, str] = {}
        self._streamed = False  # the current message's text is on stdout already
        self._line_open = False  # stdout's last line has no newline yet
        self._refused: set[str] = set()

    def retrying(self, error: ModelError, delay: float, attempt: int) -> None:
        _say(f"cat-code: {error}; retrying in {delay:.1f} s (attempt {attempt})")

    def model_started(self) -> None:
        self.end_line()
        self._streamed = False

    def assistant_delta(self, text: str) -> None:
        self._streamed = True
        self._write(text)

    def assistant_text(self, text: str, *, final: bool) -> None:
        if not self._streamed:
            self._write(text)
        self.end_line()

    def end_line(self) -> None:
        """End the text on stdout with a newline (also when a stream was cut)."""
        if self._line_open:
            self._write("\n")

    def _write(self, text: str) -> None:
        if not text:
            return
        sys.stdout.write(text)
        sys.stdout.flush()
        self._line_open = not text.endswith("\n")

    def tool_progress(
        self, call: ToolCall, progress: float, total: float | None, message: str | None
    ) -> None:
        amount = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
        text = f"  … {call.name}: {message or amount}"
        if self._last_progress.get(call.id) != text:
            self._last_progress[call.id] = text
            _say(text)

    def tool_refused(self, call: ToolCall, notice: str) -> None:
        self._refused.add(call.id)
        _say(f"cat-code: {notice}")

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        if call.id in self._refused:
            self._refused.discard(call.id)
            return
        _say(tool_line(call.name, call.arguments, result.content))


async def _decline(server: str, params: dict[str, Any]) -> dict[str, Any]:
    message = " ".join(str(params.get("message", "")).split())
    _say(f"cat-code: MCP server '{server}' asked for input ({message[:120]}); declined in -p mode")
    return {"action": "decline"}


async def _run(args: argparse.Namespace, prompt: str) -> int:
    try:
        provider = create_provider(resolve_model(args.model))
    except (ModelSpecError, NoModelConfigured) as exc:
        _say(f"cat-code: {exc}")
        return EXIT_FAILED

    from cat_code.host.config.load import load_config_from_args
    from cat_code.host.pool import McpPool

    pool = McpPool(load_config_from_args(args), elicitation_handler=_decline)
    # The SDK import (about a second) overlaps the servers' startup.
    prepare = asyncio.create_task(provider.prepare(), name="model-prepare")

    events = _OneShotEvents()

    async def work() -> int:
        try:
            await pool.connect_all()
            for status in pool.status():
                if status.state == "FAILED":
                    _say(f"cat-code: MCP server '{status.name}' failed: {status.error}")
                elif status.state == "NEEDS_LOGIN":  # never a browser here: say who and how
                    _say(
                        f"cat-code: MCP server '{status.name}' needs a sign-in: "
                        f"run cat-code mcp login {status.name}"
                    )
                elif status.state == "NEEDS_APPROVAL":  # nothing can ask here: say how
                    _say(
                        f"cat-code: skipped project server '{status.name}' (./.mcp.json, not "
                        f"approved in this folder): run cat-code mcp approve {status.name}"
                    )
            from cat_code.host.resource_tools import resource_tools

            rules = RuleBook.from_settings()
            for warning in rules.warnings():
                _say(f"cat-code: warning: {warning}")
            permissions = Permissions(
                approve_all=args.yes, allow_patterns=args.allow_tool, rules=rules
            )
            registry = ToolRegistry(
                [*builtin_tools(Path.cwd()), *resource_tools(pool, permissions.denies_server)]
            )
            pool.register_into(registry)
            agent = Agent(
                provider,
                registry,
                permissions=permissions,
                system_prompt=lambda: build_system_prompt(Path.cwd(), pool.instructions()),
                max_turns=args.max_turns or DEFAULT_MAX_TURNS,
                events=events,
            )
            outcome = await agent.run(prompt)
        finally:
            events.end_line()
            prepare.cancel()
            await provider.close()
        if outcome.status == "done":
            if outcome.stop_reason == "max_tokens":
                _say("cat-code: the answer was cut off at the output token limit")
            return EXIT_OK
        if outcome.status == "error":
            _say(f"cat-code: {outcome.error}")
        else:
            _say(f"cat-code: {outcome.turn_limit_note}")
        return EXIT_FAILED

    return await run_until_signal(pool, work)
