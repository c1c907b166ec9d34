"""The messages workers post to the app, and what they carry.

Workers never touch widgets (a worker may outlive the screen it was started
from); they post these, and the app's handlers pass them to the controllers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.message import Message

from hello_tui.core import events as ev
from hello_tui.core.display import DisplayEntry

if TYPE_CHECKING:
    from hello_tui.engine.facade import Engine


class EngineEvent(Message):
    """One engine event, posted by the turn worker."""

    def __init__(self, event: ev.Event) -> None:
        super().__init__()
        self.event = event


class AnswerChunk(Message):
    """Several AssistantDelta texts joined by the worker."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class TurnState(Message):
    """What the status bar says the turn is doing (posted by the approver around a modal)."""

    def __init__(self, state: str) -> None:
        super().__init__()
        self.state = state


@dataclass
class EngineStart:
    """What the app shows once the engine is open: the session's record and board."""

    engine: Engine
    display: list[DisplayEntry]
    todos: list[dict[str, Any]]
    notices: list[str]


class EngineReady(Message):
    def __init__(self, start: EngineStart | None, error: str = "") -> None:
        super().__init__()
        self.start = start
        self.error = error


@dataclass
class PreflightReport:
    ok: bool
    message: str
    hint: str


class PreflightDone(Message):
    def __init__(self, report: PreflightReport) -> None:
        super().__init__()
        self.report = report
