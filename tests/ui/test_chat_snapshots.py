"""Snapshots of the chat at 80x24 and 120x40: a finished answer with h1-h3 headings and numbered
code blocks, and the same kind of answer while it streams (the live view styles headings the
same way). Fixed data, frozen clock, no cursor blink: stable across runs."""

from __future__ import annotations

import asyncio

import pytest

from hello_tui.core import events as ev
from tests.ui.engine_double import Script, fake_settings, main_screen_ready, make_app, wait_until

SIZES = [(120, 40), (80, 24)]

ANSWER = (
    "# Fix the mean\n\n"
    "`mean()` divides by `count - 1`.\n\n"
    "## The change\n\n"
    "```python\ndef mean(values):\n    return total(values) / len(values)\n```\n\n"
    "### Check it\n\n"
    "```sh\npython -m pytest -q\n```\n"
)

HISTORY = [
    {"role": "user", "content": "Why is mean() wrong?"},
    {"role": "assistant", "content": ANSWER},
]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_answer_with_headings_and_numbered_code_blocks(snap_compare, tmp_path, size):
    app = make_app(fake_settings(tmp_path), display=HISTORY)
    assert snap_compare(app, terminal_size=size, run_before=main_screen_ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_streaming_answer_with_headings(snap_compare, tmp_path, size):
    gate = asyncio.Event()
    turn = [
        ev.TurnStarted(turn=1, text="explain"),
        ev.StepStarted(step=1, max_steps=20),
        ev.AssistantDelta(text="# Summary\n\nThe module sums and averages.\n\n"),
        ev.AssistantDelta(text="## Functions\n\n- `total()`\n- `mean()`\n\n### Next\n\nTests.\n"),
        gate,
    ]
    app = make_app(fake_settings(tmp_path), Script([turn]))

    async def run_before(pilot) -> None:
        await main_screen_ready(pilot)
        await pilot.press(*"explain", "enter")
        await wait_until(pilot, lambda: "Tests." in app.chat.live_text)
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
    gate.set()
