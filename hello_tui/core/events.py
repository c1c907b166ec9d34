"""Typed events the agent reports while a turn runs.

`Agent.run_turn(text)` yields these; the TUI turns them into widget updates,
`exec` prints them (text or JSON lines), and every one goes to the JSONL log.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Event:
    ts: float = field(default_factory=time.time, kw_only=True)

    @property
    def kind(self) -> str:
        return type(self).__name__

    def to_dict(self) -> dict[str, Any]:
        data = {"type": self.kind}
        for f in dataclasses.fields(self):
            data[f.name] = _plain(getattr(self, f.name))
        return data


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, set):
        return sorted(_plain(v) for v in value)
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if hasattr(value, "model_dump"):
        return value.model_dump()
    return value


@dataclass
class TurnStarted(Event):
    turn: int
    text: str


@dataclass
class AssistantDelta(Event):
    """A piece of the answer the user reads."""

    text: str


@dataclass
class ThoughtDelta(Event):
    """A piece of the model's reasoning (ReAct `Thought:` or reasoning_content)."""

    text: str
    step: int = 0


@dataclass
class StepStarted(Event):
    step: int
    max_steps: int


@dataclass
class ToolCallStarted(Event):
    step: int
    call_id: str
    tool: str
    arguments: dict[str, Any]


@dataclass
class ToolOutputDelta(Event):
    """Live output of a long-running tool (the terminal)."""

    call_id: str
    text: str
    stream: str = "stdout"


@dataclass
class ToolCallFinished(Event):
    step: int
    call_id: str
    tool: str
    status: str  # success | partial | error
    text: str  # full output for the UI and the log
    model_text: str  # what the model was shown (cut / summarised)
    duration: float
    data: Any = None


@dataclass
class PatchProposed(Event):
    call_id: str
    files: list[dict[str, Any]]  # {path, op, added, removed, move_to}
    high_risk: bool
    risk_reasons: list[str]


@dataclass
class PatchResolved(Event):
    call_id: str
    applied: bool
    summary: str
    backup_dir: str | None = None
    hunks_applied: int = 0
    hunks_declined: int = 0


@dataclass
class CommandApprovalNeeded(Event):
    call_id: str
    command: str
    reason: str


@dataclass
class CommandApprovalResolved(Event):
    call_id: str
    command: str
    verdict: str  # once | session | deny


@dataclass
class TodoChanged(Event):
    items: list[dict[str, Any]]  # {id, title, desc, status, ...}


@dataclass
class NoteWritten(Event):
    note_id: str
    title: str
    note_type: str


@dataclass
class Usage(Event):
    prompt_tokens: int
    completion_tokens: int
    session_prompt_tokens: int
    session_completion_tokens: int
    cost: float | None = None


@dataclass
class Notice(Event):
    """Something the user should know that is not part of the answer (retries, protocol switch)."""

    text: str
    level: str = "info"


@dataclass
class TurnFinished(Event):
    answer: str
    steps: int
    reason: str = "answer"  # answer | converged | max_steps | repeated_call | direct


@dataclass
class TurnFailed(Event):
    error: str
    hint: str = ""


@dataclass
class TurnCancelled(Event):
    pass
