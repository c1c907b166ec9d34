"""The agent loop: one bounded think–act–observe turn, in either dialect, as one stream of events.

A turn runs as one task that puts every event on one queue: the loop's own,
the model client's retry notices and the tools' live output alike
(`ctx.emit`). `run_turn(text)` starts the task and drains the queue, so events
arrive in the order they happened: TurnStarted first, exactly one of
TurnFinished / TurnFailed / TurnCancelled last. Every event is also folded into
the session's display record and buffered for the transcript (flushed every
step). `cancel()` or `aclose()` cancel the task, which stops a running tool;
the turn is then closed consistently (every tool call gets a result) and
saved before the task ends.

The dialects (tools / ReAct) are in `agent.dialects`, prompt assembly in
`agent.prompt`, each request's budget and messages in `agent.requests`, turn
bookkeeping in `agent.turn`, tool calls in `agent.tool_calls`, compaction in
`agent.compaction`, turns without the loop (greetings, `:plan`) in
`agent.short_turns`. With `--protocol auto` the loop starts with native tools
and switches to ReAct for good when the endpoint rejects `tools`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from typing import Any

from hello_tui.agent.compaction import CompactResult, compact_if_full, compact_session
from hello_tui.agent.context import PINNED_FLOOR_CHARS, cut_middle, fit_task
from hello_tui.agent.dialects import react_step, tools_step
from hello_tui.agent.messages import (
    converge_instruction,
    fallback_answer,
    flatten_tool_messages,
)
from hello_tui.agent.model_calls import ModelCalls, TextAs
from hello_tui.agent.prompt import PromptBuilder
from hello_tui.agent.react import parse_react
from hello_tui.agent.requests import Requests
from hello_tui.agent.routing import TODO_NUDGE, route_turn, wants_todo_list
from hello_tui.agent.short_turns import direct_answer, plan_turn
from hello_tui.agent.tokens import TokenCounter, default_counter
from hello_tui.agent.tool_calls import ToolCalls
from hello_tui.agent.turn import Turn, despite_cancel
from hello_tui.config import Settings
from hello_tui.core import logs
from hello_tui.core.approval import Approver
from hello_tui.core.display import DisplayRecorder
from hello_tui.core.events import (
    AssistantDelta,
    Event,
    FinishReason,
    Notice,
    StepStarted,
    TodoChanged,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
    TurnStarted,
)
from hello_tui.core.tools import ToolContext
from hello_tui.llm import Budget, Completion, LLMClient, LLMError
from hello_tui.prompts_loader import PromptNotFound
from hello_tui.store.sessions import Session
from hello_tui.store.transcript import TranscriptLog
from hello_tui.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

EMPTY_INPUT_ANSWER = "Please give a concrete instruction: what should I look at or change?"
# How long a cancelled turn may take to stop its tool and save the session.
STOP_GRACE_SECONDS = 10.0

TurnBody = Callable[[Turn], Awaitable[None]]


class Agent:
    def __init__(
        self,
        llm: LLMClient,
        registry: ToolRegistry,
        approver: Approver,
        session: Session,
        *,
        log: TranscriptLog | None = None,
        counter: TokenCounter | None = None,
        todos: list[dict[str, Any]] | None = None,
    ) -> None:
        # The settings are the client's (`self.settings`); the prompt builder and the tools
        # keep these, as they read nothing a model switch changes.
        settings = llm.settings
        self.llm = llm
        self.registry = registry
        self.session = session
        self.log = log
        self.counter = counter or default_counter()
        self.prompts = PromptBuilder(settings, registry, self.counter)
        self._auto = settings.protocol == "auto"
        # An auto session whose endpoint already rejected tools stays with ReAct.
        react = settings.protocol == "react" or (self._auto and session.protocol == "react")
        self.protocol = "react" if react else "tools"
        self.todos: list[dict[str, Any]] = list(todos or [])  # the board, kept by TodoChanged
        self.notices: list[str] = []  # said at the start of the next turn
        self.recorder = DisplayRecorder(turn=session.turns)
        self._queue: asyncio.Queue[Event | None] | None = None
        self._task: asyncio.Task[None] | None = None
        self.model = ModelCalls(llm, session, self.emit)
        # One tool context per session: reads, allowed commands and cwd persist across turns.
        self.ctx = ToolContext(
            settings=settings,
            approver=approver,
            emit=self.emit,
            complete=self.model.complete_for_tool,
            cwd=settings.repo,
            session_id=session.id,
        )
        self.requests = Requests(
            llm,
            self.prompts,
            session,
            self.emit,
            lambda text: self.notices.append(text),
            lambda: self.todos,
        )
        self.calls = ToolCalls(
            registry, self.ctx, self.emit, self.model.summarise, session.evidence
        )

    # ------------------------------------------------------------------ the stream

    @property
    def settings(self) -> Settings:
        """The settings in use: the model client's, which a model switch replaces."""
        return self.llm.settings

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def run_turn(self, text: str) -> AsyncGenerator[Event, None]:
        return self._stream(lambda: self._turn(text, self._work))

    def plan(self, goal: str) -> AsyncGenerator[Event, None]:
        """`:plan <goal>` as a turn: one planning call, streamed, transcripted, charged."""
        return self._stream(lambda: self._turn(f":plan {goal}", lambda t: plan_turn(self, t, goal)))

    async def _stream(
        self, start: Callable[[], Coroutine[Any, Any, None]]
    ) -> AsyncGenerator[Event, None]:
        if self.running:
            raise RuntimeError("a turn is already running")
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._queue = queue
        task = asyncio.create_task(start())
        self._task = task
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            await self._stop(task)
            if self._queue is queue:
                self._queue = None

    def cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def aclose(self) -> None:
        """Stop a running turn (and its tool), then flush the transcript."""
        if self._task is not None:
            await self._stop(self._task)
        if self.log is not None:
            await self.log.flush_async()

    async def _stop(self, task: asyncio.Task[None]) -> None:
        if not task.done():
            task.cancel()
        done, _ = await asyncio.wait({task}, timeout=STOP_GRACE_SECONDS)
        if not done:
            log.warning("turn did not stop within %.0f s of being cancelled", STOP_GRACE_SECONDS)

    def emit(self, event: Event) -> None:
        self._record(event)
        if self._queue is not None:
            self._queue.put_nowait(event)

    def _record(self, event: Event) -> None:
        if isinstance(event, TodoChanged):
            self.todos = list(event.items)
        self.session.display.extend(self.recorder.feed(event))
        if self.log is not None:
            self.log.write(event)

    def on_retry(self, attempt: int, delay: float, reason: str) -> None:
        text = f"Retrying in {delay:.1f}s (attempt {attempt + 1}): {reason}"
        self.emit(Notice(text=text, level="warning"))

    # ------------------------------------------------------------------ the turn

    async def _turn(self, text: str, body: TurnBody) -> None:
        self.session.turns += 1
        turn = Turn(number=self.session.turns, task=text)
        self.model.current = turn
        try:
            # Bounded before anything reads it: the record, the routing, the request.
            await self.learn_budget()
            fitted = await asyncio.to_thread(fit_task, text, self.context_tokens, self.counter)
        except asyncio.CancelledError:
            turn.task = cut_middle(text, PINNED_FLOOR_CHARS)
            self.emit(TurnStarted(turn=turn.number, text=turn.task))
            await self.end_turn(turn, TurnCancelled())
            raise
        turn.task = fitted.text
        self.emit(TurnStarted(turn=turn.number, text=turn.task))
        if fitted.notice is not None:
            self.notices.append(fitted.notice)
        for notice in self.notices:
            self.emit(Notice(text=notice, level="warning"))
        self.notices.clear()
        try:
            await body(turn)
        except asyncio.CancelledError:
            await self.end_turn(turn, TurnCancelled())
            raise
        except LLMError as exc:
            await self.end_turn(turn, TurnFailed(error=exc.message, hint=exc.hint))
        except PromptNotFound as exc:
            await self.end_turn(turn, TurnFailed(error=str(exc), hint="reinstall hello-tui"))
        except Exception as exc:
            log.exception("internal error in turn %d", turn.number)
            message = f"internal error: {type(exc).__name__}: {exc}"
            await self.end_turn(turn, TurnFailed(error=message, hint=logs.internal_error_hint()))

    @property
    def budget(self) -> Budget | None:
        return self.requests.budget

    @property
    def context_tokens(self) -> int:
        """The tokens a request may fill (see `Requests.tokens`)."""
        return self.requests.tokens

    async def learn_budget(self) -> Budget:
        return await self.requests.learn_budget()

    async def end_turn(self, turn: Turn, closing: Event, answer: str | None = None) -> None:
        """Close the turn into the session, save it, then send the closing event."""
        if turn.closed:
            return
        self.session.history.extend(turn.close(answer))
        self.session.protocol = self.protocol
        self.session.model = self.settings.model
        self._record(closing)
        try:
            await despite_cancel(self._save())
        finally:
            if self._queue is not None:
                self._queue.put_nowait(closing)

    async def _save(self) -> None:
        await self.session.save_async()
        if self.log is not None:
            await self.log.flush_async()

    async def _work(self, turn: Turn) -> None:
        route = route_turn(turn.task)
        if route == "empty":
            await self.finish(turn, EMPTY_INPUT_ANSWER, "direct", stream=True)
        elif route in ("greeting", "history"):
            await direct_answer(self, turn, route)
        else:
            await self._loop(turn)

    async def _loop(self, turn: Turn) -> None:
        task_text = turn.task
        if wants_todo_list(task_text) and self.registry.get("todo") is not None:
            task_text = f"{task_text}\n\n{TODO_NUDGE}"
        turn.messages.append({"role": "user", "content": task_text})
        await compact_if_full(self, turn)
        max_steps = self.settings.max_steps
        for step in range(1, max_steps + 1):
            turn.steps = step
            if self.log is not None:
                await self.log.flush_async()
            self.emit(StepStarted(step=step, max_steps=max_steps))
            completion = await self._step_completion(turn, step)
            dialect = tools_step if self.protocol == "tools" else react_step
            outcome = await dialect(turn, step, completion, self.calls, self.emit)
            if outcome.ending == "answer":
                await self.finish(turn, outcome.answer, "answer", stream=outcome.stream_answer)
                return
            if outcome.ending == "repeated":
                await self._converge(turn, "repeated_call")
                return
        await self._converge(turn, "max_steps")

    # ------------------------------------------------------------------ compaction

    async def compact(self) -> CompactResult:
        """Older history becomes one pinned summary (`/compact`, and automatically when full)."""
        return await compact_session(self)

    async def _step_completion(self, turn: Turn, step: int) -> Completion:
        try:
            return await self._step_request(turn, step)
        except LLMError as exc:
            if not self.requests.learn_window_from(exc):
                raise
        # Once more, within the real window: the user's message is bounded to it as well.
        first = turn.messages[0] if turn.messages else None
        if first is not None and isinstance(first.get("content"), str):
            fitted = await asyncio.to_thread(
                fit_task, first["content"], self.context_tokens, self.counter
            )
            if fitted.notice is not None:
                turn.messages[0] = {**first, "content": fitted.text}
                self.emit(Notice(text=fitted.notice, level="warning"))
        return await self._step_request(turn, step)

    async def _step_request(self, turn: Turn, step: int) -> Completion:
        if self.protocol == "tools":
            try:
                schemas = self.registry.schemas() or None
                messages, schemas = await self.requests.for_tools(turn, schemas)
                return await self.model.stream(turn, messages, schemas, "answer", step)
            except LLMError as exc:
                if exc.kind != "tools_unsupported" or not self._auto:
                    raise
                self.protocol = "react"
                self.emit(
                    Notice(
                        text="The endpoint does not accept native tool calls; "
                        "switching to the ReAct text protocol."
                    )
                )
        messages = await self.requests.messages(turn, "react")
        return await self.model.stream(turn, messages, None, "thought", step)

    # ------------------------------------------------------------------ other kinds of turn

    # ------------------------------------------------------------------ endings

    async def _converge(self, turn: Turn, reason: FinishReason) -> None:
        """The loop ended without an answer: one last request, no tools, and show the result."""
        turn.messages.append({"role": "user", "content": converge_instruction(reason, turn.steps)})
        messages = flatten_tool_messages(await self.requests.messages(turn, self.protocol))
        turn.messages.pop()  # the instruction is for this call only, not for the history
        text_as: TextAs = "answer" if self.protocol == "tools" else "thought"
        answer = ""
        try:
            completion = await self.model.stream(turn, messages, None, text_as, turn.steps)
            raw = completion.content
            if self.protocol == "react":
                parsed = parse_react(raw)
                answer = (parsed.answer if parsed.kind == "finish" else parsed.text).strip()
            else:
                answer = raw.strip()
            streamed = text_as == "answer" and bool(answer)
        except LLMError as exc:
            self.emit(Notice(text=f"The closing request failed: {exc.message}", level="warning"))
            streamed = False
        if not answer:
            answer = fallback_answer(turn.steps, reason, self.session.evidence)
        await self.finish(turn, answer, reason, stream=not streamed)

    async def finish(self, turn: Turn, answer: str, reason: FinishReason, *, stream: bool) -> None:
        if stream:
            self.emit(AssistantDelta(text=answer))
        await self._patch_in_answer(turn, answer)
        await self.end_turn(
            turn, TurnFinished(answer=answer, steps=turn.steps, reason=reason), answer
        )

    async def _patch_in_answer(self, turn: Turn, answer: str) -> None:
        """A patch written in the final answer goes through the same review as a tool call."""
        from hello_tui.patch import contains_patch
        from hello_tui.tools.writes import propose_patch_text

        if not contains_patch(answer):
            return
        call_id = f"answer-patch-{turn.number}"
        result = await self.calls.run_patch_text(
            turn, turn.steps, call_id, lambda: propose_patch_text(answer, self.ctx)
        )
        # The model learns what became of the patch it wrote, on its next turn.
        turn.after_answer.append(
            {"role": "user", "content": f"[patch from your answer] {result.text}"}
        )
