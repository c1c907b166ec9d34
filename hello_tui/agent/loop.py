"""The agent loop: one bounded think–act–observe turn, in either dialect, as a stream of events.

`Agent.run_turn(text)` yields typed events (hello_tui/agent/events.py):
TurnStarted first, exactly one of TurnFinished / TurnFailed last. When the
consuming task is cancelled, nothing more is yielded, but the session is left
consistent (every tool call gets a result, the file is saved) before the
cancellation propagates.

Two dialects share the loop: native tool calls ("tools") and ReAct text
("react"). With `--protocol auto` the loop starts with native tools and
switches to ReAct for good when the endpoint rejects `tools`.
"""

from __future__ import annotations

import asyncio
import json
import platform
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from hello_tui.agent.context import BuiltContext, ContextParts, build_context, cut_middle
from hello_tui.agent.messages import (
    CANCELLED_RESULT,
    converge_instruction,
    decode_tool_arguments,
    flatten_tool_messages,
    render_todo_board,
    render_tool_catalogue,
)
from hello_tui.agent.observation import observation_for_model
from hello_tui.agent.react import parse_react
from hello_tui.agent.routing import TODO_NUDGE, route_turn, wants_todo_list
from hello_tui.agent.tokens import TokenCounter, default_counter
from hello_tui.config import Settings
from hello_tui.core.approval import Approver
from hello_tui.core.events import (
    AssistantDelta,
    Event,
    Notice,
    StepStarted,
    ThoughtDelta,
    TodoChanged,
    ToolCallFinished,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    Usage,
)
from hello_tui.core.tools import ToolContext, ToolResult
from hello_tui.llm import (
    Completion,
    LLMClient,
    LLMError,
    ReasoningDelta,
    TextDelta,
    TokenUsage,
    cost,
)
from hello_tui.prompts_loader import PromptNotFound, load_prompt
from hello_tui.store.sessions import Session, SessionStore, UsageTotals
from hello_tui.store.transcript import TranscriptLog
from hello_tui.tools.registry import ToolRegistry

AGENTS_MD_LIMIT = 16000
EVIDENCE_KEPT = 8
HISTORY_FOR_RECAP = 12
EMPTY_INPUT_ANSWER = "Please give a concrete instruction: what should I look at or change?"
EMPTY_REPLY_NOTE = (
    "Your last message was empty. Call a tool to make progress, or give your final answer."
)
REPEAT_LIMIT = 3  # the third identical call in a row is not run
SUMMARY_MAX_TOKENS = 400


@dataclass
class _Turn:
    """What one turn has done so far; committed to the session when it ends."""

    number: int
    task: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    open_calls: list[str] = field(default_factory=list)  # tool_call ids without a result
    react_pending: bool = False  # a ReAct action whose observation is not in yet
    call_keys: list[str] = field(default_factory=list)
    steps: int = 0
    usage: UsageTotals = field(default_factory=UsageTotals)
    # Messages that belong after the final answer (what became of a patch in it).
    after_answer: list[dict[str, Any]] = field(default_factory=list)
    committed: bool = False


@dataclass
class _Outcome:
    """Filled by the streaming helpers (async generators cannot return values)."""

    completion: Completion | None = None
    result: ToolResult | None = None


class Agent:
    def __init__(
        self,
        settings: Settings,
        llm: LLMClient,
        registry: ToolRegistry,
        approver: Approver,
        session: Session | None = None,
        *,
        log: TranscriptLog | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        self.settings = settings
        self.llm = llm
        self.registry = registry
        self.approver = approver
        self.session = session or SessionStore(settings.state).new()
        self.log = log
        self.counter = counter or default_counter()
        self._auto = settings.protocol == "auto"
        if settings.protocol == "react":
            self.protocol = "react"
        elif self._auto and self.session.protocol == "react":
            self.protocol = "react"  # this endpoint already rejected tools in this session
        else:
            self.protocol = "tools"
        # Messages the user should see at the start of the next turn (e.g. a corrupt session).
        self.notices: list[str] = []
        self.last_context: BuiltContext | None = None
        self.last_turn_usage = UsageTotals()
        self._queue: asyncio.Queue[Event] | None = None
        self._current: _Turn | None = None
        if getattr(llm, "on_retry", "absent") is None:
            llm.on_retry = self._on_retry
        # One tool context per session: reads, allowed commands and cwd persist across turns.
        self.ctx = ToolContext(
            settings=settings,
            approver=approver,
            emit=self._emit,
            complete=self._complete_for_tool,
            cwd=settings.repo,
        )

    @property
    def usage_totals(self) -> UsageTotals:
        return self.session.usage

    # ------------------------------------------------------------------ events

    def _emit(self, event: Event) -> None:
        """Tools push events here; they reach the consumer while the tool still runs."""
        if isinstance(event, TodoChanged):
            self.session.todos = list(event.items)
        if self._queue is not None:
            self._queue.put_nowait(event)
        elif self.log is not None:
            self.log.write(event)

    def _on_retry(self, attempt: int, delay: float, reason: str) -> None:
        self._emit(
            Notice(
                text=f"Retrying in {delay:.1f}s (attempt {attempt + 1}): {reason}", level="warning"
            )
        )

    def _drain(self) -> list[Event]:
        out: list[Event] = []
        while self._queue is not None and not self._queue.empty():
            out.append(self._queue.get_nowait())
        return out

    async def run_turn(self, text: str) -> AsyncIterator[Event]:
        self._queue = asyncio.Queue()
        inner = self._turn(text)
        try:
            async for event in inner:
                if self.log is not None:
                    self.log.write(event)
                yield event
        finally:
            await inner.aclose()
            self._queue = None

    # ------------------------------------------------------------------ the turn

    async def _turn(self, text: str) -> AsyncIterator[Event]:
        self.session.turns += 1
        turn = _Turn(number=self.session.turns, task=text)
        self._current = turn
        self.session.display.append(
            {"role": "user", "content": text, "turn": turn.number, "ts": time.time()}
        )
        yield TurnStarted(turn=turn.number, text=text)
        for notice in self.notices:
            yield Notice(text=notice, level="warning")
        self.notices.clear()
        try:
            route = route_turn(text)
            if route == "empty":
                async for event in self._finish(turn, EMPTY_INPUT_ANSWER, "direct", stream=True):
                    yield event
            elif route in ("greeting", "history"):
                async for event in self._direct_answer(turn, route):
                    yield event
            else:
                async for event in self._loop(turn):
                    yield event
        except (asyncio.CancelledError, GeneratorExit):
            self._commit(turn, cancelled=True)
            raise
        except LLMError as exc:
            self._commit(turn, error=exc.message)
            yield TurnFailed(error=exc.message, hint=exc.hint)
        except PromptNotFound as exc:
            self._commit(turn, error=str(exc))
            yield TurnFailed(error=str(exc), hint="reinstall hello-tui")
        except Exception as exc:  # noqa: BLE001 - a bug must end the turn readably, not as a traceback
            message = f"internal error: {type(exc).__name__}: {exc}"
            self._commit(turn, error=message)
            yield TurnFailed(error=message, hint="run with --debug and report it")

    def _commit(
        self,
        turn: _Turn,
        *,
        answer: str | None = None,
        error: str | None = None,
        cancelled: bool = False,
    ) -> None:
        """Close open tool calls, move the turn into the session and save it."""
        if turn.committed:
            return
        turn.committed = True
        for call_id in turn.open_calls:
            turn.messages.append(
                {"role": "tool", "tool_call_id": call_id, "content": CANCELLED_RESULT}
            )
        turn.open_calls.clear()
        if turn.react_pending:
            turn.messages.append({"role": "user", "content": f"Observation: {CANCELLED_RESULT}"})
            turn.react_pending = False
        if answer is not None:
            turn.messages.append({"role": "assistant", "content": answer})
            self.session.display.append(
                {"role": "assistant", "content": answer, "turn": turn.number, "ts": time.time()}
            )
        turn.messages.extend(turn.after_answer)
        if error is not None:
            self.session.display.append(
                {"role": "error", "content": error, "turn": turn.number, "ts": time.time()}
            )
        if cancelled:
            self.session.display.append(
                {
                    "role": "notice",
                    "content": "cancelled by the user",
                    "turn": turn.number,
                    "ts": time.time(),
                }
            )
            if self.log is not None:
                self.log.write(TurnCancelled())
        self.session.display.append(
            {
                "role": "usage",
                "turn": turn.number,
                "prompt_tokens": turn.usage.prompt_tokens,
                "completion_tokens": turn.usage.completion_tokens,
                "cost": turn.usage.cost,
            }
        )
        self.last_turn_usage = turn.usage
        self.session.history.extend(turn.messages)
        self.session.protocol = self.protocol
        self.session.save()

    # ------------------------------------------------------------------ prompts

    def _agents_md(self) -> str | None:
        path = self.settings.repo / "AGENTS.md"
        try:
            if path.is_file():
                return cut_middle(
                    path.read_text(encoding="utf-8", errors="replace"), AGENTS_MD_LIMIT
                )
        except OSError:
            return None
        return None

    def _system_prompt(self, protocol: str) -> str:
        base = (
            load_prompt("system", self.settings)
            .replace("{{project}}", self.settings.project)
            .replace("{{repo}}", str(self.settings.repo))
            .replace("{{date}}", date.today().isoformat())
            .replace("{{platform}}", platform.system() or "unknown")
        )
        if protocol != "react":
            return base
        parts = [base, load_prompt("react", self.settings)]
        try:
            parts.append(load_prompt("tools", self.settings))
        except PromptNotFound:
            pass  # the generated catalogue below still lists every tool
        parts.append(render_tool_catalogue(self.registry))
        return "\n\n".join(p.strip() for p in parts)

    def _context(self, turn: _Turn, protocol: str) -> list[dict[str, Any]]:
        built = build_context(
            ContextParts(
                system=self._system_prompt(protocol),
                agents_md=self._agents_md(),
                todo_board=render_todo_board(self.session.todos),
                evidence=self.session.evidence,
                history=self.session.history,
                turn=turn.messages,
            ),
            self.settings.context_budget,
            self.counter,
        )
        self.last_context = built
        if protocol == "react":
            return flatten_tool_messages(built.messages)
        return built.messages

    # ------------------------------------------------------------------ model calls

    def _account(self, turn: _Turn | None, usage: TokenUsage | None) -> Usage | None:
        if usage is None:
            return None
        price = cost(usage, self.settings)
        self.session.usage.add(usage.prompt_tokens, usage.completion_tokens, price)
        if turn is not None:
            turn.usage.add(usage.prompt_tokens, usage.completion_tokens, price)
        return Usage(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            session_prompt_tokens=self.session.usage.prompt_tokens,
            session_completion_tokens=self.session.usage.completion_tokens,
            cost=self.session.usage.cost,
        )

    async def _stream(
        self,
        turn: _Turn,
        messages: list[dict[str, Any]],
        out: _Outcome,
        *,
        tools: list[dict[str, Any]] | None,
        text_as: str,
        step: int = 0,
    ) -> AsyncIterator[Event]:
        """One streamed model call; text goes out as answer or thought deltas."""
        out.completion = None
        async for item in self.llm.stream_chat(messages, tools=tools):
            for event in self._drain():  # e.g. a retry notice from the client
                yield event
            if isinstance(item, TextDelta):
                if text_as == "answer":
                    yield AssistantDelta(text=item.text)
                else:
                    yield ThoughtDelta(text=item.text, step=step)
            elif isinstance(item, ReasoningDelta):
                yield ThoughtDelta(text=item.text, step=step)
            elif isinstance(item, Completion):
                out.completion = item
        for event in self._drain():
            yield event
        if out.completion is None:
            raise LLMError("the model's answer ended without a completion", "protocol")
        usage_event = self._account(turn, out.completion.usage)
        if usage_event is not None:
            yield usage_event

    async def _complete_for_tool(self, messages: list[dict[str, Any]], max_tokens: int) -> str:
        completion = await self.llm.complete(messages, max_tokens=max_tokens)
        self._account(self._current, completion.usage)
        return completion.content

    async def _summarise(self, tool: str, output: str) -> str:
        task = self._current.task if self._current else ""
        messages = [
            {"role": "system", "content": load_prompt("summarize_observation", self.settings)},
            {
                "role": "user",
                "content": f"Task: {task}\nTool: {tool}\n\nOutput:\n{output}",
            },
        ]
        completion = await self.llm.complete(messages, max_tokens=SUMMARY_MAX_TOKENS, temperature=0)
        self._account(self._current, completion.usage)
        return completion.content

    # ------------------------------------------------------------------ direct answers

    async def _direct_answer(self, turn: _Turn, route: str) -> AsyncIterator[Event]:
        """Greetings and history questions: one model call without tools."""
        system = self._system_prompt("tools")
        if route == "history":
            recent = [
                m for m in self.session.display[:-1] if m.get("role") in ("user", "assistant")
            ][-HISTORY_FOR_RECAP:]
            transcript = "\n".join(f"{m['role']}: {m.get('content', '')}" for m in recent)
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
        out = _Outcome()
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        async for event in self._stream(turn, messages, out, tools=None, text_as="answer"):
            yield event
        answer = (out.completion.content if out.completion else "").strip()
        async for event in self._finish(
            turn, answer or "Hello! What should I work on?", "direct", stream=not answer
        ):
            yield event

    # ------------------------------------------------------------------ the loop

    async def _loop(self, turn: _Turn) -> AsyncIterator[Event]:
        task_text = turn.task
        if wants_todo_list(task_text) and self.registry.get("todo") is not None:
            task_text = f"{task_text}\n\n{TODO_NUDGE}"
        turn.messages.append({"role": "user", "content": task_text})
        max_steps = self.settings.max_steps
        step = 0
        while step < max_steps:
            step += 1
            turn.steps = step
            yield StepStarted(step=step, max_steps=max_steps)
            out = _Outcome()
            if self.protocol == "tools":
                try:
                    async for event in self._stream(
                        turn,
                        self._context(turn, "tools"),
                        out,
                        tools=self.registry.schemas() or None,
                        text_as="answer",
                        step=step,
                    ):
                        yield event
                except LLMError as exc:
                    if exc.kind != "tools_unsupported" or not self._auto:
                        raise
                    self.protocol = "react"
                    yield Notice(
                        text="The endpoint does not accept native tool calls; "
                        "switching to the ReAct text protocol.",
                    )
            if self.protocol == "tools":
                assert out.completion is not None
                step_events = self._tools_step(turn, step, out.completion)
            else:
                # ReAct dialect (chosen, or switched to above within the same step).
                async for event in self._stream(
                    turn,
                    self._context(turn, "react"),
                    out,
                    tools=None,
                    text_as="thought",
                    step=step,
                ):
                    yield event
                assert out.completion is not None
                step_events = self._react_step(turn, step, out.completion)
            verdict = None
            async for event in step_events:
                if isinstance(event, _Verdict):
                    verdict = event
                else:
                    yield event
            if verdict is not None:
                async for event in self._end_step(turn, verdict):
                    yield event
                return
        async for event in self._converge(turn, "max_steps"):
            yield event

    async def _end_step(self, turn: _Turn, verdict: _Verdict) -> AsyncIterator[Event]:
        if verdict.ending == "answer":
            async for event in self._finish(
                turn, verdict.answer, "answer", stream=verdict.stream_answer
            ):
                yield event
        else:
            async for event in self._converge(turn, "repeated_call"):
                yield event

    def _is_repeat(self, turn: _Turn, name: str, arguments: Any) -> bool:
        key = name + "\x00" + json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
        turn.call_keys.append(key)
        recent = turn.call_keys[-REPEAT_LIMIT:]
        return len(recent) == REPEAT_LIMIT and len(set(recent)) == 1

    async def _tools_step(
        self, turn: _Turn, step: int, completion: Completion
    ) -> AsyncIterator[Event]:
        if not completion.tool_calls:
            answer = completion.content.strip()
            if not answer:
                turn.messages.append({"role": "user", "content": EMPTY_REPLY_NOTE})
                yield Notice(text="The model sent an empty message; asking it again.")
                return
            yield _Verdict("answer", answer, stream_answer=False)
            return
        turn.messages.append(
            {
                "role": "assistant",
                "content": completion.content or None,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    }
                    for c in completion.tool_calls
                ],
            }
        )
        turn.open_calls = [c.id for c in completion.tool_calls]
        repeated = False
        for call in completion.tool_calls:
            arguments, error = decode_tool_arguments(call.name, call.arguments)
            model_text = ""
            if error is not None:
                async for event in self._report_unrun(
                    step, call.id, call.name, {"raw": call.arguments}, error
                ):
                    yield event
                model_text = error
            elif self._is_repeat(turn, call.name, arguments):
                repeated = True
                model_text = _repeat_message(call.name)
                async for event in self._report_unrun(
                    step, call.id, call.name, arguments, model_text
                ):
                    yield event
            else:
                holder: list[str] = []
                async for event in self._run_tool(
                    turn, step, call.id, call.name, arguments, holder
                ):
                    yield event
                model_text = holder[0]
            turn.messages.append({"role": "tool", "tool_call_id": call.id, "content": model_text})
            turn.open_calls.remove(call.id)
        if repeated:
            yield _Verdict("repeated")

    async def _react_step(
        self, turn: _Turn, step: int, completion: Completion
    ) -> AsyncIterator[Event]:
        parsed = parse_react(completion.content)
        if parsed.kind == "finish":
            answer = parsed.answer.strip() or parsed.thought.strip()
            if answer:
                yield _Verdict("answer", answer, stream_answer=True)
                return
        if parsed.kind == "none" and parsed.error is None:
            answer = parsed.text.strip()
            if answer:
                # A reply with no markers at all is taken as the answer itself.
                yield _Verdict("answer", answer, stream_answer=True)
                return
        if not parsed.text.strip():
            turn.messages.append({"role": "user", "content": EMPTY_REPLY_NOTE})
            yield Notice(text="The model sent an empty message; asking it again.")
            return
        turn.messages.append({"role": "assistant", "content": parsed.text})
        call_id = f"react-{turn.number}-{step}"
        if parsed.kind != "tool" or parsed.error is not None:
            problem = parsed.error or "Finish[...] was empty: put your answer inside the brackets."
            if parsed.kind == "tool":
                async for event in self._report_unrun(
                    step, call_id, parsed.tool, {"raw": parsed.raw_input}, problem
                ):
                    yield event
            turn.messages.append({"role": "user", "content": f"Observation: {problem}"})
            return
        turn.react_pending = True
        shown_args = (
            parsed.arguments if isinstance(parsed.arguments, dict) else {"input": parsed.arguments}
        )
        if self._is_repeat(turn, parsed.tool, parsed.arguments):
            message = _repeat_message(parsed.tool)
            async for event in self._report_unrun(step, call_id, parsed.tool, shown_args, message):
                yield event
            turn.messages.append({"role": "user", "content": f"Observation: {message}"})
            turn.react_pending = False
            yield _Verdict("repeated")
            return
        holder: list[str] = []
        async for event in self._run_tool(
            turn, step, call_id, parsed.tool, parsed.arguments, holder, shown_args=shown_args
        ):
            yield event
        turn.messages.append({"role": "user", "content": f"Observation: {holder[0]}"})
        turn.react_pending = False

    # ------------------------------------------------------------------ tools

    async def _report_unrun(
        self, step: int, call_id: str, tool: str, arguments: dict[str, Any], message: str
    ) -> AsyncIterator[Event]:
        """A call that was not run (bad JSON, repeated): shown in the trace like any other."""
        yield ToolCallStarted(step=step, call_id=call_id, tool=tool, arguments=arguments)
        yield ToolCallFinished(
            step=step,
            call_id=call_id,
            tool=tool,
            status="error",
            text=message,
            model_text=message,
            duration=0.0,
        )
        self._remember(tool, arguments, "error", message, step)

    async def _run_streaming(
        self, work: Callable[[], Awaitable[ToolResult]], out: _Outcome
    ) -> AsyncIterator[Event]:
        """Run a tool as a task and pass on the events it emits while it is still running."""
        assert self._queue is not None
        task = asyncio.ensure_future(work())
        getter: asyncio.Future[Event] | None = None
        try:
            while True:
                for event in self._drain():
                    yield event
                if task.done():
                    break
                getter = asyncio.ensure_future(self._queue.get())
                done, _ = await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    yield getter.result()
                else:
                    getter.cancel()
                getter = None
            out.result = task.result()
        finally:
            if getter is not None and not getter.done():
                getter.cancel()
            if not task.done():
                task.cancel()
                # Give the tool a moment to clean up (kill its process, release locks).
                await asyncio.wait({task}, timeout=5)

    async def _run_tool(
        self,
        turn: _Turn,
        step: int,
        call_id: str,
        name: str,
        arguments: Any,
        holder: list[str],
        *,
        shown_args: dict[str, Any] | None = None,
    ) -> AsyncIterator[Event]:
        shown = (
            shown_args
            if shown_args is not None
            else (arguments if isinstance(arguments, dict) else {"input": arguments})
        )
        yield ToolCallStarted(step=step, call_id=call_id, tool=name, arguments=shown)
        self.ctx.call_id = call_id
        self.ctx.step = step
        self.ctx.user_task = turn.task
        started = time.perf_counter()
        out = _Outcome()
        async for event in self._run_streaming(
            lambda: self.registry.run(name, arguments, self.ctx), out
        ):
            yield event
        result = out.result or ToolResult.error(f"Tool '{name}' returned nothing.")
        tool = self.registry.get(name)
        model_text = await observation_for_model(
            name,
            result.status,
            result.text,
            self._summarise,
            exact=bool(getattr(tool, "exact_output", False)),
        )
        for event in self._drain():
            yield event
        yield ToolCallFinished(
            step=step,
            call_id=call_id,
            tool=name,
            status=result.status,
            text=result.text,
            model_text=model_text,
            duration=time.perf_counter() - started,
            data=result.data,
        )
        self._remember(name, shown, result.status, model_text, step)
        holder.append(model_text)

    def _remember(
        self, tool: str, arguments: dict[str, Any], status: str, text: str, step: int
    ) -> None:
        args = json.dumps(arguments, ensure_ascii=False, default=str)
        self.session.evidence.append(
            f"{tool} {cut_middle(args, 160)} → {status}: {cut_middle(text, 400)}"
        )
        del self.session.evidence[:-EVIDENCE_KEPT]
        self.session.display.append(
            {
                "role": "tool",
                "tool": tool,
                "arguments": arguments,
                "status": status,
                "summary": cut_middle(text, 500),
                "step": step,
                "ts": time.time(),
            }
        )

    # ------------------------------------------------------------------ endings

    async def _converge(self, turn: _Turn, reason: str) -> AsyncIterator[Event]:
        """The loop ended without an answer: one last request, no tools, and show the result."""
        turn.messages.append({"role": "user", "content": converge_instruction(reason, turn.steps)})
        messages = flatten_tool_messages(self._context(turn, self.protocol))
        turn.messages.pop()  # the instruction is for this call only, not for the history
        out = _Outcome()
        answer = ""
        streamed = False
        text_as = "answer" if self.protocol == "tools" else "thought"
        try:
            async for event in self._stream(
                turn, messages, out, tools=None, text_as=text_as, step=turn.steps
            ):
                if isinstance(event, AssistantDelta):
                    streamed = True
                yield event
            raw = out.completion.content if out.completion else ""
            if self.protocol == "react":
                parsed = parse_react(raw)
                answer = (parsed.answer if parsed.kind == "finish" else parsed.text).strip()
            else:
                answer = raw.strip()
        except LLMError as exc:
            yield Notice(text=f"The closing request failed: {exc.message}", level="warning")
            streamed = False
        if not answer:
            answer = self._fallback_answer(turn, reason)
            streamed = False
        async for event in self._finish(turn, answer, reason, stream=not streamed):
            yield event

    def _fallback_answer(self, turn: _Turn, reason: str) -> str:
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

    async def _finish(
        self, turn: _Turn, answer: str, reason: str, *, stream: bool
    ) -> AsyncIterator[Event]:
        if stream:
            yield AssistantDelta(text=answer)
        async for event in self._patch_in_answer(turn, answer):
            yield event
        self._commit(turn, answer=answer)
        yield TurnFinished(answer=answer, steps=turn.steps, reason=reason)

    async def _patch_in_answer(self, turn: _Turn, answer: str) -> AsyncIterator[Event]:
        """A patch written in the final answer goes through the same review as a tool call."""
        try:
            from hello_tui.patch import contains_patch
            from hello_tui.tools.writes import propose_patch_text
        except ImportError:
            return
        if not contains_patch(answer):
            return
        call_id = f"answer-patch-{turn.number}"
        step = turn.steps
        yield ToolCallStarted(
            step=step, call_id=call_id, tool="apply_patch", arguments={"source": "final answer"}
        )
        self.ctx.call_id = call_id
        self.ctx.step = step
        self.ctx.user_task = turn.task
        started = time.perf_counter()
        out = _Outcome()
        async for event in self._run_streaming(lambda: propose_patch_text(answer, self.ctx), out):
            yield event
        result = out.result or ToolResult.error("the patch in the answer produced no result")
        yield ToolCallFinished(
            step=step,
            call_id=call_id,
            tool="apply_patch",
            status=result.status,
            text=result.text,
            model_text=result.text,
            duration=time.perf_counter() - started,
            data=result.data,
        )
        self._remember("apply_patch", {"source": "final answer"}, result.status, result.text, step)
        # The model learns what became of the patch it wrote, on its next turn.
        turn.after_answer.append(
            {"role": "user", "content": f"[patch from your answer] {result.text}"}
        )


@dataclass
class _Verdict:
    """Internal: how a step ended (never leaves the loop)."""

    ending: str  # answer | repeated
    answer: str = ""
    stream_answer: bool = False


def _repeat_message(tool: str) -> str:
    return (
        f"Not run: this is the third identical call to '{tool}' in a row and it would return "
        "the same result. Stop calling tools and conclude with the evidence you have."
    )
