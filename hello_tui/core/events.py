"""Typed events the engine reports while a turn runs.

`Engine.run_turn(text)` yields these, one stream per turn; the TUI turns them
into widget updates, `exec` prints them (text or JSON lines), the display
record (`core.display`) is derived from them, and every one goes to the JSONL
transcript. Events are frozen: a consumer can keep one without it changing.
Fields with a closed set of values are `Literal`s.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Literal

ToolStatus = Literal["success", "partial", "error"]
NoticeLevel = Literal["info", "warning", "error"]
CommandVerdictName = Literal["once", "session", "network", "deny"]
OutputStream = Literal["stdout", "stderr"]
# answer: the model answered; converged: a closing request after the loop ran out;
# max_steps / repeated_call: the loop stopped (with a fallback answer); direct: a
# greeting or history question answered without tools; plan: `:plan` produced a plan.
FinishReason = Literal["answer", "converged", "max_steps", "repeated_call", "direct", "plan"]
LockPhase = Literal["waiting", "acquired"]
# starting: the servers of `servers` are being started; ready / failed / timed_out: one of them.
McpStartPhase = Literal["starting", "ready", "failed", "timed_out"]


@dataclass(frozen=True)
class Event:
    ts: float = field(default_factory=time.time, kw_only=True)

    @property
    def kind(self) -> str:
        return type(self).__name__

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.kind}
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


@dataclass(frozen=True)
class TurnStarted(Event):
    turn: int
    text: str


@dataclass(frozen=True)
class AssistantDelta(Event):
    """A piece of the answer the user reads."""

    text: str


@dataclass(frozen=True)
class ThoughtDelta(Event):
    """A piece of the model's reasoning (ReAct `Thought:` or reasoning_content)."""

    text: str
    step: int = 0


@dataclass(frozen=True)
class StepStarted(Event):
    step: int
    max_steps: int


@dataclass(frozen=True)
class ToolCallStarted(Event):
    step: int
    call_id: str
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolOutputDelta(Event):
    """Live output of a long-running tool (the terminal)."""

    call_id: str
    text: str
    stream: OutputStream = "stdout"


@dataclass(frozen=True)
class ToolProgress(Event):
    """A long-running tool (an MCP server's) says how far it is: `progress` of `total`
    (None: unknown), with the server's own message if it sent one."""

    call_id: str
    tool: str
    progress: float
    total: float | None = None
    message: str = ""
    text: str = ""  # the line to show


@dataclass(frozen=True)
class McpStartup(Event):
    """MCP servers start before a turn's first model call (their tools must be listed by
    then), which can take seconds: one event as they start, one per server as it is
    ready, fails or times out. `ended` of `total` have finished starting."""

    phase: McpStartPhase
    server: str = ""  # "" for "starting"
    servers: list[str] = field(default_factory=list)  # for "starting": every one
    detail: str = ""  # why it failed, or how many tools it brought
    ended: int = 0
    total: int = 0
    text: str = ""  # the line to show


@dataclass(frozen=True)
class ToolCallFinished(Event):
    step: int
    call_id: str
    tool: str
    status: ToolStatus
    text: str  # full output for the UI and the log
    model_text: str  # what the model was shown (cut / summarised)
    duration: float
    data: Any = None


@dataclass(frozen=True)
class PatchProposed(Event):
    call_id: str
    files: list[dict[str, Any]]  # {path, op, added, removed, move_to, whole_file}
    high_risk: bool
    risk_reasons: list[str]


@dataclass(frozen=True)
class PatchResolved(Event):
    call_id: str
    applied: bool
    summary: str
    backup_dir: str | None = None
    hunks_applied: int = 0
    hunks_declined: int = 0


@dataclass(frozen=True)
class WriteLockWait(Event):
    """Another process holds the repository's write lock: the commit waits (cancellable)."""

    phase: LockPhase
    text: str = ""


@dataclass(frozen=True)
class CommandApprovalNeeded(Event):
    call_id: str
    command: str
    reason: str


@dataclass(frozen=True)
class CommandApprovalResolved(Event):
    call_id: str
    command: str
    verdict: CommandVerdictName


@dataclass(frozen=True)
class TodoChanged(Event):
    items: list[dict[str, Any]]  # {id, title, desc, status, ...}


@dataclass(frozen=True)
class NoteWritten(Event):
    note_id: str
    title: str
    note_type: str


@dataclass(frozen=True)
class Usage(Event):
    """Tokens of one model call, and the session's running totals (assign them, never add)."""

    prompt_tokens: int
    completion_tokens: int
    session_prompt_tokens: int
    session_completion_tokens: int
    cost: float | None = None  # the session's total cost so far (None: no price configured)


@dataclass(frozen=True)
class Notice(Event):
    """Something the user should know that is not part of the answer (retries, protocol switch)."""

    text: str
    level: NoticeLevel = "info"
    # The text carries a long body (a diff) under its first line: a screen may show it
    # folded, to be unfolded on demand; a plain log prints it whole.
    foldable: bool = False


@dataclass(frozen=True)
class AnswerRestarted(Event):
    """The answer streamed so far was cut off and is void: drop what was shown of it; the
    model is asked again and a new answer follows."""

    reason: str
    attempt: int  # the attempt that starts now (2 for the first retry)


@dataclass(frozen=True)
class ContextUsage(Event):
    """How full the next request is: messages and tool schemas against the context budget."""

    used: int
    budget: int
    source: str = ""  # where the budget came from (the model's window as the endpoint says, …)


@dataclass(frozen=True)
class TurnFinished(Event):
    answer: str
    steps: int
    reason: FinishReason = "answer"


@dataclass(frozen=True)
class TurnFailed(Event):
    error: str
    hint: str = ""


@dataclass(frozen=True)
class TurnCancelled(Event):
    pass


# The events that end a turn's stream: exactly one of them comes last.
TURN_ENDINGS = (TurnFinished, TurnFailed, TurnCancelled)
