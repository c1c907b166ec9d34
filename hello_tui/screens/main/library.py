"""The sidebar's notes and backups: loading them, and opening a note or a backup's diff."""

from __future__ import annotations

import logging

from hello_tui.screens.main.host import Host
from hello_tui.widgets.sidebar import BackupPick

log = logging.getLogger(__name__)


class LibraryController:
    def __init__(self, host: Host) -> None:
        self.host = host
        self.sidebar = host.views.sidebar

    def refresh(self) -> None:
        """Reload the sidebar's lists, if it is open (a closed one loads when it opens)."""
        if self.sidebar.display and self.host.engine is not None:
            self.host.run_worker(
                self._load(), name="sidebar", group="sidebar", exclusive=True, exit_on_error=False
            )

    async def _load(self) -> None:
        engine = self.host.engine
        assert engine is not None
        try:
            notes = await engine.notes()
        except Exception as exc:  # a broken notes folder must not break the app
            log.exception("notes could not be read")
            self.host.notify(f"Could not read notes: {exc}", severity="error")
            notes = []
        try:
            patches = await engine.patch_summaries(notes)
        except Exception:  # counts are a help; the list shows without them
            log.exception("the notes' patches could not be read")
            patches = {}
        try:
            backups = await engine.backups()
        except Exception as exc:  # the same
            log.exception("backups could not be read")
            self.host.notify(f"Could not read backups: {exc}", severity="error")
            backups = []
        self.sidebar.set_notes(notes, patches)
        self.sidebar.set_backups(backups)

    def open_note(self, note_id: str) -> None:
        self.host.run_worker(self._open_note(note_id), group="viewer", exit_on_error=False)

    async def _open_note(self, note_id: str) -> None:
        from hello_tui.engine.types import NoteError, note_patch_summary
        from hello_tui.screens.note_viewer import NoteViewerScreen, note_meta, patch_meta

        engine = self.host.engine
        assert engine is not None
        try:
            note = await engine.read_note(note_id)
        except NoteError as exc:
            self.host.notify(str(exc), severity="error")
            return
        meta = note_meta(note.note_type, note.updated_at, note.tags)
        patch = note_patch_summary(note.content)
        if patch is not None:
            meta += "\n" + patch_meta(patch)
        self.host.push_screen(NoteViewerScreen(note.title, note.content, meta))

    def open_backup(self, pick: BackupPick) -> None:
        self.host.run_worker(self._open_backup(pick), group="viewer", exit_on_error=False)

    async def _open_backup(self, pick: BackupPick) -> None:
        from hello_tui.screens.backup_diff import BackupDiffScreen

        engine = self.host.engine
        assert engine is not None and pick.relpath is not None
        compared = await engine.compare_backup(pick.backup, pick.relpath)
        if compared.old is None:
            self.host.notify(f"{pick.backup} holds no copy of {pick.relpath}.", severity="error")
            return
        title = f"{pick.relpath}: backup {pick.backup} (left) vs now (right)"
        self.host.push_screen(
            BackupDiffScreen(title, compared.old, compared.current, path=pick.relpath)
        )
