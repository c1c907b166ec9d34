"""The arming rule on its own (no Textual): properties over any delivery pattern.

A delivery pattern is a sequence of steps: time watched passing (ticks), time
passing unwatched (a stall), and reads of the terminal (a chunk of keys with
one stamp, handled at once). Whatever the pattern, every key is accounted for
exactly once and in order (taken by the modal, or handed to the prompt), and
a typing key takes effect only when it stood alone: watched quiet before it
long enough to arm, and watched quiet after it for the settle time.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from hello_tui.screens.arming import (
    ARMING_SECONDS,
    SETTLE_SECONDS,
    STALL_SECONDS,
    ArmingGate,
    KeyPress,
    Phase,
)

TICK = 0.05
LETTERS = "yanrw e,"


@dataclass(frozen=True)
class Watch:
    seconds: float  # ticks every TICK


@dataclass(frozen=True)
class Stall:
    seconds: float  # no tick


@dataclass(frozen=True)
class Read:
    text: str  # one chunk: every key has the same stamp
    lag: float  # how long before the read the keys were typed (stamps in the past)


steps = st.one_of(
    st.builds(Watch, st.floats(0.0, 1.0)),
    st.builds(Stall, st.floats(0.0, 2.0)),
    st.builds(Read, st.text(LETTERS, min_size=1, max_size=8), st.floats(0.0, 0.5)),
)


class Run:
    """Plays a pattern into a gate, recording where each key went."""

    def __init__(self) -> None:
        self.now = 100.0
        self.gate = ArmingGate(self.now)
        self.sent: list[KeyPress] = []
        self.to_prompt: list[KeyPress] = []
        self.taken: list[KeyPress] = []
        self.order: list[KeyPress] = []  # taken or forwarded, as it happened

    def watch(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now + TICK <= end:
            self.now += TICK
            self._follow(self.gate.tick(self.now))
        self.now = end

    def stall(self, seconds: float) -> None:
        self.now += seconds

    def read(self, text: str, lag: float = 0.0) -> None:
        for character in text:
            press = KeyPress("space" if character == " " else character, character, self.now - lag)
            self.sent.append(press)
            verdict = self.gate.key(press, self.now)
            if verdict.passes:
                self.taken.append(press)
                self.order.append(press)
            self._follow(verdict)

    def _follow(self, verdict) -> None:
        self.to_prompt.extend(verdict.type_ahead)
        self.order.extend(verdict.type_ahead)
        self.taken.extend(verdict.release)
        self.order.extend(verdict.release)

    def play(self, pattern) -> None:
        for step in pattern:
            if isinstance(step, Watch):
                self.watch(step.seconds)
            elif isinstance(step, Stall):
                self.stall(step.seconds)
            else:
                self.read(step.text, step.lag)


@settings(max_examples=400, deadline=None)
@given(st.lists(steps, max_size=30))
def test_every_key_is_accounted_for_once_and_in_order(pattern):
    run = Run()
    run.play(pattern)
    run.watch(SETTLE_SECONDS + 2 * TICK)  # whatever is held settles
    assert run.gate.phase is not Phase.HOLDING
    assert run.order == run.sent
    assert sorted(map(id, run.taken + run.to_prompt)) == sorted(map(id, run.sent))


@settings(max_examples=400, deadline=None)
@given(st.lists(steps, max_size=30), st.lists(steps, max_size=30))
def test_keys_read_in_one_chunk_never_answer(before, after):
    """Keys read together (one stamp) are typing, whatever came before and after."""
    run = Run()
    run.play(before)
    start = len(run.sent)
    run.read("ya")
    chunk = run.sent[start:]
    run.play(after)
    run.watch(SETTLE_SECONDS + 2 * TICK)
    assert not any(p is press for p in run.taken for press in chunk)
    assert all(any(p is press for p in run.to_prompt) for press in chunk)


@settings(max_examples=300, deadline=None)
@given(
    gaps=st.lists(st.floats(0.0, SETTLE_SECONDS - TICK), min_size=2, max_size=40),
    stall_at=st.integers(0, 40),
    stall=st.floats(0.0, 2.0),
)
def test_a_steady_stream_never_answers_even_through_a_stall(gaps, stall_at, stall):
    """Typing keys never further apart than the settle time, with the loop stalled once."""
    run = Run()
    for index, gap in enumerate(gaps):
        run.read("y")
        if index == stall_at:
            run.stall(stall)
            run.read("a")  # typed during the stall, read when it ended
        run.watch(gap)
    # (The last key stands alone only if the stream stops: it is not watched settling.)
    assert run.taken == []


def test_a_lone_key_after_quiet_answers():
    run = Run()
    run.watch(ARMING_SECONDS + TICK)
    assert run.gate.armed
    run.read("y")
    assert run.gate.phase is Phase.HOLDING and run.taken == []
    run.watch(SETTLE_SECONDS + TICK)
    assert [p.character for p in run.taken] == ["y"] and run.to_prompt == []


def test_quiet_during_a_stall_does_not_count():
    """A held key, then a stall as long as you like: the wait starts again after it."""
    run = Run()
    run.watch(ARMING_SECONDS + TICK)
    run.read("y")
    run.stall(5.0)
    run.watch(TICK)  # the late tick: nothing was watched during the stall
    assert run.gate.phase is Phase.HOLDING and run.taken == []
    run.read("es")  # typed during the stall, read only now
    assert run.taken == [] and [p.character for p in run.to_prompt] == ["y", "e", "s"]


def test_arming_waits_for_watched_quiet():
    run = Run()
    run.watch(ARMING_SECONDS / 2)
    run.stall(ARMING_SECONDS)
    run.watch(TICK)
    assert not run.gate.armed  # the stall's time was not watched
    run.watch(ARMING_SECONDS + TICK)
    assert run.gate.armed


def test_ticks_late_by_less_than_the_stall_limit_still_count():
    run = Run()
    late = (STALL_SECONDS + TICK) / 2
    while not run.gate.armed:
        run.stall(late)
        run.watch(0.0)
        run._follow(run.gate.tick(run.now))
    assert run.now - 100.0 < ARMING_SECONDS + 2 * late


def test_a_text_field_takes_typing_once_armed():
    gate = ArmingGate(0.0, takes_typing=True)
    assert gate.key(KeyPress("a", "a", 0.0), 0.0).type_ahead  # arming: to the prompt
    now = 0.0
    while not gate.armed:
        now += TICK
        gate.tick(now)
    assert gate.key(KeyPress("b", "b", now), now).passes
    assert gate.paste(now).type_ahead == () and not gate.armed  # a paste disarms all the same


def test_a_key_read_while_it_armed_but_handled_after_is_type_ahead():
    run = Run()
    run.watch(ARMING_SECONDS + TICK)
    assert run.gate.armed
    run.read("y", lag=ARMING_SECONDS / 2)  # stamped before the gate armed
    assert run.taken == [] and [p.character for p in run.to_prompt] == ["y"]
    assert not run.gate.armed  # it arms again from the start
