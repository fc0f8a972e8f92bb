"""The main prompt's input: Tab completion (the command registry, ``@server:uri`` mentions
and the prompt commands' arguments, which ask a server), the keys, and the history file.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Callable
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from cat_code.host.servers.pool import McpPool
from cat_code.host.state.home import cat_code_home, ensure_home, private_file
from cat_code.repl import prompt_commands
from cat_code.repl.commands import REGISTRY, CommandContext, complete
from cat_code.repl.mentions import complete_mention, mention_word

logger = logging.getLogger(__name__)

HISTORY_FILE = "history"
#: How long a command waits for prompt listings before it goes on with what is known.
PROMPT_LISTING_TIMEOUT_S = 5.0


class SlashCompleter(Completer):
    """Completion of the line typed so far; ``pool`` is None until the servers connected."""

    def __init__(
        self, context: Callable[[], CommandContext], pool: Callable[[], McpPool | None]
    ) -> None:
        self._context = context
        self._pool = pool

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Any:
        text = document.text_before_cursor
        if "\n" in text:
            return
        word = text.split(" ")[-1]
        for candidate in complete(text, self._context()):
            meta = REGISTRY.help_line(candidate) if " " not in text else ""
            yield Completion(candidate, start_position=-len(word), display_meta=meta)

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        """What needs a server: ``@server:uri`` mentions and prompt command arguments
        (``completion/complete``); everything else as `get_completions` has it."""
        text = document.text_before_cursor
        pool = self._pool()
        mention = mention_word(text) if "\n" not in text else None
        if pool is not None:
            if mention is not None:
                for candidate in await complete_mention(mention, pool):
                    yield Completion(candidate, start_position=-len(mention))
                return
            if prompt_commands.is_prompt_command(text) and " " not in text:
                await list_prompts(pool)  # a server may have changed them since
            elif prompt_commands.is_prompt_command(text):
                word, candidates = await prompt_commands.complete_argument(text, pool)
                for candidate in candidates:
                    yield Completion(candidate, start_position=-len(word))
                return
        for completion in self.get_completions(document, complete_event):
            yield completion


async def list_prompts(pool: McpPool) -> None:
    """List the prompts again where a server said they changed (no request otherwise),
    so the prompt commands are current; bounded, and quiet on failure."""
    try:
        async with asyncio.timeout(PROMPT_LISTING_TIMEOUT_S):
            await pool.prompts()
    except TimeoutError:
        logger.debug("listing the MCP prompts took too long")


def key_bindings() -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("enter")
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    return bindings


def history() -> History:
    home = cat_code_home()
    try:
        # Private: it holds what was typed, pasted tool arguments and tokens included.
        return FileHistory(str(private_file(ensure_home() / HISTORY_FILE)))
    except OSError as exc:
        logger.warning("cannot keep history in %s: %s", home, exc)
        return InMemoryHistory()
