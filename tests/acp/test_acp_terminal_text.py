"""ACP updates carry text, never terminal control: live events and a replayed session."""

from __future__ import annotations

import re
from pathlib import Path

from hello_tui.acp.updates import EventUpdates, replay
from hello_tui.core import events as ev
from hello_tui.core.display import ChatMessage, ToolStep

ATTACK = "a \x1b]52;c;aGk=\x07 b \x1b[2J c \x9b2J d \u202e"
OBEYED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_live_updates_show_escapes_as_text(tmp_path: Path) -> None:
    updates = EventUpdates(tmp_path)
    sent = []
    for event in (
        ev.AssistantDelta(text=ATTACK),
        ev.ThoughtDelta(text=ATTACK),
        ev.ToolCallStarted(step=1, call_id="c", tool="terminal", arguments={"command": ATTACK}),
        ev.ToolOutputDelta(call_id="c", text=ATTACK),
        ev.ToolCallFinished(
            step=1,
            call_id="c",
            tool="terminal",
            status="error",
            text=ATTACK,
            model_text="",
            duration=0.0,
        ),
        ev.Notice(text=ATTACK, level="warning"),
        ev.TodoChanged(items=[{"title": ATTACK, "status": "pending"}]),
    ):
        sent += updates.updates(event)
    dumped = [u.model_dump() for u in sent]
    assert OBEYED.search(str(dumped)) is None
    assert dumped[0]["content"]["text"] == "a ␛]52;c;aGk=␇ b ␛[2J c \\x9b2J d <U+202E>"


def test_a_replayed_session_shows_escapes_as_text(tmp_path: Path) -> None:
    entries = [
        ChatMessage("assistant", ATTACK, 1),
        ToolStep(
            turn=1,
            step=1,
            call_id="c",
            tool="terminal",
            arguments={"command": ATTACK},
            status="success",
            output=ATTACK,
            duration=0.1,
        ),
    ]
    dumped = [u.model_dump() for u in replay(tmp_path, entries, [{"title": ATTACK}])]
    assert OBEYED.search(str(dumped)) is None
    assert "␛]52;c;aGk=␇" in str(dumped)
