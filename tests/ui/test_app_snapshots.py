"""Snapshots of the main screen: idle, mid-stream with trace and todo board, sidebar with notes.

Stable across machines: the repo folder always has the same name (the status
bar shows only the name), the model name is fixed, the clock is frozen and
the cursor does not blink.
"""

from __future__ import annotations

import asyncio

import pytest

from hello_tui.core import events as ev
from hello_tui.store.notes import NoteStore
from tests.ui.engine_double import Script, fake_settings, main_screen_ready, make_app, wait_until

SIZES = [(120, 40), (80, 24)]

HISTORY = [
    {"role": "user", "content": "What does this repository do?"},
    {
        "role": "assistant",
        "content": "A tiny statistics module:\n\n- `total()` sums values\n- `mean()` "
        "averages them\n\n```python\nsummary([1, 2, 3])\n```",
    },
]


def _mid_stream_turn(gate: asyncio.Event) -> list:
    return [
        ev.TurnStarted(turn=2, text="fix the failing test"),
        ev.StepStarted(step=1, max_steps=20),
        ev.ThoughtDelta(text="The test fails on mean; read stats.py.", step=1),
        ev.ToolCallStarted(step=1, call_id="c1", tool="read", arguments={"path": "stats.py"}),
        ev.ToolCallFinished(
            step=1,
            call_id="c1",
            tool="read",
            status="success",
            text="def mean(values):\n    count = len(values)\n    return total(values) / (count - 1)\n",
            model_text="",
            duration=0.12,
        ),
        ev.TodoChanged(
            items=[
                {"id": "1", "title": "Read stats.py", "status": "completed"},
                {"id": "2", "title": "Fix mean()", "status": "in_progress"},
                {"id": "3", "title": "Rerun the tests", "status": "pending"},
            ]
        ),
        ev.Usage(
            prompt_tokens=900,
            completion_tokens=120,
            session_prompt_tokens=2400,
            session_completion_tokens=310,
        ),
        ev.StepStarted(step=2, max_steps=20),
        ev.AssistantDelta(text="The bug is in `mean()`: it divides by "),
        ev.AssistantDelta(text="`count - 1` instead of `count`.\n\n```python\n"),
        ev.AssistantDelta(text="return total(values) / count\n```\n"),
        gate,
    ]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_idle_main_screen(snap_compare, tmp_path, size):
    app = make_app(fake_settings(tmp_path), display=HISTORY)
    assert snap_compare(app, terminal_size=size, run_before=main_screen_ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_mid_stream_with_trace_and_todo_board(snap_compare, tmp_path, size):
    gate = asyncio.Event()
    script = Script([_mid_stream_turn(gate)])
    app = make_app(fake_settings(tmp_path), script, display=HISTORY)

    async def run_before(pilot) -> None:
        await main_screen_ready(pilot)
        await pilot.press(*"fix the failing test", "enter")
        await wait_until(pilot, lambda: "instead of" in app.chat.live_text)
        await wait_until(pilot, lambda: "total(values) / count" in app.chat.live_text)
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
    gate.set()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_sidebar_with_notes(snap_compare, tmp_path, size):
    settings = fake_settings(tmp_path)
    store = NoteStore(settings.state.notes)
    store.create("Task: fix mean", "Fix the division in mean().", note_type="task_state")
    store.create("Patch applied", "stats.py: divide by count.", note_type="action")
    store.create("Tests need pytest", "Run with python -m pytest -q.", note_type="reference")
    app = make_app(settings, display=HISTORY)

    async def run_before(pilot) -> None:
        await main_screen_ready(pilot)
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: len(pilot.app.sidebar.visible_note_titles()) == 3)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
