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
`agent.prompt`, turn bookkeeping in `agent.turn`, tool calls in
`agent.tool_calls`. With `--protocol auto` the loop starts with native tools
and switches to ReAct for good when the endpoint rejects `tools`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from typing import Any

from hello_tui.agent.compaction import CompactResult, compact_history
from hello_tui.agent.context import PINNED_FLOOR_CHARS, cut_middle, fit_task
from hello_tui.agent.dialects import react_step, tools_step
from hello_tui.agent.messages import converge_instruction, flatten_tool_messages
from hello_tui.agent.model_calls import ModelCalls, TextAs
from hello_tui.agent.prompt import PromptBuilder
from hello_tui.agent.react import parse_react
from hello_tui.agent.routing import TODO_NUDGE, route_turn, wants_todo_list
from hello_tui.agent.tokens import TokenCounter, default_counter
from hello_tui.agent.tool_calls import ToolCalls
from hello_tui.agent.turn import Turn
from hello_tui.config import Settings
from hello_tui.core import logs
from hello_tui.core.approval import Approver
from hello_tui.core.display import ChatMessage, DisplayRecorder
from hello_tui.core.events import (
    AssistantDelta,
    ContextUsage,
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
from hello_tui.core.modes import READ_ONLY_PROMPT
from hello_tui.core.tools import ToolContext
from hello_tui.llm import Budget, Completion, LLMClient, LLMError, budget_for, model_window
from hello_tui.llm.model_window import budget_warning, learnt_window, window_from_error
from hello_tui.mcp.names import PREFIX as MCP_PREFIX
from hello_tui.prompts_loader import PromptNotFound
from hello_tui.store.sessions import Session
from hello_tui.store.transcript import TranscriptLog
from hello_tui.tools.planner import make_plan
from hello_tui.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

HISTORY_FOR_RECAP = 12
EMPTY_INPUT_ANSWER = "Please give a concrete instruction: what should I look at or change?"
# How long a cancelled turn may take to stop its tool and save the session.
STOP_GRACE_SECONDS = 10.0

TurnBody = Callable[[Turn], Awaitable[None]]


async def _despite_cancel(work: Awaitable[None]) -> None:
    """Finish `work` even if cancelled meanwhile (a second Esc, aclose during a cancel),
    then deliver the cancellation: a turn's record must reach the disk whole."""
    running = asyncio.ensure_future(work)
    cancelled = False
    while not running.done():
        try:
            await asyncio.shield(running)
        except asyncio.CancelledError:
            cancelled = True
    running.result()
    if cancelled:
        raise asyncio.CancelledError


def _is_mcp_schema(schema: dict[str, Any]) -> bool:
    function = schema.get("function")
    return isinstance(function, dict) and str(function.get("name", "")).startswith(MCP_PREFIX)


class Agent:
    def __init__(
        self,
        settings: Settings,
        llm: LLMClient,
        registry: ToolRegistry,
        approver: Approver,
        session: Session,
        *,
        log: TranscriptLog | None = None,
        counter: TokenCounter | None = None,
        todos: list[dict[str, Any]] | None = None,
    ) -> None:
        self.settings = settings
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
        # The context budget: the model's window, learnt at the first turn (and again when
        # the model or endpoint changes), or the override.
        self.budget: Budget | None = None
        self._budget_key: tuple[str, str] | None = None
        self._left_out: list[str] = []  # MCP tools the last request went without
        self.recorder = DisplayRecorder(turn=session.turns)
        self._queue: asyncio.Queue[Event | None] | None = None
        self._task: asyncio.Task[None] | None = None
        self.model = ModelCalls(llm, settings, session, self._emit)
        # One tool context per session: reads, allowed commands and cwd persist across turns.
        self.ctx = ToolContext(
            settings=settings,
            approver=approver,
            emit=self._emit,
            complete=self.model.complete_for_tool,
            cwd=settings.repo,
            session_id=session.id,
        )
        self.calls = ToolCalls(
            registry, self.ctx, self._emit, self.model.summarise, session.evidence
        )

    # ------------------------------------------------------------------ the stream

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def run_turn(self, text: str) -> AsyncGenerator[Event, None]:
        return self._stream(lambda: self._turn(text, self._work))

    def plan(self, goal: str) -> AsyncGenerator[Event, None]:
        """`:plan <goal>` as a turn: one planning call, streamed, transcripted, charged."""
        return self._stream(lambda: self._turn(f":plan {goal}", lambda t: self._plan(t, goal)))

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

    def _emit(self, event: Event) -> None:
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
        self._emit(Notice(text=text, level="warning"))

    # ------------------------------------------------------------------ the turn

    async def _turn(self, text: str, body: TurnBody) -> None:
        self.session.turns += 1
        turn = Turn(number=self.session.turns, task=text)
        self.model.current = turn
        try:
            # Bounded before anything reads it: the record, the routing, the request.
            await self.learn_budget()
            fitted = await asyncio.to_thread(
                fit_task, text, self.settings.context_budget, self.counter
            )
        except asyncio.CancelledError:
            turn.task = cut_middle(text, PINNED_FLOOR_CHARS)
            self._emit(TurnStarted(turn=turn.number, text=turn.task))
            await self._end(turn, TurnCancelled())
            raise
        turn.task = fitted.text
        self._emit(TurnStarted(turn=turn.number, text=turn.task))
        if fitted.notice is not None:
            self.notices.append(fitted.notice)
        for notice in self.notices:
            self._emit(Notice(text=notice, level="warning"))
        self.notices.clear()
        try:
            await body(turn)
        except asyncio.CancelledError:
            await self._end(turn, TurnCancelled())
            raise
        except LLMError as exc:
            await self._end(turn, TurnFailed(error=exc.message, hint=exc.hint))
        except PromptNotFound as exc:
            await self._end(turn, TurnFailed(error=str(exc), hint="reinstall hello-tui"))
        except Exception as exc:
            log.exception("internal error in turn %d", turn.number)
            message = f"internal error: {type(exc).__name__}: {exc}"
            await self._end(turn, TurnFailed(error=message, hint=logs.internal_error_hint()))

    async def learn_budget(self) -> Budget:
        """The context budget for the endpoint and model in use: their window (probed once,
        off the loop) or the override; an override past the window is said at the next turn."""
        key = (self.settings.base_url, self.settings.model)
        if self.budget is not None and self._budget_key == key:
            return self.budget
        budget = budget_for(self.settings, await model_window(self.settings))
        self.budget, self._budget_key = budget, key
        self.settings.context_budget = budget.tokens
        warning = budget_warning(budget)
        if warning is not None:
            self.notices.append(warning)
        return budget

    async def _end(self, turn: Turn, closing: Event, answer: str | None = None) -> None:
        """Close the turn into the session, save it, then send the closing event."""
        if turn.closed:
            return
        self.session.history.extend(turn.close(answer))
        self.session.protocol = self.protocol
        self.session.model = self.settings.model
        self._record(closing)
        try:
            await _despite_cancel(self._save())
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
            await self._finish(turn, EMPTY_INPUT_ANSWER, "direct", stream=True)
        elif route in ("greeting", "history"):
            await self._direct_answer(turn, route)
        else:
            await self._loop(turn)

    async def _loop(self, turn: Turn) -> None:
        task_text = turn.task
        if wants_todo_list(task_text) and self.registry.get("todo") is not None:
            task_text = f"{task_text}\n\n{TODO_NUDGE}"
        turn.messages.append({"role": "user", "content": task_text})
        await self._compact_if_full(turn)
        max_steps = self.settings.max_steps
        for step in range(1, max_steps + 1):
            turn.steps = step
            if self.log is not None:
                await self.log.flush_async()
            self._emit(StepStarted(step=step, max_steps=max_steps))
            completion = await self._step_completion(turn, step)
            dialect = tools_step if self.protocol == "tools" else react_step
            outcome = await dialect(turn, step, completion, self.calls, self._emit)
            if outcome.ending == "answer":
                await self._finish(turn, outcome.answer, "answer", stream=outcome.stream_answer)
                return
            if outcome.ending == "repeated":
                await self._converge(turn, "repeated_call")
                return
        await self._converge(turn, "max_steps")

    # ------------------------------------------------------------------ compaction

    async def compact(self) -> CompactResult:
        """Older history becomes one pinned summary (`/compact`, and automatically when full)."""
        turn = self.model.current if self.running else None

        async def complete(messages: list[dict[str, Any]], max_tokens: int) -> str:
            completion = await self.llm.complete(messages, max_tokens=max_tokens, temperature=0)
            self.model.account(turn, completion)
            return completion.content

        history, result = await compact_history(
            self.session.history, self.settings.context_budget, self.counter, complete
        )
        if result.method != "nothing":
            self.session.history = history
            await self.session.save_async()
        return result

    async def _compact_if_full(self, turn: Turn) -> None:
        """Compact before the first step when the request would fill `compact_at` of the budget."""
        share = self.settings.compact_at
        if share is None or not self.session.history:
            return
        protocol = self.protocol
        inputs = await asyncio.to_thread(self.prompts.read_inputs, protocol)
        schemas = self.registry.schemas() if protocol == "tools" else None
        need = (
            self.counter.count(inputs.system)
            + self.counter.count(inputs.agents_md or "")
            + self.counter.count_schemas(schemas)
            + self.counter.count_messages(self.session.history)
            + self.counter.count_messages(turn.messages)
        )
        if need <= share * self.settings.context_budget:
            return
        result = await self.compact()
        if result.method != "nothing":
            self._emit(Notice(text=result.text))

    async def _step_completion(self, turn: Turn, step: int) -> Completion:
        try:
            return await self._step_request(turn, step)
        except LLMError as exc:
            if not self._learn_window_from(exc):
                raise
        # Once more, within the real window: the user's message is bounded to it as well.
        first = turn.messages[0] if turn.messages else None
        if first is not None and isinstance(first.get("content"), str):
            fitted = await asyncio.to_thread(
                fit_task, first["content"], self.settings.context_budget, self.counter
            )
            if fitted.notice is not None:
                turn.messages[0] = {**first, "content": fitted.text}
                self._emit(Notice(text=fitted.notice, level="warning"))
        return await self._step_request(turn, step)

    def _learn_window_from(self, exc: LLMError) -> bool:
        """A server that does not say its window says it when a request is past it: learn it
        (unless the budget is an override) and tell the user. True when the budget shrank."""
        tokens = window_from_error(exc.message)
        if tokens is None or self.budget is None or tokens >= self.settings.context_budget:
            return False
        if self.settings.sources.get("context_budget", "default") != "default":
            return False  # the user chose the budget; the error says why it fails
        before = self.settings.context_budget
        window = learnt_window(self.settings, tokens)
        self.budget = budget_for(self.settings, window)
        self.settings.context_budget = self.budget.tokens
        self._emit(
            Notice(
                text=f"The endpoint said the model's window is {tokens} tokens: the context "
                f"budget goes from {before} to {tokens} tokens and the request is sent again.",
                level="warning",
            )
        )
        return True

    async def _step_request(self, turn: Turn, step: int) -> Completion:
        if self.protocol == "tools":
            try:
                schemas = self.registry.schemas() or None
                messages, schemas = await self._tools_messages(turn, schemas)
                return await self.model.stream(turn, messages, schemas, "answer", step)
            except LLMError as exc:
                if exc.kind != "tools_unsupported" or not self._auto:
                    raise
                self.protocol = "react"
                self._emit(
                    Notice(
                        text="The endpoint does not accept native tool calls; "
                        "switching to the ReAct text protocol."
                    )
                )
        messages = await self._messages(turn, "react")
        return await self.model.stream(turn, messages, None, "thought", step)

    async def _messages(
        self, turn: Turn, protocol: str, schemas: list[dict[str, Any]] | None = None
    ) -> list[dict[str, Any]]:
        return (await self._messages_with(turn, protocol, schemas))[0]

    async def _tools_messages(
        self, turn: Turn, schemas: list[dict[str, Any]] | None
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
        """The messages and the schemas of a native-tools request. MCP schemas yield to the
        newest tool results: when those would be cut, as few MCP tools as it takes are left
        out of this request (the user is told which) so that the results reach the model whole."""
        return await self._messages_with(turn, "tools", schemas, mcp_may_yield=True)

    async def _messages_with(
        self,
        turn: Turn,
        protocol: str,
        schemas: list[dict[str, Any]] | None,
        *,
        mcp_may_yield: bool = False,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
        inputs = await asyncio.to_thread(self.prompts.read_inputs, protocol)
        if self.session.mode == "read-only":
            # The model is told it plans; the mode's approver refuses writes whatever it does.
            inputs = dataclasses.replace(inputs, system=f"{inputs.system}\n\n{READ_ONLY_PROMPT}")

        def build(offered: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
            return self.prompts.context(
                inputs,
                protocol,
                todos=self.todos,
                evidence=self.session.evidence,
                history=self.session.history,
                turn=turn.messages,
                schemas=offered,
            )

        messages = build(schemas)
        built = self.prompts.last_context
        mcp = [s for s in schemas or [] if _is_mcp_schema(s)]
        if mcp_may_yield and mcp and built is not None and built.cut_newest:
            others = [s for s in schemas or [] if not _is_mcp_schema(s)]
            # The most MCP schemas (in their order) with which the newest results stay whole.
            low, high = 0, len(mcp) - 1
            while low < high:
                mid = (low + high + 1) // 2
                build(others + mcp[:mid])
                fits = (
                    self.prompts.last_context is not None
                    and not self.prompts.last_context.cut_newest
                )
                low, high = (mid, high) if fits else (low, mid - 1)
            schemas = (others + mcp[:low]) or None
            messages = build(schemas)
            built = self.prompts.last_context
            left_out = [str(s.get("function", {}).get("name", "")) for s in mcp[low:]]
            self._say_left_out(left_out)
        if built is not None:
            source = self.budget.source if self.budget is not None else ""
            self._emit(ContextUsage(used=built.used, budget=built.budget, source=source))
        return messages, schemas

    def _say_left_out(self, names: list[str]) -> None:
        """Once per set of names: which MCP tools this request goes without, and why."""
        if names == self._left_out:
            return
        self._left_out = names
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        self._emit(
            Notice(
                text=f"{len(names)} MCP tools were left out of this request so that the newest "
                f"tool results reach the model whole within the context budget "
                f"({self.settings.context_budget:,} tokens): {shown}",
                level="warning",
            )
        )

    # ------------------------------------------------------------------ other kinds of turn

    async def _direct_answer(self, turn: Turn, route: str) -> None:
        """Greetings and history questions: one model call without tools."""
        system = await asyncio.to_thread(self.prompts.system_prompt, "tools")
        if route == "history":
            shown = self.session.display[:-1]  # what the user saw, before this question
            recent = [e for e in shown if isinstance(e, ChatMessage)]
            lines = [f"{e.role}: {e.text}" for e in recent if e.role in ("user", "assistant")]
            transcript = "\n".join(lines[-HISTORY_FOR_RECAP:])
            user = (
                "Answer from the conversation below only, without tools.\n\n"
                f"Conversation so far:\n{transcript or '(nothing yet in this session)'}\n\n"
                f"Question: {turn.task}"
            )
        else:
            user = (
                f"{turn.task}\n\n(The user greeted you. Reply in one or two short sentences, "
                "in the user's language, and say what you can help with in this repository.)"
            )
        turn.messages.append({"role": "user", "content": turn.task})
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        completion = await self.model.stream(turn, messages, None, "answer")
        text = completion.content.strip()
        await self._finish(turn, text or "Hello! What should I work on?", "direct", stream=not text)

    async def _plan(self, turn: Turn, goal: str) -> None:
        async def complete(messages: list[dict[str, Any]], max_tokens: int) -> str:
            return (await self.model.stream(turn, messages, None, "answer")).content

        turn.messages.append({"role": "user", "content": f"Make a plan for: {goal}"})
        result = await make_plan(goal, None, self.settings, complete)
        data = result.data if isinstance(result.data, dict) else {}
        if result.status == "error" or not data.get("plan"):
            await self._end(turn, TurnFailed(error=result.text))
            return
        problems = data.get("problems") or []
        if problems:
            note = "This plan does not have the expected shape: " + "; ".join(problems) + "."
            self._emit(Notice(text=note, level="warning"))
        await self._finish(turn, str(data["plan"]), "plan", stream=False)

    # ------------------------------------------------------------------ endings

    async def _converge(self, turn: Turn, reason: FinishReason) -> None:
        """The loop ended without an answer: one last request, no tools, and show the result."""
        turn.messages.append({"role": "user", "content": converge_instruction(reason, turn.steps)})
        messages = flatten_tool_messages(await self._messages(turn, self.protocol))
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
            self._emit(Notice(text=f"The closing request failed: {exc.message}", level="warning"))
            streamed = False
        if not answer:
            answer = self._fallback_answer(turn, reason)
        await self._finish(turn, answer, reason, stream=not streamed)

    def _fallback_answer(self, turn: Turn, reason: str) -> str:
        why = (
            f"I stopped after {turn.steps} steps without a final answer"
            if reason == "max_steps"
            else "I stopped because the same tool call kept repeating"
        )
        evidence = "\n".join(f"- {e}" for e in self.session.evidence[-3:]) or "- (none gathered)"
        return (
            f"{why}.\n\nEvidence so far:\n{evidence}\n\nNext steps:\n"
            "1. Narrow the request to one file or symbol and ask again.\n"
            "2. Raise the step limit with --max-steps if the task needs more exploration."
        )

    async def _finish(self, turn: Turn, answer: str, reason: FinishReason, *, stream: bool) -> None:
        if stream:
            self._emit(AssistantDelta(text=answer))
        await self._patch_in_answer(turn, answer)
        await self._end(turn, TurnFinished(answer=answer, steps=turn.steps, reason=reason), answer)

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
