"""Snapshots at 80x24 and 120x40 of a decision modal while it arms, the reject-reason dialog,
and the queue bar holding two messages sent during a turn.

The arming state is made deterministic by giving the modal an arming time far longer
than the test: it is photographed in its first, disarmed state (empty bar, buttons
disabled, nothing focused), which is what a user sees in the first moments.
"""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Input

from hello_tui.core import events as ev
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.screens.reject import RejectReasonScreen
from tests.ui.engine_double import Script, armed, fake_settings, make_app, wait_until

SIZES = [(120, 40), (80, 24)]


async def _ready(pilot) -> None:
    app = pilot.app
    await wait_until(pilot, lambda: app.engine is not None, timeout=15)
    app.prompt.cursor_blink = False


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_command_approval_while_arming(snap_compare, tmp_path, size):
    app = make_app(fake_settings(tmp_path))

    async def run_before(pilot) -> None:
        await _ready(pilot)
        screen = CommandApprovalScreen(
            "pip install -e .", "it is not a read-only command (it installs packages)"
        )
        screen.arming_seconds = 3600.0  # still arming when the snapshot is taken
        app.push_screen(screen)
        await wait_until(pilot, lambda: app.screen is screen and screen.is_mounted)
        await pilot.press(*"readme")  # type-ahead: swallowed, and it keeps the modal arming
        await pilot.pause(0.1)
        assert not screen.armed and screen.swallowed_keys == 6

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_reject_reason_dialog(snap_compare, tmp_path, size):
    app = make_app(fake_settings(tmp_path))

    async def run_before(pilot) -> None:
        await _ready(pilot)
        screen = RejectReasonScreen()
        app.push_screen(screen)
        await armed(pilot)
        field = screen.query_one("#reject-reason", Input)
        field.cursor_blink = False
        assert app.focused is field
        await pilot.press(*"keep the public API; fix mean() only")
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_queue_bar_with_two_messages(snap_compare, tmp_path, size):
    never = asyncio.Event()
    turn = [
        ev.StepStarted(step=1, max_steps=20),
        ev.ToolCallStarted(step=1, call_id="t", tool="terminal", arguments={"command": "pytest"}),
        never,
    ]
    app = make_app(fake_settings(tmp_path), Script([turn]))

    async def run_before(pilot) -> None:
        await _ready(pilot)
        await pilot.press(*"fix the failing test", "enter")
        await wait_until(pilot, lambda: app.turn_running and bool(app.trace.rows))
        await pilot.press(*"then update the README", "enter")
        await pilot.press(*"and add a changelog entry", "enter")
        await wait_until(pilot, lambda: len(app.queued.items) == 2)
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
