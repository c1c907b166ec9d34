"""Snapshots of the notes viewer at 80x24 and 120x40: a "Patch applied" note's diff, coloured."""

from __future__ import annotations

import pytest

from hello_tui.screens.note_viewer import NoteViewerScreen
from tests.ui.engine_double import fake_settings, make_app, wait_until

SIZES = [(120, 40), (80, 24)]

NOTE = """Task: fix the mean

Files:

- M stats.py

Hunks applied: 1, declined: 1

Backup folder: .helloagents/backups/20260301_101500_000001 (undo with `hello-tui undo`)

Patch (what was written):
```diff
diff --git a/stats.py b/stats.py
index d9a54ca..cafaf1a 100644
--- a/stats.py
+++ b/stats.py
@@ -11,7 +11,7 @@ def total(values: list[float]) -> float:
 def mean(values: list[float]) -> float:
     \"\"\"Arithmetic mean of the values.\"\"\"
     count = len(values)
-    return total(values) / (count - 1)
+    return total(values) / count
 
 
 def spread(values: list[float]) -> float:
```
"""


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_patch_applied_note(snap_compare, tmp_path, size):
    app = make_app(fake_settings(tmp_path))

    async def run_before(pilot) -> None:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        app.prompt.cursor_blink = False
        meta = "action · 2026-03-01T10:15:00 · demo-repo, patch_applied"
        app.push_screen(NoteViewerScreen("Patch applied", NOTE, meta))
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
