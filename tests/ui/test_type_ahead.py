"""Keys typed for the prompt never answer a decision modal.

The real agent, the real patch engine and the scripted model server: a turn
reaches the patch review or the command approval while the user types. Keys
typed before the modal appeared (still queued when it shows), keys typed as it
appears and while it arms, and bursts after it armed (the keys a loaded
terminal delivers eight at a time) all land in the prompt, whole; only a lone
key after a moment of quiet answers. The arming clock is a `ManualClock`, so
nothing races a real timer.
"""

from __future__ import annotations

import pytest

from hello_tui.app import HelloApp
from hello_tui.screens.arming import SETTLE_SECONDS
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.screens.confirm import ConfirmScreen, HighRiskConfirmScreen
from hello_tui.screens.review import PatchReviewScreen
from tests.support.scripted_model import call, settings_for_server, text, tool_calls
from tests.ui.arming_keys import ManualClock, deliver, keys, modal_shown
from tests.ui.engine_double import wait_until
from tests.ui.review_fixtures import ScreenApp

pytestmark = pytest.mark.real_arming  # the arming rule's own times

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
# Every decision key of the review and the command approval is in here.
SENTENCE = "also check the readme, say yes or no, with network"
PAUSE = 0.6


def _repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("one\n")
    return repo


def _bursts(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def _deliberately(pilot, clock: ManualClock, key: str) -> None:
    await clock.advance(PAUSE)
    await deliver(pilot, keys(key, clock.now()))
    await clock.advance(SETTLE_SECONDS + 0.05)


async def test_a_sentence_typed_as_the_review_appears_does_not_answer_it(tmp_path, scripted_server):
    repo = _repo(tmp_path)
    server = scripted_server(
        [tool_calls([call("apply_patch", {"patch": PATCH})]), text("Changed a.txt.")]
    )
    app = HelloApp(settings_for_server(server, repo), preflight=False)
    clock = app.arming_clock = ManualClock()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        app.prompt.load_text("change a.txt")
        await deliver(pilot, keys("\ralso ", clock.now()))  # Enter, then straight on typing
        # Typed before the review exists, but still queued when it appears.
        stale = keys("please ", clock.now())
        await modal_shown(pilot, PatchReviewScreen, timeout=20)
        review = app.screen
        await deliver(pilot, stale)
        # ...then typed while it arms, and in bursts with pauses in which it arms.
        for burst in _bursts("check the readme and say yes or no"):
            await deliver(pilot, keys(burst, clock.now()))
            await clock.advance(PAUSE)
        assert app.screen is review
        assert (repo / "a.txt").read_text() == "one\n"
        assert review.swallowed_keys > 0
        assert review.declined == {"a.txt": set()}
        # Every key is in the prompt, in order.
        assert app.prompt.text == "also please check the readme and say yes or no"
        # A lone `a` after a moment of quiet applies.
        await _deliberately(pilot, clock, "a")
        await wait_until(pilot, lambda: not app.turn_running, timeout=20)
        assert (repo / "a.txt").read_text() == "ONE\n"
        assert app.prompt.text == "also please check the readme and say yes or no"


async def test_bursts_typed_during_a_command_approval_never_allow_it(tmp_path, scripted_server):
    """Eight letters at once, then 0.6 s of nothing, and so on: each burst comes after the
    modal armed, and none of them answers it."""
    repo = _repo(tmp_path)
    server = scripted_server(
        [
            tool_calls([call("terminal", {"command": "touch made-by-agent"})]),
            text("It was not run."),
        ]
    )
    app = HelloApp(settings_for_server(server, repo), preflight=False)
    clock = app.arming_clock = ManualClock()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        app.prompt.load_text("make a file")
        await deliver(pilot, keys("\r", clock.now()))
        await modal_shown(pilot, CommandApprovalScreen, timeout=20)
        approval = app.screen
        for burst in _bursts(SENTENCE):
            await clock.advance(PAUSE)
            assert approval.armed
            await deliver(pilot, keys(burst, clock.now()))
            assert app.screen is approval
        assert app.prompt.text == SENTENCE
        await _deliberately(pilot, clock, "n")
        await wait_until(pilot, lambda: not app.turn_running, timeout=20)
        assert not (repo / "made-by-agent").exists()
        assert app.prompt.text == SENTENCE


async def test_each_key_while_arming_restarts_the_wait():
    screen = ConfirmScreen("Really?", "A question.")
    app = ScreenApp(screen)
    clock = app.arming_clock = ManualClock()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        # Typing for longer than the arming time, a key every quarter of it:
        # the modal stays disarmed throughout.
        for _ in range(6):
            await deliver(pilot, keys("y", clock.now()))
            assert not screen.armed
            await clock.advance(screen.arming_seconds / 4)
        assert app.results == []
        await _deliberately(pilot, clock, "y")
        assert app.results == [True]


async def test_a_key_stamped_before_arming_is_swallowed_even_when_handled_after():
    screen = HighRiskConfirmScreen(["deletes a file"])
    app = ScreenApp(screen)
    clock = app.arming_clock = ManualClock()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        stale = keys("y", clock.now())  # read by the driver before the modal armed
        await clock.advance(PAUSE)
        assert screen.armed
        await deliver(pilot, stale)
        await clock.advance(PAUSE)
        assert app.results == [] and app.screen is screen
        assert screen.swallowed_keys == 1


async def test_buttons_cannot_be_clicked_while_arming():
    screen = ConfirmScreen("Really?", "A question.")
    app = ScreenApp(screen)
    clock = app.arming_clock = ManualClock()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not screen.armed
        await pilot.click("#confirm-yes")
        await pilot.pause()
        assert app.results == []
        await clock.advance(PAUSE)
        await pilot.pause()
        await pilot.click("#confirm-yes")
        await pilot.pause()
        assert app.results == [True]
