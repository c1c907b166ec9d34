"""Running one tool call for the loop: its events, what the model reads of it, the evidence.

Tools run inside the turn's task, so their live events (`ctx.emit`) reach the
turn's one queue while they work, and cancelling the turn cancels them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from hello_tui.agent.context import cut_middle
from hello_tui.agent.observation import observation_for_model
from hello_tui.agent.turn import Turn
from hello_tui.core.events import Event, ToolCallFinished, ToolCallStarted
from hello_tui.core.tools import ToolContext, ToolResult
from hello_tui.tools.registry import ToolRegistry

EVIDENCE_KEPT = 8

Summarise = Callable[[str, str], Awaitable[str]]


class ToolCalls:
    def __init__(
        self,
        registry: ToolRegistry,
        ctx: ToolContext,
        emit: Callable[[Event], None],
        summarise: Summarise,
        evidence: list[str],
    ) -> None:
        self.registry = registry
        self.ctx = ctx
        self.emit = emit
        self.summarise = summarise
        self.evidence = evidence

    def _point_at(self, turn: Turn, step: int, call_id: str) -> None:
        self.ctx.call_id = call_id
        self.ctx.step = step
        self.ctx.user_task = turn.task

    async def run(
        self,
        turn: Turn,
        step: int,
        call_id: str,
        name: str,
        arguments: Any,
        *,
        shown: dict[str, Any] | None = None,
    ) -> str:
        """Run the call; returns the text the model reads as its result."""
        if shown is None:
            shown = arguments if isinstance(arguments, dict) else {"input": arguments}
        self.emit(ToolCallStarted(step=step, call_id=call_id, tool=name, arguments=shown))
        self._point_at(turn, step, call_id)
        started = time.perf_counter()
        result = await self.registry.run(name, arguments, self.ctx)
        tool = self.registry.get(name)
        model_text = await observation_for_model(
            name,
            result.status,
            result.text,
            self.summarise,
            exact=bool(getattr(tool, "exact_output", False)),
        )
        self._finished(step, call_id, name, shown, result, model_text, started)
        return model_text

    async def run_patch_text(
        self, turn: Turn, step: int, call_id: str, work: Callable[[], Awaitable[ToolResult]]
    ) -> ToolResult:
        """A patch from the final answer, shown in the trace like an apply_patch call."""
        shown = {"source": "final answer"}
        self.emit(ToolCallStarted(step=step, call_id=call_id, tool="apply_patch", arguments=shown))
        self._point_at(turn, step, call_id)
        started = time.perf_counter()
        result = await work()
        self._finished(step, call_id, "apply_patch", shown, result, result.text, started)
        return result

    def not_run(
        self, step: int, call_id: str, tool: str, arguments: dict[str, Any], message: str
    ) -> None:
        """A call that was not run (bad JSON, repeated): shown in the trace like any other."""
        self.emit(ToolCallStarted(step=step, call_id=call_id, tool=tool, arguments=arguments))
        self.emit(
            ToolCallFinished(
                step=step,
                call_id=call_id,
                tool=tool,
                status="error",
                text=message,
                model_text=message,
                duration=0.0,
            )
        )
        self._remember(tool, arguments, "error", message)

    def _finished(
        self,
        step: int,
        call_id: str,
        tool: str,
        shown: dict[str, Any],
        result: ToolResult,
        model_text: str,
        started: float,
    ) -> None:
        self.emit(
            ToolCallFinished(
                step=step,
                call_id=call_id,
                tool=tool,
                status=result.status,
                text=result.text,
                model_text=model_text,
                duration=time.perf_counter() - started,
                data=result.data,
            )
        )
        self._remember(tool, shown, result.status, model_text)

    def _remember(self, tool: str, arguments: dict[str, Any], status: str, text: str) -> None:
        args = json.dumps(arguments, ensure_ascii=False, default=str)
        self.evidence.append(f"{tool} {cut_middle(args, 160)} → {status}: {cut_middle(text, 400)}")
        del self.evidence[:-EVIDENCE_KEPT]
