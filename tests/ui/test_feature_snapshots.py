"""Snapshots of the new screens at 80x24 and 120x40: the session and model pickers, the
setup dialog, and the completion popup over the prompt (fixed data: stable across runs)."""

from __future__ import annotations

import pytest
from textual.widgets import Input

from hello_tui.screens.picker import PickerScreen, PickItem
from hello_tui.screens.setup_help import SetupHelpScreen
from tests.ui.engine_double import armed, fake_settings, make_app, wait_until

SIZES = [(120, 40), (80, 24)]

SESSIONS = [
    PickItem(
        "20260301-101500-a1b2c3",
        "fix the failing test in stats.py",
        "2026-03-01 10:15 · 3 turns · gpt-4o-mini · 20260301-101500-a1b2c3",
        current=True,
    ),
    PickItem(
        "20260228-170200-d4e5f6",
        "explain how the parser handles quoted paths",
        "2026-02-28 17:02 · 1 turn · deepseek-chat · 20260228-170200-d4e5f6",
    ),
    PickItem(
        "20260227-090000-0a0b0c",
        "add a --json flag to the history command",
        "2026-02-27 09:00 · 7 turns · gpt-4o · 20260227-090000-0a0b0c",
    ),
]

MODELS = [
    PickItem("scripted-model", "scripted-model", current=True, group="in use"),
    PickItem("gpt-4o", "gpt-4o", group="recent"),
    PickItem("big-model", "big-model", group="endpoint"),
    PickItem("small-model", "small-model", group="endpoint"),
    PickItem(
        "deepseek-chat",
        "deepseek-chat",
        "another provider's: needs its own endpoint",
        group="deepseek",
    ),
]


def _with_screen(screen_factory, typed: str = ""):
    async def run_before(pilot) -> None:
        app = pilot.app
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        app.prompt.cursor_blink = False
        app.push_screen(screen_factory())
        await pilot.pause()
        await armed(pilot)  # a decision modal (the setup) shows its fields enabled once armed
        for field in app.screen.query(Input):
            field.cursor_blink = False  # a blinking cursor would make the snapshot flaky
        if typed:
            await pilot.press(*typed)
        await pilot.pause(0.2)

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_session_picker(snap_compare, tmp_path, size):
    app = make_app(fake_settings(tmp_path))
    screen = _with_screen(lambda: PickerScreen("Resume a session", SESSIONS))
    assert snap_compare(app, terminal_size=size, run_before=screen)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_session_picker_filtered(snap_compare, tmp_path, size):
    app = make_app(fake_settings(tmp_path))
    screen = _with_screen(lambda: PickerScreen("Resume a session", SESSIONS), typed="parser")
    assert snap_compare(app, terminal_size=size, run_before=screen)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_model_picker(snap_compare, tmp_path, size):
    app = make_app(fake_settings(tmp_path))
    screen = _with_screen(lambda: PickerScreen("Choose a model", MODELS))
    assert snap_compare(app, terminal_size=size, run_before=screen)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_setup_dialog(snap_compare, tmp_path, size):
    app = make_app(fake_settings(tmp_path))
    screen = _with_screen(lambda: SetupHelpScreen("", "~/.config/hello-tui/config.toml"))
    assert snap_compare(app, terminal_size=size, run_before=screen)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_slash_completion_popup(snap_compare, tmp_path, size):
    app = make_app(fake_settings(tmp_path))

    async def run_before(pilot) -> None:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        app.prompt.cursor_blink = False
        await pilot.press("/", "r")
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
