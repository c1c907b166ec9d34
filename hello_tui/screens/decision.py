"""DecisionModal: the base of every modal that decides something (apply, run, reject).

A decision must never be taken by keys the user typed for something else.
Keys typed while the agent works are often still queued when a modal
appears, and a fast typist keeps typing for a moment after it does. So a
decision modal starts *disarmed*: it swallows every key (nothing reaches its
buttons or bindings), disables its buttons (no stray click either), and hands
the typed text back to the app as `TypeAhead` messages, so what the user was
typing ends up in the prompt, whole. It arms once no key has arrived for
`arming_seconds`: each key during arming restarts the wait, so a sentence typed
over the modal never answers it. A key stamped before the modal armed is
swallowed even if it is handled after (Textual stamps each key when the
driver reads it). The arming line shows the state as it arms.
"""

from __future__ import annotations

from typing import ClassVar, TypeVar

from rich.text import Text
from textual import _time, events, on
from textual.message import Message
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Button, Input, Static

ARMING_SECONDS = 0.4
ARMING_TICK = 0.05
ARMING_BAR = 12

ResultType = TypeVar("ResultType")


class TypeAhead(Message):
    """A key a disarmed decision modal took away from itself: it belongs to the prompt."""

    def __init__(self, key: str, character: str | None) -> None:
        super().__init__()
        self.key = key
        self.character = character


class ArmingLine(Static):
    """One line: a filling bar while the modal arms, then which keys decide."""

    DEFAULT_CSS = """
    ArmingLine { height: auto; width: 100%; color: $text-muted; }
    ArmingLine.-armed { color: $success; }
    """


class DecisionModal(ModalScreen[ResultType]):
    """A modal that ignores keys until armed; subclasses say what arming enables."""

    # Nothing is focused until armed: keys go to the screen, which swallows them.
    AUTO_FOCUS: ClassVar[str | None] = ""
    arming_seconds: ClassVar[float] = ARMING_SECONDS
    ready_text = "Ready: choose with the keys shown."

    def __init__(
        self, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.armed = False
        self.swallowed_keys = 0  # keys taken away from the modal (for the status and tests)
        self._arm_at = 0.0
        self._armed_at = float("inf")
        self._arming_timer: Timer | None = None

    def arming_line(self) -> ArmingLine:
        """The widget subclasses place where the arming state should show."""
        return ArmingLine(self._arming_text(self.arming_seconds), id="arming", markup=False)

    # ---- arming --------------------------------------------------------------

    @on(events.Mount)
    def _start_arming(self) -> None:
        self._arm_at = _time.get_time() + self.arming_seconds
        self._set_controls_enabled(False)
        self.set_focus(None)
        self._arming_timer = self.set_interval(ARMING_TICK, self._tick)

    def _tick(self) -> None:
        remaining = self._arm_at - _time.get_time()
        if remaining > 0:
            self._show_arming(self._arming_text(remaining))
            return
        if self._arming_timer is not None:
            self._arming_timer.stop()
            self._arming_timer = None
        self._arm()

    def _arm(self) -> None:
        self.armed = True
        self._armed_at = _time.get_time()
        self._set_controls_enabled(True)
        line = self._arming_widget()
        if line is not None:
            line.add_class("-armed")
            line.update(self.ready_text)
        self.refresh_bindings()
        self.on_armed()

    def on_armed(self) -> None:
        """Called once the modal takes keys: focus the safe choice here."""

    def _arming_text(self, remaining: float) -> Text:
        filled = round(ARMING_BAR * (1 - max(0.0, remaining) / max(self.arming_seconds, 1e-9)))
        bar = "▰" * filled + "▱" * (ARMING_BAR - filled)
        return Text(f"{bar} Arming: keys go to the prompt for a moment")

    def _show_arming(self, text: Text) -> None:
        line = self._arming_widget()
        if line is not None:
            line.update(text)

    def _arming_widget(self) -> ArmingLine | None:
        lines = self.query(ArmingLine)
        return lines.first() if lines else None

    def _set_controls_enabled(self, enabled: bool) -> None:
        for control in self.query("Button, Input"):
            if isinstance(control, (Button, Input)):
                control.disabled = not enabled

    # ---- keys ------------------------------------------------------------------

    @on(events.Key)
    def _guard_key(self, event: events.Key) -> None:
        if self.armed and event.time >= self._armed_at:
            return
        # Typed for something else: it never reaches a binding of this modal.
        event.stop()
        event.prevent_default()
        self.swallowed_keys += 1
        if not self.armed:
            self._arm_at = max(self._arm_at, _time.get_time() + self.arming_seconds)
        self.app.post_message(TypeAhead(event.key, event.character))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Bindings fired some other way (a footer click) wait for arming too;
        # None shows them dimmed in the footer meanwhile.
        return True if self.armed else None
