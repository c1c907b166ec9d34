"""Keys typed for the prompt never answer a decision modal.

The real agent, the real patch engine and the scripted model server: a turn
reaches the patch review or the command approval while the user types a
sentence. Keys typed before the modal appeared (still queued when it shows),
keys typed as it appears and while it arms are all swallowed by it and land
in the prompt, whole; only once armed does the modal take keys.
"""

from __future__ import annotations

from textual import events

from hello_tui.app import HelloApp
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.screens.confirm import ConfirmScreen, HighRiskConfirmScreen
from hello_tui.screens.decision import DecisionModal
from hello_tui.screens.review import PatchReviewScreen
from tests.support.scripted_model import call, settings_for_server, text, tool_calls
from tests.ui.engine_double import armed, wait_until
from tests.ui.review_fixtures import ScreenApp

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
# Every decision key of the review and the command approval is in here.
SENTENCE = "also check the readme, say yes or no, with network"
TEST_ARMING = 2.0


def _repo(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("one\n")
    return repo


def _stale_keys(text: str) -> list[events.Key]:
    """Key events stamped now, as the driver would have read them before a modal showed."""
    names = {" ": "space", "\r": "enter", ",": "comma"}
    return [events.Key(names.get(c, c), c) for c in text]


def _burst(app, text: str) -> None:
    """Keys arriving all at once, as a fast typist's (or tmux send-keys') do."""
    for event in _stale_keys(text):
        app.post_message(event)


async def test_a_sentence_typed_as_the_review_appears_does_not_answer_it(tmp_path, scripted_server):
    repo = _repo(tmp_path)
    server = scripted_server(
        [tool_calls([call("apply_patch", {"patch": PATCH})]), text("Changed a.txt.")]
    )
    app = HelloApp(settings_for_server(server, repo), preflight=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        app.prompt.load_text("change a.txt")
        _burst(app, "\r")  # Enter, then straight on typing
        _burst(app, "also ")
        # Typed before the review exists, but still queued when it appears.
        stale = _stale_keys("please ")
        await wait_until(pilot, lambda: isinstance(app.screen, PatchReviewScreen), timeout=20)
        review = app.screen
        for event in stale:
            app.post_message(event)
        # ...and typed while it appears and arms.
        _burst(app, "check the readme and say yes or no")
        await wait_until(pilot, lambda: "or no" in app.prompt.text)
        assert app.screen is review
        assert (repo / "a.txt").read_text() == "one\n"
        assert review.swallowed_keys > 0
        # Every key is in the prompt, in the order it was handled.
        assert app.prompt.text == "also please check the readme and say yes or no"
        # Armed, the review takes keys again: `a` applies.
        await armed(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: not app.turn_running, timeout=20)
        assert (repo / "a.txt").read_text() == "ONE\n"
        assert app.prompt.text == "also please check the readme and say yes or no"


async def test_keys_typed_during_a_command_approval_never_allow_it(
    tmp_path, scripted_server, monkeypatch
):
    monkeypatch.setattr(DecisionModal, "arming_seconds", TEST_ARMING)
    repo = _repo(tmp_path)
    server = scripted_server(
        [
            tool_calls([call("terminal", {"command": "touch made-by-agent"})]),
            text("It was not run."),
        ]
    )
    app = HelloApp(settings_for_server(server, repo), preflight=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        app.prompt.load_text("make a file")
        _burst(app, "\r")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandApprovalScreen), timeout=20)
        approval = app.screen
        _burst(app, SENTENCE)
        await wait_until(pilot, lambda: app.prompt.text == SENTENCE)
        assert app.screen is approval
        assert app.prompt.text == SENTENCE
        await armed(pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: not app.turn_running, timeout=20)
        assert not (repo / "made-by-agent").exists()
        assert app.prompt.text == SENTENCE


async def test_each_key_while_arming_restarts_the_wait(monkeypatch):
    monkeypatch.setattr(DecisionModal, "arming_seconds", TEST_ARMING)
    screen = ConfirmScreen("Really?", "A question.")
    app = ScreenApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        # Typing for longer than the arming time, a key every quarter of it:
        # the modal stays disarmed throughout.
        for _ in range(6):
            await pilot.press("y")
            assert not screen.armed
            await pilot.pause(TEST_ARMING / 4)
        assert app.results == []
        await armed(pilot)
        await pilot.press("y")
        await pilot.pause()
        assert app.results == [True]


async def test_a_key_stamped_before_arming_is_swallowed_even_when_handled_after():
    screen = HighRiskConfirmScreen(["deletes a file"])
    app = ScreenApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        stale = events.Key("y", "y")  # read by the driver before the modal armed
        await armed(pilot)
        app.post_message(stale)
        await pilot.pause()
        assert app.results == [] and app.screen is screen
        assert screen.swallowed_keys == 1


async def test_buttons_cannot_be_clicked_while_arming(monkeypatch):
    monkeypatch.setattr(DecisionModal, "arming_seconds", TEST_ARMING)
    screen = ConfirmScreen("Really?", "A question.")
    app = ScreenApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not screen.armed
        await pilot.click("#confirm-yes")
        await pilot.pause()
        assert app.results == []
        await armed(pilot)
        await pilot.click("#confirm-yes")
        await pilot.pause()
        assert app.results == [True]
