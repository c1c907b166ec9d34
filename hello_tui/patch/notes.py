"""The audit trail of the patch engine: `Patch applied` / `Patch failed` notes.

A note's patch is a fenced ```diff block (`fence`), clipped to MAX_PATCH_IN_NOTE
characters at a line end.

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


def clip_patch(text: str, *, rest: str = "the backup folder keeps the files as they were") -> str:
    if len(text) <= MAX_PATCH_IN_NOTE:
        return text
    cut = text.rfind("\n", 0, MAX_PATCH_IN_NOTE) + 1 or MAX_PATCH_IN_NOTE
    return text[:cut] + f"… (truncated after {cut} characters; {rest})\n"


def fence(text: str, info: str = "diff") -> str:
    """`text` as a Markdown fenced code block that no line of it can close.

    A closing fence is a run of at least as many backticks, indented by at most
    three spaces; a diff's context line (" ```") is exactly that, so the fence
    is made one backtick longer than any such run in the text.
    """
    longest = 0
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) <= 3 and stripped.startswith("`"):
            longest = max(longest, len(stripped) - len(stripped.lstrip("`")))
    ticks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{ticks}{info}\n{body}{ticks}"
