"""The one record of what a session showed: typed display entries derived from events.

`DisplayRecorder.feed(event)` turns the event stream of a turn into entries:
chat messages (the prompt, answers, patch results, approvals, notices, errors)
and tool steps (what the trace shows). The engine records every event of every
turn this way and saves the entries with the session; the app derives its chat
from the very same recorder, so a resumed session shows what the live one did.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from hello_tui.core import events as ev

ChatRole = Literal["user", "assistant", "notice", "error", "result"]
CHAT_ROLES: tuple[str, ...] = ("user", "assistant", "notice", "error", "result")
StepStatus = Literal["success", "partial", "error", "cancelled"]
# A tool step keeps this much of its output in the session file (the trace shows a preview).
STEP_OUTPUT_KEPT = 2000

COMMAND_VERDICTS = {
    "once": "allowed once",
    "session": "allowed for this session",
    "network": "allowed once, with network",
    "deny": "denied",
}
CANCELLED_NOTICE = "Turn cancelled."


@dataclass(frozen=True)
class ChatMessage:
    role: ChatRole
    text: str
    turn: int = 0
    # The text reached the screen while it was written (the app already shows it).
    streamed: bool = False
    # A long body under the first line (Notice.foldable) the chat may fold.
    foldable: bool = False


@dataclass(frozen=True)
class ToolStep:
    turn: int
    step: int
    call_id: str
    tool: str
    arguments: dict[str, Any]
    status: StepStatus
    output: str
    duration: float
    thought: str = ""


DisplayEntry = ChatMessage | ToolStep


def counted(count: int, noun: str) -> str:
    """`1 hunk`, `2 hunks`: English plurals for the nouns the screens count."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def hint_suffix(message: str, hint: str) -> str:
    """The hint on a line of its own, unless the message already says it."""
    return f"\nHint: {hint}" if hint and hint not in message else ""


def patch_result_text(event: ev.PatchResolved) -> str:
    lines = [event.summary.strip() or ("Patch applied." if event.applied else "Patch not applied.")]
    if event.applied:
        applied = counted(event.hunks_applied, "hunk")
        lines.append(f"{applied} applied, {event.hunks_declined} declined.")
    if event.backup_dir:
        lines.append(f"Backup: `{event.backup_dir}`")
    return "\n\n".join(lines)


def command_verdict_text(event: ev.CommandApprovalResolved) -> str:
    return f"`{event.command}`: {COMMAND_VERDICTS.get(event.verdict, event.verdict)}"


def _kept(text: str) -> str:
    if len(text) <= STEP_OUTPUT_KEPT:
        return text
    return text[:STEP_OUTPUT_KEPT] + f"\n[… {len(text) - STEP_OUTPUT_KEPT} more characters]"


@dataclass
class DisplayRecorder:
    """Folds events into entries; one recorder follows one session's turns in order."""

    turn: int = 0
    _answer: list[str] = field(default_factory=list)  # streamed answer text not yet closed
    _thoughts: dict[int, str] = field(default_factory=dict)  # step -> thought before its call
    _open: dict[str, ev.ToolCallStarted] = field(default_factory=dict)

    def feed(self, event: ev.Event) -> list[DisplayEntry]:
        if isinstance(event, ev.AssistantDelta):
            self._answer.append(event.text)
            return []
        if isinstance(event, ev.AnswerRestarted):
            self._answer.clear()  # the cut-off answer is void; a new one follows
            return []
        if isinstance(event, ev.ThoughtDelta):
            self._thoughts[event.step] = self._thoughts.get(event.step, "") + event.text
            return []
        if isinstance(event, ev.TurnStarted):
            self.turn = event.turn
            self._answer.clear()
            self._thoughts.clear()
            self._open.clear()
            return [ChatMessage("user", event.text, self.turn)]
        if isinstance(event, ev.ToolCallStarted):
            self._open[event.call_id] = event
            return self._close_answer()
        if isinstance(event, ev.ToolCallFinished):
            return self._step(event.call_id, event.status, event.text, event.duration)
        if isinstance(event, ev.PatchResolved):
            return [ChatMessage("result", patch_result_text(event), self.turn)]
        if isinstance(event, ev.CommandApprovalResolved):
            return [ChatMessage("notice", command_verdict_text(event), self.turn)]
        if isinstance(event, ev.Notice):
            role: ChatRole = "error" if event.level == "error" else "notice"
            return [ChatMessage(role, event.text, self.turn, foldable=event.foldable)]
        if isinstance(event, ev.WriteLockWait) and event.phase == "waiting":
            return [ChatMessage("notice", event.text, self.turn)]
        if isinstance(event, ev.TurnFinished):
            out = self._close_answer()
            if not out and event.answer.strip():
                out.append(ChatMessage("assistant", event.answer, self.turn))
            if event.reason == "max_steps":
                text = f"Stopped after {event.steps} steps (the step limit)."
                out.append(ChatMessage("notice", text, self.turn))
            return out
        if isinstance(event, ev.TurnFailed):
            text = event.error + hint_suffix(event.error, event.hint)
            return [*self._close_answer(), ChatMessage("error", text, self.turn)]
        if isinstance(event, ev.TurnCancelled):
            out = self._close_answer()
            for call_id in list(self._open):
                out += self._step(call_id, "cancelled", "", 0.0)
            return [*out, ChatMessage("notice", CANCELLED_NOTICE, self.turn)]
        return []

    def _close_answer(self) -> list[DisplayEntry]:
        text = "".join(self._answer)
        self._answer.clear()
        if not text.strip():
            return []
        return [ChatMessage("assistant", text, self.turn, streamed=True)]

    def _step(self, call_id: str, status: StepStatus, output: str, duration: float) -> list[Any]:
        started = self._open.pop(call_id, None)
        if started is None:
            return []
        return [
            ToolStep(
                turn=self.turn,
                step=started.step,
                call_id=call_id,
                tool=started.tool,
                arguments=dict(started.arguments),
                status=status,
                output=_kept(output),
                duration=round(duration, 3),
                # The step's thought belongs to its first call, as in the trace.
                thought=self._thoughts.pop(started.step, ""),
            )
        ]


# ---------------------------------------------------------------- on disk


def entry_to_dict(entry: DisplayEntry) -> dict[str, Any]:
    data = asdict(entry)
    data["type"] = "tool" if isinstance(entry, ToolStep) else "message"
    return data


def entry_from_dict(data: Any) -> DisplayEntry | None:
    """One saved entry; also reads the older untyped form ({role, content}). None: not one."""
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    role = data.get("role")
    turn = _int(data.get("turn"))
    if kind == "tool" or (kind is None and role == "tool"):
        arguments = data.get("arguments")
        status = str(data.get("status", "error"))
        return ToolStep(
            turn=turn,
            step=_int(data.get("step")),
            call_id=str(data.get("call_id", "")),
            tool=str(data.get("tool", "")),
            arguments=arguments if isinstance(arguments, dict) else {},
            status=status if status in ("success", "partial", "error", "cancelled") else "error",  # type: ignore[arg-type]
            output=str(data.get("output", data.get("summary", ""))),
            duration=float(data.get("duration") or 0.0),
            thought=str(data.get("thought", "")),
        )
    text = data.get("text", data.get("content", ""))
    if not isinstance(text, str) or not text.strip():
        return None
    if role == "usage":
        return None
    chat_role = role if role in CHAT_ROLES else "notice"
    if text == "cancelled by the user" and chat_role == "notice":
        text = CANCELLED_NOTICE  # how older sessions recorded a cancelled turn
    return ChatMessage(
        chat_role,  # type: ignore[arg-type]
        text,
        turn,
        bool(data.get("streamed", False)),
        foldable=bool(data.get("foldable", False)),
    )


def entries_from_dicts(items: Iterable[Any]) -> list[DisplayEntry]:
    return [e for e in (entry_from_dict(item) for item in items) if e is not None]


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
