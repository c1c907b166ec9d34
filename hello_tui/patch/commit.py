"""Committing a reviewed plan: selection, transaction, result for the model, and the note.

`commit_plan` is the only function the agent, the tools and `hello-tui apply`
call to write a patch. High-risk confirmation is the caller's duty (the
approver, or `--yes`); everything else is enforced here.

The "Patch applied" note records the git diff of exactly what was written
(`written_diff` of the selected, possibly user-edited plan), never the
proposal: declined hunks and files are not in it.
"""

from __future__ import annotations

from collections.abc import Callable

from hello_tui.config import Settings
from hello_tui.patch.notes import clip_patch, fence, write_note
from hello_tui.patch.records import backup_dir_label
from hello_tui.patch.selection import select
from hello_tui.patch.transaction import Write, run_transaction
from hello_tui.patch.types import CommitResult, PatchError, PatchPlan, Selection, printable
from hello_tui.patch.undo_stack import current_state, patch_fields
from hello_tui.patch.written_diff import written_diff


def writes_for(plan: PatchPlan) -> list[Write]:
    writes: list[Write] = []
    for fp in plan.files:
        if fp.op == "add":
            writes.append(Write(fp.path, fp.new_bytes or b"", fp.mode, None))
        elif fp.op == "delete":
            writes.append(Write(fp.path, None, None, fp.old_hash))
        elif fp.op == "move":
            assert fp.move_to is not None
            writes.append(Write(fp.move_to, fp.new_bytes or b"", fp.mode, None))
            writes.append(Write(fp.path, None, None, fp.old_hash))
        else:
            writes.append(Write(fp.path, fp.new_bytes or b"", fp.mode, fp.old_hash))
    return writes


def emptied_dirs(writes: list[Write]) -> list[str]:
    """The folders of the files a patch removes (deleted, or moved away), parents first.

    git apply removes a folder its deletions leave empty, and its parents that are then
    empty too (tqdm's move of tqdm/tests/ to tests/ leaves no tqdm/); the transaction
    removes each of these only if it is empty once the files are written, and an undo
    makes again the ones its files need.
    """
    dirs: set[str] = set()
    for w in writes:
        if w.data is None:
            parts = w.path.split("/")[:-1]
            dirs.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return sorted(dirs, key=lambda d: (d.count("/"), d))


def plan_file_lines(plan: PatchPlan) -> list[str]:
    lines = []
    for fp in plan.files:
        if fp.op == "move":
            lines.append(f"R {fp.path} -> {fp.move_to}")
        else:
            lines.append({"add": "A", "update": "M", "delete": "D"}[fp.op] + f" {fp.path}")
    return lines


_FAILED_REST = "the rest of the proposed patch is not kept"


def note_failure(settings: Settings, error: str, patch_text: str, user_task: str) -> str | None:
    content = (
        (f"Task: {user_task}\n\n" if user_task else "")
        + f"Error:\n{error}\n\nNothing was written; the files are unchanged. Where to look: the "
        "file(s) and line numbers named in the error (re-read them before patching again).\n\n"
        f"Patch (as proposed):\n{fence(clip_patch(patch_text, rest=_FAILED_REST))}\n"
    )
    return write_note(settings, "Patch failed", content, "blocker", "patch_failed")


def _written_section(chosen: PatchPlan) -> str:
    try:
        diff = written_diff(chosen)
    except Exception as exc:  # noqa: BLE001 - the files are written; the note must not undo that
        return f"(the diff of the written files could not be rendered: {exc})"
    # A note is UTF-8 text: bytes of a file in another encoding are shown as \xNN there.
    return fence(clip_patch(printable(diff)))


# Called with the accepted plan once its files are written, before the commit point;
# raising PatchError undoes the writes (the user's editor is told the new text there).
BeforeCommit = Callable[[PatchPlan], None]


def commit_plan(
    plan: PatchPlan,
    settings: Settings,
    *,
    selection: Selection = None,
    user_task: str = "",
    attachments: dict[str, bytes] | None = None,
    before_commit: BeforeCommit | None = None,
) -> CommitResult:
    """Write the accepted part of `plan` all or nothing; PatchError (tree unchanged) on failure.

    `attachments` are kept in the backup folder beside the patch text.
    """
    try:
        chosen = select(plan, selection)
        if not chosen.files:
            raise PatchError("Nothing to apply: every file and hunk of the patch was declined.")
        kept = dict(attachments or {})
        if chosen.source_text:
            kept["patch.txt"] = chosen.source_text.encode("utf-8")
        writes = writes_for(chosen)
        manifest = run_transaction(
            settings,
            writes,
            kind="patch",
            removed_dirs=emptied_dirs(writes),
            extra={"user_task": user_task, "files": plan_file_lines(chosen)},
            attachments=kept or None,
            stack=lambda name: patch_fields(current_state(settings), name),
            before_commit=None if before_commit is None else lambda: before_commit(chosen),
        )
    except PatchError as exc:
        note_failure(settings, str(exc), plan.source_text, user_task)
        raise
    result = CommitResult(
        added=[fp.path for fp in chosen.files if fp.op == "add"],
        updated=[fp.path for fp in chosen.files if fp.op == "update"],
        moved=[(fp.path, fp.move_to or "") for fp in chosen.files if fp.op == "move"],
        deleted=[fp.path for fp in chosen.files if fp.op == "delete"],
        hunks_applied=sum(len(fp.hunks) for fp in chosen.files),
        hunks_declined=chosen.declined_hunks,
        backup_dir=backup_dir_label(settings, manifest["name"]),
    )
    content = (
        (f"Task: {user_task}\n\n" if user_task else "")
        + "Files:\n\n"
        + "\n".join(f"- {line}" for line in result.summary_lines())
        + f"\n\nHunks applied: {result.hunks_applied}, declined: {result.hunks_declined}"
        + f"\n\nBackup folder: {result.backup_dir} (undo with `hello-tui undo`)\n\n"
        + f"Patch (what was written):\n{_written_section(chosen)}\n"
    )
    result.note_id = write_note(settings, "Patch applied", content, "action", "patch_applied")
    return result
