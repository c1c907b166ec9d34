"""The note viewer's line under the title says when to the minute, not to the microsecond."""

from __future__ import annotations

import re

from hello_tui.screens.note_viewer import NoteViewerScreen, note_meta, shown_time
from hello_tui.store.notes import NoteStore
from tests.ui.engine_double import fake_settings, make_app, wait_until


def test_times_are_shown_to_the_minute():
    assert shown_time("2026-03-01T10:15:42.123456") == "2026-03-01 10:15"
    assert shown_time("2026-03-01T10:15:42+02:00") == "2026-03-01 10:15"
    assert shown_time("yesterday") == "yesterday"
    assert note_meta("action", "2026-03-01T10:15:42.123456", []) == "action · 2026-03-01 10:15"
    assert note_meta("blocker", "", ["ci", "flaky"]) == "blocker · ci, flaky"


async def test_an_opened_note_shows_its_time_to_the_minute(tmp_path):
    settings = fake_settings(tmp_path)
    note = NoteStore(settings.state.notes).create("Patch applied", "stats.py", note_type="action")
    app = make_app(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        app.library.open_note(note.id)
        await wait_until(pilot, lambda: isinstance(app.screen, NoteViewerScreen))
        meta = str(app.screen.query_one("#note-meta").render())
        assert re.fullmatch(r"action · \d{4}-\d\d-\d\d \d\d:\d\d", meta), meta
