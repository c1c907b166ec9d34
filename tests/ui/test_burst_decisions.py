"""Bursts never answer the decision screens that take typing, nor the ones with a field.

The modals with letters for answers are covered by `test_arming_bursts`; these
are the screens where a text field takes the typing and Enter decides: the
reject reason (Enter rejects the patch) and the setup dialog (Enter writes the
key to the user config, over the one saved). Keys come as the terminal delivers
them: a chunk of one read (every key with one stamp), keys 5 ms apart, a
bracketed paste followed by Enter in the same rush. Enter decides
only pressed on its own; the rest of a burst lands in the prompt, whole. The
clock is a `ManualClock`: the test says when time passes.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input

from hello_tui.core.approval import PatchDecision
from hello_tui.screens.arming import SETTLE_SECONDS
from hello_tui.screens.reject import RejectReasonScreen
from hello_tui.screens.review import PatchReviewScreen
from tests.ui.arming_keys import ManualClock, PromptHost, deliver, keys, paste, settled
from tests.ui.engine_double import wait_until
from tests.ui.review_fixtures import stats_plan

pytestmark = pytest.mark.real_arming  # the arming rule's own times

PAUSE = 0.6  # longer than a modal's arming time


async def _typed(pilot: Any, delivered: list[Any]) -> None:
    """Hand events to the app as its driver does and let every queue empty (the keys, the
    messages they post, the prompt's type-ahead). Unlike `deliver` it does not count what
    the modal saw: a field's keys may never reach the modal on their way."""
    for event in delivered:
        pilot.app.post_message(event)
    await settled(pilot, rounds=6)


async def _alone(pilot: Any, clock: ManualClock, key: str) -> None:
    """Quiet, one key, quiet: a press meant for the screen."""
    await clock.advance(PAUSE)
    await deliver(pilot, keys(key, clock.now()))
    await clock.advance(SETTLE_SECONDS + 0.05)
    await settled(pilot)


async def _reason_screen(pilot: Any, app: PromptHost, clock: ManualClock) -> RejectReasonScreen:
    """The review, `r` pressed alone, and the reason dialog armed."""
    await app.show(pilot, PatchReviewScreen(stats_plan()))
    await _alone(pilot, clock, "r")
    await wait_until(pilot, lambda: isinstance(app.screen, RejectReasonScreen))
    await settled(pilot)
    screen = app.screen
    assert isinstance(screen, RejectReasonScreen)
    await clock.advance(PAUSE)
    await settled(pilot)
    assert screen.armed
    return screen


def _reason(screen: RejectReasonScreen) -> str:
    return screen.query_one("#reject-reason", Input).value


async def test_a_reason_with_its_enter_in_one_burst_does_not_reject():
    """`use a guard⏎and more` read at once: the Enter was typed in a rush with the words
    around it; the patch is not rejected, and what followed it does not join the reason."""
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _reason_screen(pilot, app, clock)
        await _typed(pilot, keys("use a guard\rand more", clock.now()))
        await clock.advance(PAUSE)
        assert app.answers == [] and app.screen is screen
        assert _reason(screen) == "use a guard"
        assert app.prompt.text == "and more"
        await _alone(pilot, clock, "\r")
        assert app.answers == [PatchDecision(accepted=False, reason="use a guard")]


async def test_keys_right_behind_the_enter_make_it_typing():
    """The reason typed, then Enter and a letter 5 ms apart (two reads): not an answer."""
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _reason_screen(pilot, app, clock)
        await _typed(pilot, keys("no", clock.now()))
        await clock.advance(PAUSE)
        await _typed(pilot, keys("\r", clock.now()))
        await clock.advance(0.005)
        await _typed(pilot, keys("w", clock.now()))
        await clock.advance(PAUSE)
        assert app.answers == [] and app.screen is screen
        assert _reason(screen) == "no" and app.prompt.text == "w"
        await _alone(pilot, clock, "\r")
        assert app.answers == [PatchDecision(accepted=False, reason="no")]


async def test_a_pasted_reason_and_its_enter_in_one_rush_do_not_reject():
    """A bracketed paste into the field with an Enter in the same read: the paste is the
    field's, the Enter is not an answer."""
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _reason_screen(pilot, app, clock)
        await _typed(pilot, [paste("keep the old name", clock.now())])
        await _typed(pilot, keys("\r", clock.now()))
        await clock.advance(PAUSE)
        assert app.answers == [] and app.screen is screen
        assert _reason(screen) == "keep the old name"
        await _alone(pilot, clock, "\r")
        assert app.answers == [PatchDecision(accepted=False, reason="keep the old name")]


# ---- the setup dialog: Enter writes the key to the user config ----------------------


async def _setup(pilot: Any) -> Any:
    from hello_tui.screens.setup_help import SetupHelpScreen

    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, SetupHelpScreen), timeout=15)
    await settled(pilot)
    return app.screen


def _saved_keys() -> dict[str, Any]:
    from hello_tui.userconfig import config_path, load

    path = config_path()
    return dict(load(path).get("keys", {})) if path.exists() else {}


async def test_a_key_typed_ahead_as_setup_opens_is_not_saved(tmp_path):
    """`/setup⏎` and the rest of the line typed on: those keys were typed before the
    dialog was there to see; they go to the prompt, and their Enter saves nothing."""
    from tests.ui.engine_double import fake_settings, make_app

    app = make_app(fake_settings(tmp_path, configured=False))
    clock = app.arming_clock = ManualClock()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _setup(pilot)
        await _typed(pilot, keys("sk-typedahead\r", clock.now()))
        await clock.advance(PAUSE)
        assert _saved_keys() == {} and app.screen is screen
        assert screen.query_one("#setup-key", Input).value == ""
        assert app.prompt.text == "sk-typedahead"


async def test_a_pasted_key_line_and_its_enter_do_not_save_it_in_a_rush(tmp_path):
    """Armed: a key typed (or pasted without brackets) with its newline in one read, and
    more behind it, saves nothing; the same key with Enter pressed alone does."""
    from tests.ui.engine_double import fake_settings, make_app

    app = make_app(fake_settings(tmp_path, configured=False))
    clock = app.arming_clock = ManualClock()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _setup(pilot)
        await clock.advance(PAUSE)  # it arms
        await _typed(pilot, keys("sk-burst-1234\rwhat now", clock.now()))
        await clock.advance(PAUSE)
        assert _saved_keys() == {} and app.screen is screen
        assert screen.query_one("#setup-key", Input).value == "sk-burst-1234"
        assert app.prompt.text == "what now"
        await _alone(pilot, clock, "\r")
        await wait_until(pilot, lambda: _saved_keys() != {}, timeout=15)
        assert _saved_keys() == {"openai": "sk-burst-1234"}


# ---- the pickers: Enter resumes another session, or switches the model ---------------

SESSIONS = [
    ("20260301-101500-a1b2c3", "fix the failing test in stats.py", True),
    ("20260228-170200-d4e5f6", "explain how the parser handles quoted paths", False),
    ("20260227-090000-0a0b0c", "add a --json flag to the history command", False),
]


def _picker() -> Any:
    from hello_tui.screens.picker import PickerScreen, PickItem

    items = [PickItem(value, label, current=current) for value, label, current in SESSIONS]
    return PickerScreen("Resume a session", items)


async def test_a_line_typed_on_after_resume_does_not_pick_a_session():
    """`/resume⏎parser⏎` typed in one go: the picker was not there to see `parser⏎`;
    those keys go to the prompt and no session is resumed."""
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        picker = _picker()
        await app.show(pilot, picker)
        await _typed(pilot, keys("parser\r", clock.now()))
        await clock.advance(PAUSE)
        assert app.answers == [] and app.screen is picker
        assert picker.filter_text == "" and app.prompt.text == "parser"


async def test_a_filter_and_its_enter_in_one_burst_do_not_pick():
    """Armed: `json⏎` read at once filters, but its Enter is no choice; Enter alone is."""
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        picker = _picker()
        await app.show(pilot, picker)
        await clock.advance(PAUSE)  # it arms
        await _typed(pilot, keys("json\r", clock.now()))
        await clock.advance(PAUSE)
        assert app.answers == [] and app.screen is picker
        assert picker.filter_text == "json"
        await _alone(pilot, clock, "\r")
        assert app.answers == ["20260227-090000-0a0b0c"]


# ---- the rule on its own ----------------------------------------------------------


def test_a_fields_enter_answers_only_apart_from_the_typing_around_it():
    """With a text field (takes_typing): its letters pass; an Enter read with them, or one
    followed by a key 5 ms later, is typing; an Enter alone after quiet answers."""
    from hello_tui.screens.arming import ArmingGate, KeyPress

    def watch(gate: ArmingGate, start: float, seconds: float) -> tuple[float, list[Any]]:
        now, released = start, []
        while now < start + seconds - 1e-9:
            now += 0.05
            released += gate.tick(now).release
        return now, released

    def enter(at: float) -> KeyPress:
        return KeyPress("enter", None, at)

    gate = ArmingGate(0.0, takes_typing=True)
    now, _ = watch(gate, 0.0, PAUSE)
    assert all(gate.key(KeyPress(c, c, now), now).passes for c in "no")
    rushed = gate.key(enter(now), now)  # the same read as "no"
    assert not rushed.passes and rushed.type_ahead and not gate.armed
    now, _ = watch(gate, now, PAUSE)
    assert not gate.key(enter(now), now).passes  # held: nothing decided yet
    followed = gate.key(KeyPress("w", "w", now + 0.005), now + 0.005)
    assert [p.key for p in followed.type_ahead] == ["enter", "w"] and not gate.armed
    now, _ = watch(gate, now, PAUSE)
    assert not gate.key(enter(now), now).passes
    now, released = watch(gate, now, SETTLE_SECONDS + 0.05)
    assert [p.key for p in released] == ["enter"]
