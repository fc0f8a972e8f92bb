"""The agent loop: prompt → model → tool calls → tool results → model, until it answers.

`Agent.run` drives one user turn. Each model turn's tool calls are first authorized one
by one (questions must not interleave on the terminal), then run concurrently; their
results go back in call order. Invariants:

- Nothing a tool or the model does raises out of ``run``: an unknown tool, bad
  arguments, a refusal, a tool that raises, a dead MCP server are error results the
  model reads; an API failure (after `RetryPolicy` retries) ends the turn as an
  `Outcome` with ``error`` set. Only cancellation propagates.
- The conversation stays valid for the next turn on every path: cancelled calls get
  "cancelled" results; a prompt that got no answer at all is taken back out.
- Cancelling ``run`` cancels the in-flight tool calls (an MCP call then sends
  ``notifications/cancelled``) before the cancellation propagates.
- The model's text streams to `AgentEvents.assistant_delta` as it arrives. When the
  stream is cut (cancelled, or an API error mid-answer), what arrived stays in the
  conversation as an ``interrupted`` assistant message, as the user saw it, marked with
  what cut it (the user or the error: the model is told which); tool calls
  the model had not finished asking for are dropped. Tool calls run once the model's
  message is complete: they are only whole then (and a call's arguments only valid).

- Every change to the conversation is handed to the `ConversationLog` (the session file)
  as soon as it is made: the prompt before the request, each answer before its tools run,
  each set of results before the next request.
- Compaction (`compact`, `cat_code.agent.compaction`) replaces the older messages with
  a summary: on request, before a request when the last one used `THRESHOLD_PERCENT` of the
  context window (unless ``CAT_CODE_AUTO_COMPACT=off``), and once when the API answers that
  the prompt is too long, the request then retried. Tools found by search before it stay
  found (``ToolSearch.kept``); ``restate`` (the open tasks) is said again after each.

- Hooks (`cat_code.agent.hooks`, when the session has any): ``UserPromptSubmit`` before the
  prompt joins (a block drops it), ``PreToolUse`` before a call is authorized (a block or a
  ``deny`` refuses it; its decision goes to `Permissions.authorize`), ``PostToolUse`` after
  it ran, ``Stop`` when the model answers (a block makes it go on, obeyed at most twice in a
  row) and ``PreCompact`` before a compaction.

The loop knows `Tool` and `ToolRegistry`, never MCP; the UI listens through `AgentEvents`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from cat_code.agent import compaction
from cat_code.agent.checkpointing import Checkpointer
from cat_code.agent.compaction import Compaction
from cat_code.agent.compaction_backoff import CompactionBackoff
from cat_code.agent.cost import UsageMeter
from cat_code.agent.hooks import Hooks
from cat_code.agent.permissions import Permissions
from cat_code.agent.providers.base import (
    AssistantMessage,
    CutBy,
    Message,
    ModelError,
    ModelResponse,
    Provider,
    RetryPolicy,
    StopReason,
    ToolCall,
    ToolSpec,
    Usage,
    UserMessage,
)
from cat_code.agent.tool_calls import CANCELLED_RESULT as CANCELLED_RESULT, run_tools
from cat_code.agent.tool_search import ToolSearch
from cat_code.host.notifications import Note, NoteKind, NoteSink, Priority
from cat_code.tools.base import ToolResult
from cat_code.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

DEFAULT_MAX_TURNS = 50


class AgentEvents:
    """What the UI hears about a turn. Every method is a no-op here; override what you show."""

    def model_started(self) -> None:
        """A model call is about to be made."""

    def model_finished(self) -> None:
        """The model call returned or failed."""

    def retrying(self, error: ModelError, delay: float, attempt: int) -> None:
        """A transient API error; the call is retried after ``delay`` seconds."""

    def assistant_delta(self, text: str) -> None:
        """A piece of the model's text, as it is generated (before `assistant_text`)."""

    def assistant_text(self, text: str, *, final: bool) -> None:
        """Text the model wrote, whole, once its message is complete (also when it
        streamed); ``final`` when no tool calls follow it in this turn."""

    def assistant_message(self, message: AssistantMessage) -> None:
        """The model's message is complete (its text and the tool calls it asks for),
        before any of them runs."""

    def tool_results(self, results: list[ToolResult]) -> None:
        """Every call of the message is done; these results go back to the model, in call
        order."""

    def tool_started(self, call: ToolCall) -> None:
        """An authorized call starts running."""

    def tool_progress(
        self, call: ToolCall, progress: float, total: float | None, message: str | None
    ) -> None:
        """A running tool reported progress."""

    def tool_finished(self, call: ToolCall, result: ToolResult) -> None:
        """A call is done (also for refused, unknown and failed calls)."""

    def tool_refused(self, call: ToolCall, notice: str) -> None:
        """A permission rule refused a call (one short line for the user); its
        ``tool_finished``, with the explanation the model gets, follows."""

    def compacting(self, automatic: bool) -> None:
        """The model is asked for a summary of the conversation (``automatic``: not asked
        for by the user)."""

    def compacted(self, result: Compaction) -> None:
        """The conversation now goes on from the summary."""

    def compaction_failed(self, error: ModelError) -> None:
        """An automatic compaction failed; the conversation goes on as it was."""


class ConversationLog(Protocol):
    """Where the conversation is saved as it changes (`cat_code.agent.history.SessionLog`)."""

    def sync(self, messages: Sequence[Message]) -> None:
        """The conversation is now ``messages``; save what changed. Never raises."""

    def compacted(
        self, messages: Sequence[Message], found_tools: Sequence[str], **details: object
    ) -> None:
        """The conversation was compacted to ``messages``."""


Status = Literal["done", "error", "max_turns"]


@dataclass(slots=True)
class Outcome:
    """How one user turn ended."""

    status: Status
    #: The model's final text (empty when it ended on an error or the turn limit).
    text: str = ""
    error: ModelError | None = None
    stop_reason: StopReason | None = None
    model_turns: int = 0
    usage: Usage = field(default_factory=Usage)
    #: Why a hook ended the turn (a blocked prompt, ``continue: false``), else None.
    hook_stop: str | None = None

    @property
    def turn_limit_note(self) -> str:
        """What to tell the user when the turn ended at ``--max-turns``."""
        turns = f"{self.model_turns} model turn{'' if self.model_turns == 1 else 's'}"
        return f"stopped after {turns} without a final answer (raise the limit with --max-turns)"


class Agent:
    """A conversation with a model that can call the tools of a registry."""

    def __init__(
        self,
        provider: Provider,
        registry: ToolRegistry,
        *,
        permissions: Permissions | None = None,
        system_prompt: str | Callable[[], str] = "",
        max_turns: int = DEFAULT_MAX_TURNS,
        events: AgentEvents | None = None,
        retry: RetryPolicy | None = None,
        tool_search: ToolSearch | None = None,
        log: ConversationLog | None = None,
        meter: UsageMeter | None = None,
        hooks: Hooks | None = None,
        restate: Callable[[], str] | None = None,
    ) -> None:
        self.provider = provider
        self.registry = registry
        self.permissions = permissions or Permissions()
        self.system_prompt = system_prompt
        self.max_turns = max_turns
        self.events = events or AgentEvents()
        self.retry = retry or RetryPolicy()
        self.messages: list[Message] = []
        #: Which tool definitions go on each request (all, or search_tools and those found).
        self.tool_search = tool_search or ToolSearch(registry, provider.name)
        #: The session file, told of every change to ``messages``.
        self.log = log
        #: Every request's tokens (compaction summaries too), for /cost.
        self.meter = meter or UsageMeter()
        #: What the last request used: automatic compaction goes by it.
        self.last_usage: Usage | None = None
        #: Compaction when the context fills (``CAT_CODE_AUTO_COMPACT=off``: never by itself).
        self.auto_compact = compaction.auto_enabled()
        #: Text put back after every compaction, read then (the open tasks).
        self.restate = restate
        #: Holds automatic compaction back after one that did not help.
        self.compaction_backoff = CompactionBackoff()
        #: The text streamed by the model call in flight.
        self._partial: list[str] = []
        #: The session's hooks (none by default: firing an event then costs nothing).
        self.hooks = hooks or Hooks()
        #: Notes for the model (a background job ended), told before each request.
        self.notes_for_model: Callable[[], str] | None = None
        #: Where a compaction is told to the user (the session's queue), if anywhere.
        self.notes: NoteSink | None = None
        #: Snapshots before each prompt's first change, for /rewind (None: not taken).
        self.checkpoints: Checkpointer | None = None
        #: Asked after each set of tool results: a text ends the turn with it as the answer
        #: (``exit_plan_mode`` in ``-p``: the plan is the result).
        self.halt: Callable[[], str | None] = lambda: None

    def clear(self) -> None:
        """Forget the conversation."""
        self.messages.clear()
        self.tool_search.kept.clear()
        self.last_usage = None
        self.compaction_backoff.reset()

    def load(self, messages: Sequence[Message], found_tools: Sequence[str] = ()) -> None:
        """Go on from a saved conversation (the tools its compacted part had found, too)."""
        self.messages[:] = list(messages)
        self.tool_search.kept = set(found_tools)
        self.last_usage = None
        self.compaction_backoff.reset()

    @property
    def context_window(self) -> int:
        return compaction.context_window(self.provider.name)

    def _save(self) -> None:
        if self.log is not None:
            self.log.sync(self.messages)

    async def run(self, prompt: str) -> Outcome:
        """Run one user turn to its end. Raises only `asyncio.CancelledError`."""
        stop_blocks = 0  # Stop hooks that made the model go on, in a row
        prompt, blocked = await self.hooks.prompt(prompt)
        if blocked is not None:
            return Outcome(status="done", hook_stop=blocked)
        # Where this turn began: an unanswered prompt is taken back from here (None once a
        # compaction rewrote the conversation: the prompt is in the summary message then).
        start: int | None = len(self.messages)
        self._add_user_text(prompt)
        if self.checkpoints is not None:
            self.checkpoints.begin(prompt, self.messages)
        self._save()
        outcome = Outcome(status="done")
        compacted_for_length = False
        try:
            while True:
                if outcome.model_turns >= self.max_turns:
                    outcome.status = "max_turns"
                    return outcome
                if await self._compact_if_full():
                    start = None
                self._tell_notes()
                try:
                    response = await self._complete()
                except ModelError as error:
                    if error.kind == "prompt_too_long" and not compacted_for_length:
                        compacted_for_length = True  # once: then the error stands
                        if await self._compact_quietly():
                            start = None
                            continue
                    self._keep_partial("error")
                    self._forget_unanswered(start)
                    outcome.status, outcome.error = "error", error
                    return outcome
                compacted_for_length = False
                outcome.model_turns += 1
                outcome.usage.add(response.usage)
                outcome.stop_reason = response.stop_reason
                message = response.message
                self.messages.append(message)
                self._save()
                self.events.assistant_message(message)
                if message.text:
                    self.events.assistant_text(message.text, final=not message.tool_calls)
                if not message.tool_calls:
                    if (more := await self.hooks.keep_going(stop_blocks)) is not None:
                        stop_blocks += 1  # the model goes on, told why
                        self._add_user_text(more)
                        self._save()
                        continue
                    outcome.text = message.text
                    return outcome
                # Calls start once the message is complete: a streamed call is whole (its
                # arguments valid JSON) only then, and the model may ask for several.
                results = await run_tools(self, message.tool_calls)
                self.messages.append(UserMessage(tool_results=results))
                self._save()
                self.events.tool_results(results)
                if (ended := self.hooks.take_stop()) is not None:
                    outcome.hook_stop = ended  # a tool hook's ``continue: false``
                    return outcome
                if (final := self.halt()) is not None:
                    outcome.text = final
                    return outcome
        except asyncio.CancelledError:
            self._keep_partial("user")
            self._repair_after_cancel(start)
            raise
        finally:
            self._save()
            if self.checkpoints is not None:
                await self.checkpoints.turn_ended()

    async def run_messages(self, messages: Sequence[Message]) -> Outcome:
        """Run one user turn whose input is several messages (an MCP prompt's): they join
        the conversation as they are (consecutive ones of a role merged, since roles must
        alternate), and the model answers the last. If they end with an assistant message,
        a short user message asks the model to go on. On an error or a cancel before any
        answer, all of them are taken back out, like a prompt. Raises only cancellation."""
        merged: list[Message] = []
        for message in messages:
            if merged and type(merged[-1]) is type(message):
                merged[-1].text = f"{merged[-1].text}\n\n{message.text}".strip()
            else:
                merged.append(replace(message))
        if not merged:
            raise ValueError("run_messages needs at least one message")
        last = merged.pop()
        if isinstance(last, AssistantMessage):
            merged.append(last)
            last = UserMessage(text="Please continue.")
        start = len(self.messages)
        joined = self.messages[-1] if self.messages else None
        kept_text = joined.text if isinstance(joined, UserMessage) else None
        for message in merged:
            if isinstance(message, UserMessage):
                self._add_user_text(message.text)
            else:
                self.messages.append(message)
        prepended = len(self.messages)

        def take_back() -> None:
            answered = any(isinstance(m, AssistantMessage) for m in self.messages[prepended:])
            if not answered and len(self.messages) <= prepended:
                del self.messages[start:]
                if isinstance(joined, UserMessage) and kept_text is not None:
                    joined.text = kept_text

        try:
            outcome = await self.run(last.text)
        except asyncio.CancelledError:
            take_back()
            self._save()
            raise
        if outcome.status == "error":
            take_back()
            self._save()
        return outcome

    # -- compaction --------------------------------------------------------------------

    async def compact(
        self, instructions: str = "", *, automatic: bool = False
    ) -> Compaction | None:
        """Replace the older messages with the model's summary of them, keeping the latest
        exchange; None when there is nothing older to summarize. A summary that would not
        make the conversation smaller is dropped (``applied`` False). Raises `ModelError`
        when the summary request fails (the conversation is then left as it was)."""
        window = self.context_window
        cut = compaction.plan(self.messages, window)
        if cut is None:
            return None
        await self.hooks.pre_compact("auto" if automatic else "manual", instructions)
        self.events.compacting(automatic)
        asked = compaction.summary_messages(cut.older, window, instructions)
        response = await self._request(compaction.SUMMARY_SYSTEM, asked, [])
        summary = response.message.text.strip() or compaction.outline(cut.older)
        before = compaction.estimate(self.messages)
        restated = self.restate() if self.restate is not None else ""
        rebuilt = compaction.rebuild(summary, cut, restated=restated)
        after = compaction.estimate(rebuilt)
        result = Compaction(before, after, automatic, len(cut.older), applied=after < before)
        result = self.compaction_backoff.record(result, window)
        if self.notes is not None:  # the user's line: the front ends show the queue
            self.notes.post(Note(NoteKind.COMPACTED, "compaction", result.describe(), Priority.LOW))
        if not result.applied:
            self.events.compacted(result)
            return result
        found = self.tool_search.found(self.messages)
        self.messages[:] = rebuilt
        self.tool_search.kept = found  # their search results are in the summary now
        self.last_usage = None
        if self.log is not None:
            self.log.compacted(
                self.messages,
                sorted(self.tool_search.kept),
                automatic=automatic,
                tokens_before=result.tokens_before,
                tokens_after=result.tokens_after,
            )
        self.events.compacted(result)
        return result

    async def _compact_if_full(self) -> bool:
        """Compact before the next request when the last one filled the window enough."""
        last = self.last_usage
        if not self.auto_compact or last is None:
            return False
        used = last.prompt_tokens + last.output_tokens
        if used < compaction.threshold(self.context_window):
            return False
        if not self.compaction_backoff.allows(compaction.estimate(self.messages)):
            return False  # the last one did not help; its notice said how long this waits
        return await self._compact_quietly()

    async def _compact_quietly(self) -> bool:
        """An automatic compaction: a failure is told, and the conversation goes on."""
        if not self.auto_compact:
            return False
        try:
            result = await self.compact(automatic=True)
            return result is not None and result.applied
        except ModelError as error:
            self.last_usage = None  # not again before the next request says how full it is
            if self.compaction_backoff.failed(
                compaction.estimate(self.messages), self.context_window
            ):
                self.events.compaction_failed(error)
            return False

    # -- model -----------------------------------------------------------------------

    async def _complete(self) -> ModelResponse:
        system = self.system_prompt() if callable(self.system_prompt) else self.system_prompt
        sent = self.tool_search.tools_for_request(self.messages)
        tools = [ToolSpec(t.name, t.description, t.input_schema) for t in sent]
        self._partial.clear()
        response = await self._request(system, self.messages, tools, on_text=self._streamed)
        self._partial.clear()
        self.last_usage = response.usage
        return response

    async def _request(
        self,
        system: str,
        messages: Sequence[Message],
        tools: list[ToolSpec],
        *,
        on_text: Callable[[str], None] | None = None,
    ) -> ModelResponse:
        """One model request (retried by the policy), counted by the meter. A provider bug
        becomes a `ModelError`: it ends this turn or this compaction, never the session."""
        self.events.model_started()
        try:
            response = await self.retry.call(
                self.provider,
                system,
                messages,
                tools,
                on_retry=self.events.retrying,
                on_text=on_text,
            )
        except ModelError:
            raise
        except Exception as exc:
            logger.debug("%s raised", self.provider.name, exc_info=True)
            name = type(exc).__name__
            raise ModelError("other", f"{self.provider.name} failed: {name}: {exc}") from exc
        finally:
            self.events.model_finished()
        self.meter.record(self.provider.name, response.usage)
        return response

    def _streamed(self, text: str) -> None:
        self._partial.append(text)
        self.events.assistant_delta(text)

    def _keep_partial(self, cut_by: CutBy) -> None:
        """The text of a cut stream stays as the model's answer, marked with what cut it."""
        text = "".join(self._partial)
        self._partial.clear()
        if text.strip():
            self.messages.append(AssistantMessage(text=text, interrupted=cut_by))

    # -- conversation repair -----------------------------------------------------------

    def _tell_notes(self) -> None:
        """Add the waiting notes to the message the next request ends with (ours)."""
        text = self.notes_for_model() if self.notes_for_model is not None else ""
        last = self.messages[-1] if self.messages else None
        if text and isinstance(last, UserMessage):
            last.text = f"{last.text}\n\n{text}" if last.text else text
            self._save()

    def _add_user_text(self, text: str) -> None:
        last = self.messages[-1] if self.messages else None
        if isinstance(last, UserMessage) and last.tool_results:
            # Tool results of a cancelled turn: the prompt joins them (roles must alternate),
            # after the notes told with them, if any.
            last.text = f"{last.text}\n\n{text}" if last.text else text
        else:
            self.messages.append(UserMessage(text=text))

    def _forget_unanswered(self, start: int | None) -> None:
        """Take the prompt back out when the model never answered it."""
        if start is None:
            return
        if any(isinstance(m, AssistantMessage) for m in self.messages[start:]):
            return
        if len(self.messages) > start:
            del self.messages[start:]
        elif start and isinstance(self.messages[start - 1], UserMessage):
            self.messages[start - 1].text = ""  # it had joined the results of a cancelled turn

    def _repair_after_cancel(self, start: int | None) -> None:
        last = self.messages[-1] if self.messages else None
        if isinstance(last, AssistantMessage) and last.tool_calls:
            cancelled = [
                ToolResult(CANCELLED_RESULT, is_error=True, tool_call_id=c.id)
                for c in last.tool_calls
            ]
            self.messages.append(UserMessage(tool_results=cancelled))
        self._forget_unanswered(start)
