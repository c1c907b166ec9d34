"""Snapshots of a newcomer's first ten minutes at 80x24 and 120x40: the first screen with
no key, /setup with a local server found, the status bar while a tool runs, and the
review after `e` (a declined hunk left out of the user's version).

Stable: fixed repo and model names, the probe's answer fixed (which servers run on this
machine's ports is not the test's business), the cursor still."""

from __future__ import annotations

import asyncio
import sys

import pytest
from textual.widgets import Input, Select

from hello_tui.core import events as ev
from hello_tui.llm.local_servers import LocalServer
from hello_tui.screens.review import PatchReviewScreen
from hello_tui.screens.setup_help import SetupHelpScreen
from tests.ui.engine_double import (
    Script,
    armed,
    fake_settings,
    main_screen_ready,
    make_app,
    wait_until,
)
from tests.ui.review_fixtures import STATS_NEW, settle

SIZES = [(120, 40), (80, 24)]
IDS = lambda s: f"{s[0]}x{s[1]}"

FOUND = [
    LocalServer(11434, "Ollama", "http://127.0.0.1:11434/v1", ["qwen2.5-coder:7b", "llama3.2"]),
    LocalServer(8080, "llama.cpp", "http://127.0.0.1:8080/v1", error="nothing listening"),
    LocalServer(8081, "llama.cpp", "http://127.0.0.1:8081/v1", error="nothing listening"),
    LocalServer(8000, "vLLM", "http://127.0.0.1:8000/v1", error="nothing listening"),
    LocalServer(1234, "LM Studio", "http://127.0.0.1:1234/v1", error="nothing listening"),
]


@pytest.fixture(autouse=True)
def _fixed_config_home(monkeypatch):
    # The dialog names the user config's path: the same one on every run and machine
    # (nothing is written there by these tests).
    monkeypatch.setenv("XDG_CONFIG_HOME", "/home/you/.config")


async def _setup_open(pilot) -> SetupHelpScreen:
    app = pilot.app
    await wait_until(pilot, lambda: isinstance(app.screen, SetupHelpScreen))
    await wait_until(pilot, lambda: app.engine is not None and app.status.state == "idle")
    await armed(pilot)  # its fields take keys (and look it) once it has armed
    app.prompt.cursor_blink = False
    for field in app.screen.query(Input):
        field.cursor_blink = False
    # The main screen lies under the dialog: repaint its status bar, which turned idle
    # after the dialog opened, before the picture is taken.
    app.status.refresh(layout=True)
    app.screen.refresh(layout=True)
    await pilot.pause(0.2)
    return app.screen


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_no_key_first_screen(snap_compare, tmp_path, size):
    app = make_app(fake_settings(tmp_path, configured=False))

    async def run_before(pilot) -> None:
        await _setup_open(pilot)
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_setup_with_a_local_server(snap_compare, tmp_path, size):
    app = make_app(fake_settings(tmp_path, configured=False))

    async def run_before(pilot) -> None:
        screen = await _setup_open(pilot)
        screen.probe = lambda: FOUND
        screen.query_one("#setup-provider", Select).value = "local"
        await wait_until(pilot, lambda: screen.servers)
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def _running_tool_turn(gate: asyncio.Event) -> list:
    return [
        ev.StepStarted(step=3, max_steps=20),
        ev.ContextUsage(used=12_345, budget=128_000),
        ev.Usage(
            prompt_tokens=900,
            completion_tokens=120,
            session_prompt_tokens=24_000,
            session_completion_tokens=3_100,
            cost=0.0123,
        ),
        ev.ToolCallStarted(
            step=3, call_id="c3", tool="terminal", arguments={"command": "python -m unittest"}
        ),
        ev.ToolOutputDelta(call_id="c3", text="F.\n"),
        gate,
    ]


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_status_bar_during_a_turn(snap_compare, tmp_path, size):
    gate = asyncio.Event()
    app = make_app(fake_settings(tmp_path), Script([_running_tool_turn(gate)]))

    async def run_before(pilot) -> None:
        await main_screen_ready(pilot)
        await pilot.press(*"run the tests", "enter")
        await wait_until(pilot, lambda: app.status.state == "running a tool")
        await wait_until(pilot, lambda: app.trace.rows and app.trace.rows[-1].record.live_output)
        app.trace._clock = lambda: app.trace.rows[-1].record.started + 1.5  # a still spinner
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
    gate.set()


@pytest.mark.parametrize("size", SIZES, ids=IDS)
def test_review_after_edit(snap_compare, tmp_path, monkeypatch, size):
    from hello_tui.config import load_settings
    from hello_tui.patch import plan_file_change
    from hello_tui.screens.approver import engine_replan
    from tests.ui.review_fixtures import STATS_OLD, ScreenApp

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "stats.py").write_text(STATS_OLD)
    settings = load_settings(repo, environ={})
    plan = plan_file_change(settings, "stats.py", STATS_NEW)
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys\npath = sys.argv[1]\ntext = open(path).read()\n"
        "open(path, 'w').write(text.replace('/ count(values)', '/ max(count(values), 1)'))\n"
    )
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    app = ScreenApp(PatchReviewScreen(plan, replan=engine_replan(settings)))

    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.press("j", "space", "e")  # decline the second hunk, then edit
        await settle(pilot)
        for toast in list(app._notifications):
            app._unnotify(toast)  # the toast's timer is not the snapshot's business
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
