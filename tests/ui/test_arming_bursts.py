"""Typing never answers a decision modal, however the terminal delivers it.

Each modal (patch review, command approval, MCP tool call and server start,
confirm) appears in an app with a prompt while keys arrive: in bursts of
eight with pauses between (tmux under load, a slow ssh link), as a steady
stream every 55 ms with the UI loop stalled for 1.5 s in the middle, and as
bracketed pastes full of answer letters. The modal must never answer, and
every letter must land in the prompt, in order. Then a lone, deliberate key
still answers. The clock is a `ManualClock`: the test says when time passes
and whether the app watched it pass.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest

from hello_tui.core.approval import PatchDecision, ServerStartRequest, ToolCallRequest
from hello_tui.screens.arming import SETTLE_SECONDS
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.screens.confirm import ConfirmScreen, HighRiskConfirmScreen
from hello_tui.screens.decision import ARMING_BAR, ArmingLine, DecisionModal
from hello_tui.screens.mcp_approval import ServerApprovalScreen, ToolApprovalScreen
from hello_tui.screens.review import PatchReviewScreen
from tests.ui.arming_keys import ManualClock, PromptHost, deliver, keys, paste
from tests.ui.review_fixtures import stats_plan

pytestmark = pytest.mark.real_arming  # the arming rule's own times

CALL = ToolCallRequest("time", "get_current_time", {"timezone": "Europe/Oslo"}, "What time.")
START = ServerStartRequest("time", ".mcp.json", "uvx mcp-server-time", ("TZ",))

# Eight letters a read; most begin with a key that answers one of the modals.
CHUNKS = [
    "also che",
    "ck the r",
    "yes, run",
    "all test",
    "n times ",
    "with the",
    "wifi on,",
    "reply ok",
    " then a.",
]
STREAM = "yes, rerun all the tests with network access and say when it is done, no rush"
PAUSE = 0.6  # between bursts: longer than the modal's arming time


def _modals() -> dict[str, tuple[Callable[[], DecisionModal[Any]], str, Any]]:
    """name -> (make the modal, a deliberate answer key, the answer it gives)."""
    return {
        "review": (lambda: PatchReviewScreen(stats_plan()), "a", PatchDecision(accepted=True)),
        "command": (lambda: CommandApprovalScreen("make test", "it runs code"), "y", "once"),
        "mcp-tool": (lambda: ToolApprovalScreen(CALL), "a", "session"),
        "mcp-server": (lambda: ServerApprovalScreen(START), "r", "always"),
        "confirm": (lambda: ConfirmScreen("Really?", "A question."), "y", True),
        "high-risk": (lambda: HighRiskConfirmScreen(["deletes a file"]), "y", True),
    }


MAIN_MODALS = ["review", "command", "mcp-tool", "confirm"]


def _nothing_decided(app: PromptHost, modal: DecisionModal[Any]) -> None:
    assert app.answers == []
    assert app.screen is modal, "a dialog opened, or the modal closed"
    if isinstance(modal, PatchReviewScreen):
        assert all(not declined for declined in modal.declined.values()), "a hunk was toggled"


async def _answer_deliberately(pilot: Any, clock: ManualClock, key: str) -> None:
    """Quiet, one key, quiet: a press meant for the modal."""
    await clock.advance(PAUSE)
    assert pilot.app.screen.armed
    await deliver(pilot, keys(key, clock.now()))
    await clock.advance(SETTLE_SECONDS + 0.05)
    for _ in range(3):
        await pilot.pause()


@pytest.mark.parametrize("name", list(_modals()))
async def test_bursts_across_the_moment_the_modal_appears_never_answer_it(name):
    make, key, answer = _modals()[name]
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await deliver(pilot, keys(CHUNKS[0], clock.now()))  # into the prompt directly
        await clock.advance(PAUSE)
        queued = keys(CHUNKS[1], clock.now())  # read before the modal showed, handled after
        modal = make()
        await app.show(pilot, modal)
        await deliver(pilot, queued)
        for chunk in CHUNKS[2:]:
            await clock.advance(PAUSE)  # the modal arms in the pause...
            assert modal.armed
            await deliver(pilot, keys(chunk, clock.now()))  # ...and the next burst comes
            _nothing_decided(app, modal)
        assert app.prompt.text == "".join(CHUNKS)
        assert "Typing" in str(modal.query_one("#arming").render())
        await _answer_deliberately(pilot, clock, key)
        assert app.answers == [answer]
        assert app.prompt.text == "".join(CHUNKS)


@pytest.mark.parametrize("order", ["late-tick-first", "queued-keys-first"])
@pytest.mark.parametrize("reader", ["driver-kept-reading", "driver-starved"])
@pytest.mark.parametrize("before", ["typing", "a-pause"])
@pytest.mark.parametrize("name", MAIN_MODALS)
async def test_a_steady_stream_through_a_stalled_loop_never_answers(name, before, reader, order):
    """Keys every 55 ms; right after the modal's answer key the loop stalls for 1.5 s while
    27 more keys are typed. With "a-pause" the user paused before that key, long enough
    for the modal to arm: the key is held when the loop stalls."""
    make, key, answer = _modals()[name]
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        modal = make()
        held_at = STREAM.index(key, 10)
        position = 0
        while position < len(STREAM):
            if position == 6:
                await app.show(pilot, modal)
            if position == held_at and before == "a-pause":
                await clock.advance(PAUSE)
                assert modal.armed
            if position == held_at + 1:
                start = clock.now()
                typed = STREAM[position : position + 27]
                clock.stall(len(typed) * 0.055)
                if reader == "driver-kept-reading":
                    queued = [k for i, c in enumerate(typed) for k in keys(c, start + i * 0.055)]
                else:  # the whole process stood still: one read at the end
                    queued = keys(typed, clock.now())
                if order == "late-tick-first":
                    await clock.tick()
                    await deliver(pilot, queued)
                else:
                    await deliver(pilot, queued)
                    await clock.tick()
                position += len(typed)
                continue
            await deliver(pilot, keys(STREAM[position], clock.now()))
            await clock.advance(0.055)
            position += 1
            if app.screen is modal:
                _nothing_decided(app, modal)
        _nothing_decided(app, modal)
        assert app.prompt.text == STREAM
        await _answer_deliberately(pilot, clock, key)
        assert app.answers == [answer]


@pytest.mark.parametrize("name", MAIN_MODALS)
async def test_keys_read_while_it_armed_but_handled_after_are_type_ahead(name):
    """The app's queue was busy: the keys were read (stamped) while the modal armed and
    reach it only once it has armed, its own ticks having gone on meanwhile."""
    make, key, answer = _modals()[name]
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        modal = make()
        await app.show(pilot, modal)
        await clock.advance(0.1)
        late = keys(key, clock.now())
        await clock.advance(PAUSE)
        assert modal.armed
        await deliver(pilot, late)
        await clock.advance(PAUSE)
        _nothing_decided(app, modal)
        assert app.prompt.text == key
        await _answer_deliberately(pilot, clock, key)
        assert app.answers == [answer]


@pytest.mark.parametrize("name", MAIN_MODALS)
async def test_a_paste_never_answers_and_lands_in_the_prompt(name):
    make, key, answer = _modals()[name]
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        modal = make()
        await app.show(pilot, modal)
        await deliver(pilot, [paste("yes, and run all\n", clock.now())])  # while it arms
        await clock.advance(PAUSE)
        assert modal.armed
        await deliver(pilot, [paste("n r a y w ", clock.now())])  # armed: still not an answer
        _nothing_decided(app, modal)
        await clock.advance(PAUSE)
        # A key, and a paste before it stood alone: it was typing too.
        await deliver(pilot, keys(key, clock.now()))
        await clock.advance(SETTLE_SECONDS / 3)
        await deliver(pilot, [paste(" rest", clock.now())])
        await clock.advance(PAUSE)
        _nothing_decided(app, modal)
        assert app.prompt.text == f"yes, and run all\nn r a y w {key} rest"
        await _answer_deliberately(pilot, clock, key)
        assert app.answers == [answer]


async def test_keys_behind_a_held_key_act_in_their_turn():
    """space, ↓ quickly, space: the review toggles the first hunk, moves on, toggles the second."""
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(120, 40)) as pilot:
        modal = PatchReviewScreen(stats_plan())
        await app.show(pilot, modal)
        await clock.advance(PAUSE)
        await deliver(pilot, keys(" ", clock.now()) + [_arrow("down", clock.now())])
        assert modal.holding and modal.declined["stats.py"] == set()
        await clock.advance(SETTLE_SECONDS + 0.05)
        await deliver(pilot, keys(" ", clock.now()))
        await clock.advance(SETTLE_SECONDS + 0.05)
        await pilot.pause()
        first, second = (h.index for h in stats_plan().files[0].hunks)
        assert modal.declined["stats.py"] == {first, second}
        assert app.prompt.text == ""


async def test_a_key_the_modal_has_no_use_for_is_typing():
    """A lone `x` answers nothing: it goes to the prompt, and the modal arms again."""
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = CommandApprovalScreen("make test", "it runs code")
        await app.show(pilot, modal)
        await clock.advance(PAUSE)
        await deliver(pilot, keys("x", clock.now()))
        await clock.advance(SETTLE_SECONDS + 0.05)
        await pilot.pause()
        assert app.prompt.text == "x" and not modal.armed
        await _answer_deliberately(pilot, clock, "n")
        assert app.answers == ["deny"]


async def test_a_held_key_says_so_on_the_arming_line():
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(100, 30)) as pilot:
        modal = CommandApprovalScreen("make test", "it runs code")
        await app.show(pilot, modal)
        line = modal.query_one("#arming")
        assert "Arming" in str(line.render())
        await clock.advance(PAUSE)
        assert str(line.render()) == modal.ready_text
        await deliver(pilot, keys("y", clock.now()))
        await pilot.pause()
        assert "y: it counts if no other key follows" in str(line.render())
        await deliver(pilot, keys("e", clock.now()))
        await pilot.pause()
        assert "Typing: keys go to the prompt" in str(line.render())
        assert app.answers == [] and app.prompt.text == "ye"


def _arrow(name: str, stamp: float) -> Any:
    from textual import events

    event = events.Key(name, None)
    event.time = stamp
    return event


async def test_the_bar_filling_in_does_not_lay_the_screen_out_again(monkeypatch):
    """Twenty ticks a second fill the bar: only a change of words may re-layout the
    screen (the line may wrap differently); the bar alone repaints the one line."""
    layouts: list[tuple[str, bool]] = []
    update = ArmingLine.update

    def recorded(line: ArmingLine, content: Any = "", *, layout: bool = True) -> None:
        layouts.append((str(content), layout))
        update(line, content, layout=layout)

    monkeypatch.setattr(ArmingLine, "update", recorded)
    clock = ManualClock()
    app = PromptHost(clock)
    async with app.run_test(size=(60, 30)) as pilot:
        await app.show(pilot, CommandApprovalScreen("make test", "it runs code"))
        await clock.advance(PAUSE)
        await deliver(pilot, keys("x", clock.now()))  # held, then typing: new words
        await clock.advance(PAUSE)
    assert len(layouts) > 8, "the bar was not shown filling in"
    for (before, _), (after, layout) in pairwise(layouts):
        assert layout == (before[ARMING_BAR:] != after[ARMING_BAR:]), (before, after)
    assert [layout for _, layout in layouts].count(True) >= 2  # armed, holding, typing...
