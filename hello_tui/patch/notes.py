"""The audit trail of the patch engine: `Patch applied` / `Patch failed` notes.

A note that cannot be written never undoes or fails a patch: the error is
swallowed here on purpose and the caller gets `None` instead of a note id.
"""

from __future__ import annotations

from hello_tui.config import Settings

MAX_PATCH_IN_NOTE = 20_000


def write_note(
    settings: Settings, title: str, content: str, note_type: str, tag: str
) -> str | None:
    try:
        from hello_tui.store.notes import NoteStore

        note = NoteStore(settings.state.notes).create(
            title, content, note_type=note_type, tags=[settings.project, tag]
        )
        return note.id
    except Exception:  # noqa: BLE001 - the patch outcome must not depend on the audit log
        return None


def clip_patch(text: str) -> str:
    if len(text) <= MAX_PATCH_IN_NOTE:
        return text
    return (
        text[:MAX_PATCH_IN_NOTE]
        + "\n… (truncated; the full patch is kept as patch.txt in the backup folder)\n"
    )
