"""DecisionModal: the base of every modal that decides something (apply, run, reject).

A decision must never be taken by keys the user typed for something else:
keys typed while the agent works are often still queued when a modal
appears, a fast typist keeps typing for a moment after it does, and a loaded
terminal delivers steady typing in bursts. The rule that tells them apart
(`screens.arming`) needs watched quiet on both sides of an answer key: the
modal starts *disarmed* and arms once no key has come for `arming_seconds`;
armed, a typing key answers only when no other follows it within
`settle_seconds`. Everything else that was typed is handed back to the app as
`TypeAhead` messages, in order, so it ends up in the prompt, whole.

A text field of a modal that takes typing is a `FieldInput`: the rule judges
its keys before the field takes them, so an Enter in the same rush as them (a
pasted line, a burst) does not submit it, and keys right behind a held Enter
go to the prompt, not into the field.

While disarmed the modal swallows every key (nothing reaches its buttons or
bindings) and disables its buttons (no stray click either). A held key is
swallowed too and, once it stood alone, takes effect through the modal's
bindings as if just pressed. The arming line says which state the modal is in.

The clock is injectable (`clock=`, else the app's `arming_clock`, else
Textual's own, the one every key is stamped with), so tests step time
themselves instead of racing a real timer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable

from rich.text import Text
from textual import _time, events, on
from textual.message import Message
from textual.message_pump import MessagePump
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from hello_tui.screens.arming import (
    ARMING_SECONDS,
    BURST_SECONDS,
    SETTLE_SECONDS,
    ArmingGate,
    KeyPress,
    Phase,
    Verdict,
)

ARMING_TICK = 0.05
ARMING_BAR = 12

ResultType = TypeVar("ResultType")


class Ticker(Protocol):
    def stop(self) -> None: ...


@runtime_checkable
class ArmingClock(Protocol):
    """Where a decision modal reads the time and gets its ticks from."""

    def now(self) -> float: ...

    def every(self, owner: MessagePump, seconds: float, callback: Callable[[], Any]) -> Ticker:
        """Call `callback` every `seconds` on `owner`'s message queue (in turn with its keys)."""
        ...


class SystemClock:
    """Textual's clock: the one the driver stamps each key with when it reads it."""

    def now(self) -> float:
        return _time.get_time()

    def every(self, owner: MessagePump, seconds: float, callback: Callable[[], Any]) -> Ticker:
        return owner.set_interval(seconds, lambda: owner.call_later(callback))


SYSTEM_CLOCK = SystemClock()


class TypeAhead(Message):
    """Typing a decision modal took away from itself: it belongs to the prompt.

    A key (`key`, `character`), or a bracketed paste (`pasted`, the text).
    """

    def __init__(self, key: str, character: str | None, pasted: str | None = None) -> None:
        super().__init__()
        self.key = key
        self.character = character
        self.pasted = pasted


class ArmingLine(Static):
    """One line: a filling bar while the modal arms or holds a key, then which keys decide."""

    DEFAULT_CSS = """
    ArmingLine { height: auto; width: 100%; color: $text-muted; }
    ArmingLine.-armed { color: $success; }
    """


class FieldInput(Input):
    """A text field of a decision modal that takes typing: the modal's rule judges each key
    here, before the field takes it, in the order the field gets them (judged only on
    reaching the modal, the keys queued behind an Enter would be typed in first)."""

    async def _on_key(self, event: events.Key) -> None:
        # Input's own handler runs after this one unless the rule stops the key.
        modal = self.screen
        if isinstance(modal, DecisionModal):
            await modal.judge_key(event)

    def _on_paste(self, event: events.Paste) -> None:
        modal = self.screen
        if not isinstance(modal, DecisionModal):
            return
        if modal.holding:
            # Behind a held Enter: not the field's; it bubbles to the modal, which makes it
            # typing (and Input's handler does not take it).
            event.prevent_default()
            return
        modal.gate.field_pasted(event.time, modal.clock.now())


class DecisionModal(ModalScreen[ResultType]):
    """A modal whose keys count only when deliberate; subclasses say what arming enables."""

    # Nothing is focused until armed: keys go to the screen, which swallows them.
    AUTO_FOCUS: ClassVar[str | None] = ""
    arming_seconds: ClassVar[float] = ARMING_SECONDS
    settle_seconds: ClassVar[float] = SETTLE_SECONDS
    burst_seconds: ClassVar[float] = BURST_SECONDS
    # A text field (a FieldInput: the reject reason) takes typing once armed; its Enter
    # answers only alone.
    takes_typing: ClassVar[bool] = False
    ready_text = "Ready: choose with the keys shown."
    # Whether the app calls the user back (a desktop notification) when it opens unseen:
    # not for a dialog only the user's own command opens.
    calls_back: ClassVar[bool] = True

    def __init__(
        self,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        *,
        clock: ArmingClock | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.swallowed_keys = 0  # keys handed to the prompt (for the status and tests)
        self._clock = clock
        self._gate: ArmingGate | None = None
        self._ticker: Ticker | None = None
        self._shown = ""
        self._shown_armed = False
        self._judged: events.Key | None = None

    @property
    def clock(self) -> ArmingClock:
        if self._clock is None:
            found = getattr(self.app, "arming_clock", None)
            self._clock = found if isinstance(found, ArmingClock) else SYSTEM_CLOCK
        return self._clock

    @property
    def gate(self) -> ArmingGate:
        if self._gate is None:
            self._gate = ArmingGate(
                self.clock.now(),
                arming_seconds=self.arming_seconds,
                settle_seconds=self.settle_seconds,
                burst_seconds=self.burst_seconds,
                takes_typing=self.takes_typing,
            )
        return self._gate

    @property
    def armed(self) -> bool:
        """Whether the modal takes keys (a lone typing key may still be waiting to count)."""
        return self._gate is not None and self._gate.armed

    @property
    def holding(self) -> bool:
        """Whether a key waits to be seen alone before it takes effect."""
        return self._gate is not None and self._gate.phase is Phase.HOLDING

    def arming_line(self) -> ArmingLine:
        """The widget subclasses place where the arming state should show."""
        return ArmingLine(self._arming_text(), id="arming", markup=False)

    def on_armed(self) -> None:
        """Called each time the modal takes keys: focus the safe choice here."""

    # ---- the clock -------------------------------------------------------------

    @on(events.Mount)
    def _start_arming(self) -> None:
        self._set_controls_enabled(False)
        self.set_focus(None)
        self._keep_ticking()
        self._show_state()

    @on(events.Unmount)
    def _stop_ticking(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def _keep_ticking(self) -> None:
        if self._ticker is None and self.gate.waiting:
            self._ticker = self.clock.every(self, ARMING_TICK, self._tick)

    async def _tick(self) -> None:
        if self._ticker is None:
            return  # a tick already queued when the ticking stopped
        verdict = self.gate.tick(self.clock.now())
        if not self.gate.waiting:
            self._stop_ticking()
        await self._follow(verdict)

    # ---- keys ------------------------------------------------------------------

    @on(events.Key)
    async def _guard_key(self, event: events.Key) -> None:
        if event is not self._judged:  # a key a FieldInput had judged bubbles on to here
            await self.judge_key(event)

    async def judge_key(self, event: events.Key) -> bool:
        """Whether the key goes on (to the bindings, or into the field); if not, it is
        stopped and goes where the rule says."""
        self._judged = event
        press = KeyPress(event.key, event.character, event.time)
        verdict = self.gate.key(press, self.clock.now())
        if verdict.passes:
            return True
        # Typed for something else, or waiting to be seen alone: not for the bindings now.
        event.stop()
        event.prevent_default()
        await self._follow(verdict)
        return False

    @on(events.Paste)
    async def _guard_paste(self, event: events.Paste) -> None:
        # Never an answer. (A text field that takes typing has the paste before it bubbles here.)
        event.stop()
        event.prevent_default()
        await self._follow(self.gate.paste(self.clock.now()))
        self.swallowed_keys += 1
        self.app.post_message(TypeAhead("paste", None, pasted=event.text))

    async def _follow(self, verdict: Verdict) -> None:
        """Do what the rule decided, then show the state it left the modal in."""
        self._to_prompt(verdict.type_ahead)
        if verdict.release:
            await self._release(verdict.release)
        if self.armed != self._shown_armed:
            self._set_armed(self.armed)
        self._keep_ticking()
        self._show_state()

    async def _release(self, keys: tuple[KeyPress, ...]) -> None:
        """Held keys stood alone: each takes effect through the bindings, in order."""
        for index, press in enumerate(keys):
            if self.app.screen is not self:
                return  # answered, or a dialog of its own opened: the rest had this modal in mind
            if await self._act(press) or not press.types:
                continue
            # A typing key this modal has no use for: the user is typing to the prompt.
            self.gate.answered_nothing(self.clock.now())
            self._to_prompt(keys[index:])
            return

    async def _act(self, press: KeyPress) -> bool:
        active = self.active_bindings.get(press.key)
        if active is None or not active.enabled:
            return False
        return await self.app.run_action(active.binding.action, active.node)

    def _to_prompt(self, keys: tuple[KeyPress, ...]) -> None:
        for press in keys:
            self.swallowed_keys += 1
            self.app.post_message(TypeAhead(press.key, press.character))

    # ---- showing the state ----------------------------------------------------

    def _set_armed(self, armed: bool) -> None:
        self._shown_armed = armed
        self._set_controls_enabled(armed)
        line = self._arming_widget()
        if line is not None:
            line.set_class(armed, "-armed")
        self.refresh_bindings()
        if armed:
            self.on_armed()
        else:
            self.set_focus(None)

    def _show_state(self) -> None:
        text = self._arming_text()
        if text.plain != self._shown:
            # Only the bar filling in cannot change how the line wraps: no re-layout of the
            # whole screen for it, twenty times a second.
            words_changed = text.plain[ARMING_BAR:] != self._shown[ARMING_BAR:]
            self._shown = text.plain
            line = self._arming_widget()
            if line is not None:
                line.update(text, layout=words_changed)

    def _arming_text(self) -> Text:
        gate = self._gate
        if gate is not None and gate.phase is Phase.ARMED:
            return Text(self.ready_text)
        progress = 0.0 if gate is None else gate.progress(self.clock.now())
        filled = round(ARMING_BAR * progress)
        bar = "▰" * filled + "▱" * (ARMING_BAR - filled)
        if gate is not None and gate.phase is Phase.HOLDING:
            held = gate.held[0]
            label = held.character if held.character and held.character.isprintable() else held.key
            label = "space" if label == " " else label
            return Text(
                f"{bar} {label}: it counts if no other key follows (typing goes to the prompt)"
            )
        if gate is not None and gate.typed:
            return Text(f"{bar} Typing: keys go to the prompt until they stop for a moment")
        return Text(f"{bar} Arming: keys go to the prompt for a moment")

    def _arming_widget(self) -> ArmingLine | None:
        lines = self.query(ArmingLine)
        return lines.first() if lines else None

    def _set_controls_enabled(self, enabled: bool) -> None:
        for control in self.query("Button, Input"):
            if isinstance(control, (Button, Input)):
                control.disabled = not enabled

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Bindings fired some other way (a footer click) wait for arming too;
        # None shows them dimmed in the footer meanwhile.
        return True if self.armed else None
