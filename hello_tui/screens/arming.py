"""The arming rule of decision modals: which keys answer, and which were typed for the prompt.

Pure (no Textual): times in, verdicts out, so the rule can be checked against
any delivery pattern. `DecisionModal` feeds it the keys it sees and the ticks
of its clock, and does what the verdicts say.

What a terminal delivers: each read() of the tty gives a chunk of bytes, which
Textual's driver parses into key events stamped with the time of that read.
Under load (tmux, a slow ssh link, a busy machine) a steady typist's keys come
as bursts: a chunk of eight letters, then nothing for half a second. A stalled
UI loop queues many reads and then handles them in one rush. So neither the
stamps nor the moment a key is handled tell a deliberate press from typing on
their own. The rule asks for *watched quiet* on both sides of a key:

* Arming: the modal takes no key until it has watched `arming_seconds` pass
  with no key at all. Every key until then is type-ahead (for the prompt), and
  restarts the wait.
* A key that types (a printable character, Enter, Backspace) answers only
  alone: it is held, and takes effect once `settle_seconds` pass with no other
  typing key. If one comes first, both are type-ahead: that was typing. A key
  the modal has no use for is typing too. A burst, read in one chunk or
  handled in one rush, therefore never answers.
* Quiet counts only while it is watched. The modal ticks while it waits; a gap
  between ticks longer than `stall_seconds` means the app (and perhaps the
  thread reading the terminal) stood still, keys may still be on their way,
  and the wait starts again.
* A key stamped before the modal armed was typed while it armed: type-ahead.
* After type-ahead the modal disarms and arms again from the start.
* A bracketed paste is never an answer: type-ahead too.
* Keys that do not type (arrows, tab, page keys, escape) act at once, or, when
  they come behind a held key, in their turn after it.

A modal that `takes_typing` (a text field, once armed) lets the keys that
type into the field through; its answer key, Enter, still answers only alone:
it is held as above, and it is typing when it comes in the same rush as the
field's last key (within `burst_seconds` of it, by stamp or by when it was
handled: a paste of a line and its newline, a chunk read at once). So a
burst never submits the field, and what follows its Enter never lands in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

ARMING_SECONDS = 0.4
SETTLE_SECONDS = 0.3
STALL_SECONDS = 0.15
# Keys closer than this were not pressed one at a time: a paste, a chunk of one read.
BURST_SECONDS = 0.05

# Keys that type without a printable character of their own.
TYPING_KEYS = frozenset({"enter", "backspace"})
# The key that answers a modal that takes typing; its other typing keys are the field's.
FIELD_ANSWER_KEYS = frozenset({"enter"})


@dataclass(frozen=True)
class KeyPress:
    """A key as the driver read it: `stamp` is the time of the read."""

    key: str
    character: str | None
    stamp: float

    @property
    def types(self) -> bool:
        """Whether typing text produces this key (it may be type-ahead)."""
        if self.key in TYPING_KEYS:
            return True
        return self.character is not None and self.character.isprintable()


class Phase(Enum):
    ARMING = "arming"  # every key is type-ahead
    ARMED = "armed"  # a lone typing key answers; other keys act at once
    HOLDING = "holding"  # a typing key waits to be seen alone


@dataclass(frozen=True)
class Verdict:
    """What the modal does now: each field is empty when there is nothing to do."""

    passes: bool = False  # the key reaches the modal's bindings now
    type_ahead: tuple[KeyPress, ...] = ()  # for the prompt, in order
    release: tuple[KeyPress, ...] = ()  # held keys that now take effect, in order
    armed: bool = False  # the modal armed just now


class ArmingGate:
    """The rule's state for one modal; every method takes the clock's `now`."""

    def __init__(
        self,
        now: float,
        *,
        arming_seconds: float = ARMING_SECONDS,
        settle_seconds: float = SETTLE_SECONDS,
        stall_seconds: float = STALL_SECONDS,
        burst_seconds: float = BURST_SECONDS,
        takes_typing: bool = False,
    ) -> None:
        self.arming_seconds = arming_seconds
        self.settle_seconds = settle_seconds
        self.stall_seconds = stall_seconds
        self.burst_seconds = burst_seconds
        self.takes_typing = takes_typing
        self.phase = Phase.ARMING
        self.armed_at = float("inf")
        self.held: list[KeyPress] = []
        self.typed = False  # disarmed by typing (not just opened): the arming line says so
        self.keys_seen = 0
        self._field_typed: tuple[float, float] | None = None  # (stamp, now) of its last key
        self._quiet_since = now
        self._last_tick = now

    @property
    def armed(self) -> bool:
        return self.phase is not Phase.ARMING

    @property
    def waiting(self) -> bool:
        """Whether the modal must keep ticking (it arms, or a held key waits)."""
        return self.phase is not Phase.ARMED

    def progress(self, now: float) -> float:
        """How far the current wait is, 0..1 (1 when there is none)."""
        if self.phase is Phase.ARMED:
            return 1.0
        span = self.arming_seconds if self.phase is Phase.ARMING else self.settle_seconds
        return min(1.0, max(0.0, (now - self._quiet_since) / max(span, 1e-9)))

    # ---- inputs ----------------------------------------------------------------

    def key(self, press: KeyPress, now: float) -> Verdict:
        self.keys_seen += 1
        if self.phase is Phase.ARMING:
            self._restart(now)
            return Verdict(type_ahead=(press,))
        if self.phase is Phase.HOLDING:
            if press.types:
                # A second typing key before the first stood alone: typing.
                return self._disarm(now, (*self.held, press))
            self.held.append(press)  # waits its turn behind the held key
            return Verdict()
        if press.stamp < self.armed_at:
            # Read while the modal was still arming, handled only now.
            return self._disarm(now, (press,))
        if not press.types:
            return Verdict(passes=True)
        if self.takes_typing:
            if press.key not in FIELD_ANSWER_KEYS:
                self.field_took(press.stamp, now)
                return Verdict(passes=True)
            if self._right_after_typing(press, now):
                # In one rush with the text before it: a pasted line's newline, not an answer.
                return self._disarm(now, (press,))
        self.phase = Phase.HOLDING
        self.held = [press]
        self._quiet_since = now
        self._last_tick = now
        return Verdict()

    def paste(self, now: float) -> Verdict:
        """A bracketed paste arrived: never an answer; whatever was held was typing too."""
        self.keys_seen += 1
        return self._disarm(now, tuple(self.held))

    def field_took(self, stamp: float, now: float) -> None:
        """The text field took a key (read at `stamp`): an Enter in the same rush is typing."""
        self._field_typed = (stamp, now)

    def field_pasted(self, stamp: float, now: float) -> None:
        """The text field took a bracketed paste: an Enter in the same rush is typing."""
        self.keys_seen += 1
        self.field_took(stamp, now)

    def answered_nothing(self, now: float) -> None:
        """A released typing key had no use in the modal: the user is typing."""
        self._disarm(now, ())

    def tick(self, now: float) -> Verdict:
        """The clock ticked: arm, or release a held key, once the quiet was watched long enough."""
        if now - self._last_tick > self.stall_seconds:
            self._quiet_since = now  # nothing was watched during the gap
        self._last_tick = now
        quiet = now - self._quiet_since
        if self.phase is Phase.ARMING and quiet >= self.arming_seconds:
            self.phase = Phase.ARMED
            self.armed_at = now
            return Verdict(armed=True)
        if self.phase is Phase.HOLDING and quiet >= self.settle_seconds:
            released, self.held = tuple(self.held), []
            self.phase = Phase.ARMED
            return Verdict(release=released)
        return Verdict()

    # ---- state -----------------------------------------------------------------

    def _right_after_typing(self, press: KeyPress, now: float) -> bool:
        if self._field_typed is None:
            return False
        stamp, seen = self._field_typed
        return press.stamp - stamp < self.burst_seconds or now - seen < self.burst_seconds

    def _restart(self, now: float) -> None:
        self._quiet_since = now
        self._last_tick = now

    def _disarm(self, now: float, type_ahead: tuple[KeyPress, ...]) -> Verdict:
        self.phase = Phase.ARMING
        self.armed_at = float("inf")
        self.held = []
        self.typed = True
        self._restart(now)
        return Verdict(type_ahead=type_ahead)
