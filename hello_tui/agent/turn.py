"""Turn bookkeeping: what one turn has done so far, how a step ended, how a turn is closed.

A `Turn` collects the turn's model messages; `close()` makes them a valid
history whatever happened (every tool call gets a result, a pending ReAct
action its observation) before they join the session. A step reports how it
ended with a `StepOutcome` value.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Literal

from hello_tui.agent.messages import CANCELLED_RESULT
from hello_tui.store.history import bounded_answer
from hello_tui.store.sessions import UsageTotals

REPEAT_LIMIT = 3  # the third identical call in a row is not run


@dataclass(frozen=True)
class StepOutcome:
    """How a step ended: go on, answer (streamed already or not), or stop repeating."""

    ending: Literal["continue", "answer", "repeated"]
    answer: str = ""
    stream_answer: bool = False


CONTINUE = StepOutcome("continue")
REPEATED = StepOutcome("repeated")


def answer(text: str, *, stream: bool) -> StepOutcome:
    return StepOutcome("answer", text, stream_answer=stream)


@dataclass
class Turn:
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
    closed: bool = False

    def is_repeat(self, name: str, arguments: Any) -> bool:
        """Record a call; True when it is the REPEAT_LIMIT-th identical call in a row."""
        key = name + "\x00" + json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
        self.call_keys.append(key)
        recent = self.call_keys[-REPEAT_LIMIT:]
        return len(recent) == REPEAT_LIMIT and len(set(recent)) == 1

    def close(self, answer: str | None = None) -> list[dict[str, Any]]:
        """The turn's messages as history: open calls closed, the answer and its aftermath last."""
        self.closed = True
        for call_id in self.open_calls:
            self.messages.append(
                {"role": "tool", "tool_call_id": call_id, "content": CANCELLED_RESULT}
            )
        self.open_calls.clear()
        if self.react_pending:
            self.messages.append({"role": "user", "content": f"Observation: {CANCELLED_RESULT}"})
            self.react_pending = False
        if answer is not None:
            self.messages.append({"role": "assistant", "content": bounded_answer(answer)})
        self.messages.extend(self.after_answer)
        return self.messages


def repeat_message(tool: str) -> str:
    return (
        f"Not run: this is the third identical call to '{tool}' in a row and it would return "
        "the same result. Stop calling tools and conclude with the evidence you have."
    )


async def despite_cancel(work: Awaitable[None]) -> None:
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
