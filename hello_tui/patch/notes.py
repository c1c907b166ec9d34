"""The audit trail of the patch engine: `Patch applied` / `Patch failed` notes.

A note's patch is a fenced ```diff block (`fence`), clipped to MAX_PATCH_IN_NOTE
characters at a line end.

A note that cannot be written never undoes or fails a patch: the error is
swallowed here on purpose and the caller gets `None` instead of a note id.
"""

from __future__ import annotations

from hello_tui.config import Settings
from hello_tui.core.markdown_fence import fence

__all__ = ["CLIPPED_MARK", "MAX_PATCH_IN_NOTE", "clip_patch", "fence", "write_note"]

MAX_PATCH_IN_NOTE = 20_000
# The line that ends a clipped patch (a reader of the diff stops before it).
CLIPPED_MARK = "… (truncated after "


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


def clip_patch(text: str, *, rest: str = "the backup folder keeps the files as they were") -> str:
    if len(text) <= MAX_PATCH_IN_NOTE:
        return text
    cut = text.rfind("\n", 0, MAX_PATCH_IN_NOTE) + 1 or MAX_PATCH_IN_NOTE
    return text[:cut] + f"{CLIPPED_MARK}{cut} characters; {rest})\n"
