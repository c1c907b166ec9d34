"""Backups as history: undo, redo, restore, the list of backups and the history of patches.

Every committed transaction leaves `<state>/backups/<name>/` with the old
bytes of each file it touched and a manifest (see records.py). Undo, redo and
restore are transactions themselves, with their own backups.

Undo reverts the top of the undo stack (undo_stack.py) after checking that
each file still holds what that step wrote; a file changed since is named and
the undo refused, unless `force` — then the changed file is overwritten, its
current content kept in the undo's own backup folder first. Redo reverts the
undo, with the same check. Neither ever skips a damaged record.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hello_tui.config import Settings
from hello_tui.patch import records, undo_stack
from hello_tui.patch.diff_summary import DiffSummary, note_patch_summary
from hello_tui.patch.records import Damaged, Entry, backup_dir_label
from hello_tui.patch.recovery import Interrupted
from hello_tui.patch.rollback import classify, file_state
from hello_tui.patch.transaction import ANY, Write, recovered_lock, run_locked
from hello_tui.patch.types import CommitResult, PatchError

PATCH_KINDS = ("patch", "restore")


@dataclass
class BackupInfo:
    name: str
    path: Path
    created_at: str
    files: list[str]  # relative paths whose old content this backup holds
    kind: str = "patch"  # patch | undo | redo | restore
    added: list[str] = field(default_factory=list)  # files the transaction created


@dataclass
class UndoResult(CommitResult):
    patch: str = ""  # the patch (backup folder name) that was undone or redone
    kept_edits: list[str] = field(default_factory=list)  # changed files backed up by --force
    recovered: list[str] = field(default_factory=list)  # what recovery did first
    # True: the newest change was interrupted and recovery resolved it: that was the undo
    by_recovery: bool = False


@dataclass
class HistoryEntry:
    name: str
    created_at: str
    kind: str  # patch | restore
    files: list[str]  # "M a.txt", "A b.txt", ...
    task: str
    undone: bool | None  # None: unknown, a damaged record hides it
    redoable: bool = False
    damaged: str | None = None  # why the record itself cannot be read
    # What the patch's "Patch applied" note says its diff changed (None: no such note).
    patch: DiffSummary | None = None


class UndoRefused(PatchError):
    """Files changed since the step being undone (or redone) wrote them; nothing was changed."""

    def __init__(self, message: str, paths: list[str]) -> None:
        super().__init__(message)
        self.paths = paths


def _committed_manifests(settings: Settings) -> list[tuple[Path, dict[str, Any] | Damaged]]:
    """Committed records, newest first: the manifest, or why it cannot be read."""
    out: list[tuple[Path, dict[str, Any] | Damaged]] = []
    for folder in reversed(records.record_folders(settings)):
        if not records.is_committed(folder):
            continue
        try:
            out.append((folder, records.read_manifest(folder)))
        except FileNotFoundError:
            out.append((folder, Damaged(folder / records.MANIFEST, "missing")))
        except Damaged as exc:
            out.append((folder, exc))
    return out


def list_backups(settings: Settings) -> list[BackupInfo]:
    """Committed backups with a verified record, newest first."""
    infos: list[BackupInfo] = []
    for folder, manifest in _committed_manifests(settings):
        if isinstance(manifest, Damaged):
            continue
        entries = records.entries_of(manifest)
        infos.append(
            BackupInfo(
                name=folder.name,
                path=folder,
                created_at=str(manifest.get("created_at", "")),
                files=[e.path for e in entries if e.before is not None],
                kind=str(manifest.get("kind", "patch")),
                added=[e.path for e in entries if e.before is None and e.after is not None],
            )
        )
    return infos


def read_backup(settings: Settings, backup_name: str, relpath: str) -> bytes | None:
    """The verified bytes a committed backup holds for `relpath`; None when it holds none."""
    folder = settings.state.backups / backup_name
    if "/" in backup_name or not records.is_committed(folder):
        return None
    try:
        manifest = records.read_manifest(folder)
    except (FileNotFoundError, Damaged):
        return None
    for entry in records.entries_of(manifest):
        if entry.path == relpath and entry.before is not None:
            try:
                return records.backup_bytes(folder, entry)
            except Damaged:
                return None
    return None


def result_from_manifest(settings: Settings, manifest: dict[str, Any]) -> CommitResult:
    result = CommitResult(backup_dir=backup_dir_label(settings, manifest["name"]))
    _fill_result(result, manifest)
    return result


def _fill_result(result: CommitResult, manifest: dict[str, Any]) -> None:
    for e in records.entries_of(manifest):
        if e.after is not None:
            (result.updated if e.before is not None else result.added).append(e.path)
        elif e.before is not None:
            result.deleted.append(e.path)


def _note(settings: Settings, title: str, content: str, tag: str) -> str | None:
    from hello_tui.patch.notes import write_note

    return write_note(settings, title, content, "action", tag)


# ---- reverting a transaction ----------------------------------------------------------


@dataclass
class _Revert:
    writes: list[Write]
    changed: list[str]  # files in neither state (kept as they are unless forced)
    removed_dirs: list[str]


def _revert_of(
    settings: Settings,
    folder: Path,
    manifest: dict[str, Any],
    *,
    only: str | None,
    check: bool,
    force: bool,
) -> _Revert:
    """The writes that put every file of `manifest` back as it was before it.

    `check`: a file must hold what the transaction wrote (or already be as
    before); otherwise it is `changed`, and only written when `force`.
    """
    repo = Path(os.path.realpath(settings.repo))
    writes: list[Write] = []
    changed: list[str] = []
    for entry in records.entries_of(manifest):
        if only is not None and entry.path != only:
            continue
        state = file_state(repo / entry.path)
        side = classify(entry, state)
        if side == "before":
            continue
        if side == "other" and check:
            changed.append(entry.path)
            if not force:
                continue
        expect = state.sha if state.kind == "file" else (None if state.kind == "missing" else ANY)
        writes.append(_write_before(settings, folder, entry, expect))
    removed = list(manifest.get("created_dirs", [])) if only is None else []
    return _Revert(writes, changed, removed)


def _write_before(settings: Settings, folder: Path, entry: Entry, expect: str | None) -> Write:
    if entry.before is None:
        return Write(entry.path, None, None, expect)
    try:
        data = records.backup_bytes(folder, entry)
    except Damaged as exc:
        raise PatchError(
            f"the backup of {entry.path} in {records.state_label(settings, folder)} is "
            f"damaged ({exc.why}); nothing was changed"
        ) from None
    return Write(entry.path, data, entry.before.get("mode"), expect, records.owner_before(entry))


def _step(settings: Settings, direction: str, force: bool) -> UndoResult:
    """Undo (direction "undo") or redo one step of the stack, under the write lock."""
    with recovered_lock(settings) as report:
        interrupted = [r for r in report.interrupted if r.kind != "undo"]
        if direction == "undo" and interrupted:
            # The newest change (a patch, restore or redo, or a command that stopped before
            # its record said which) was interrupted and is not in effect now: that is the
            # undo. Reverting the patch below it too would undo more than was asked.
            return _undone_by_recovery(interrupted[-1], report.actions)
        state = undo_stack.current_state(settings)
        top = state.applied_top if direction == "undo" else state.undone_top
        if top is None:
            raise PatchError(
                "Nothing to undo: no applied patch has been recorded in this repository."
                if direction == "undo"
                else "Nothing to redo: no undone patch to bring back."
            )
        node = undo_stack.load_node(settings, top, direction)
        folder = settings.state.backups / node["name"]
        revert = _revert_of(settings, folder, node, only=None, check=True, force=force)
        patch = str(node.get("patch", node["name"]))
        if revert.changed and not force:
            names = ", ".join(revert.changed)
            raise UndoRefused(
                f"{direction.capitalize()} refused, nothing was changed: {names} changed since "
                f"{'the patch' if direction == 'undo' else 'the undo'} wrote "
                f"{'it' if len(revert.changed) == 1 else 'them'} (by hand or by a command). "
                f"`hello-tui {direction} --force` does it anyway, backing up those edits first.",
                revert.changed,
            )
        fields = undo_stack.undo_fields if direction == "undo" else undo_stack.redo_fields
        done = run_locked(
            settings,
            revert.writes,
            kind=direction,
            extra={"user_task": f"hello-tui {direction}", "forced": revert.changed},
            stack=lambda name: fields(state, node, name),
            removed_dirs=revert.removed_dirs,
            allow_empty=True,
        )
    result = UndoResult(
        backup_dir=backup_dir_label(settings, done["name"]),
        patch=patch,
        kept_edits=revert.changed,
        recovered=report.actions,
    )
    _fill_result(result, done)
    verb = "undone" if direction == "undo" else "redone"
    content = (
        f"Patch {backup_dir_label(settings, patch)} {verb}.\n\n"
        + ("\n".join(result.summary_lines()) or "No file needed a change.")
        + (
            f"\n\nChanged files overwritten with --force (their edits are kept in "
            f"{result.backup_dir}): {', '.join(revert.changed)}"
            if revert.changed
            else ""
        )
        + f"\n\nBackup of the state before this {direction}: {result.backup_dir}\n"
    )
    result.note_id = _note(
        settings,
        f"Patch {verb}",
        content,
        "patch_undone" if direction == "undo" else "patch_redone",
    )
    return result


def _undone_by_recovery(found: Interrupted, actions: list[str]) -> UndoResult:
    """The result of an undo whose change recovery found interrupted and resolved."""
    result = UndoResult(patch=found.name, recovered=actions, by_recovery=True)
    for e in found.restored:  # what the files are again, as an undo's own result says it
        if e.before is None:
            result.deleted.append(e.path)
        elif e.after is None:
            result.added.append(e.path)
        else:
            result.updated.append(e.path)
    return result


def undo_last(settings: Settings, *, force: bool = False) -> UndoResult:
    """Step back one applied patch (or restore); each call goes one further back.

    When the newest patch, restore or redo was interrupted and recovery rolls it back
    first, that is the undo: nothing older is reverted (`by_recovery` says so).
    """
    return _step(settings, "undo", force)


def redo_last(settings: Settings, *, force: bool = False) -> UndoResult:
    """Step forward again: bring back the most recently undone patch."""
    return _step(settings, "redo", force)


def restore_from_backup(
    settings: Settings, backup_name: str, relpath: str | None = None
) -> CommitResult:
    """Put back one file (or every file) as it was before the transaction `backup_name`.

    The current content is backed up first; the restore is a step of its own
    on the undo stack, so `undo` takes it back.
    """
    with recovered_lock(settings):
        folder = settings.state.backups / backup_name
        if "/" in backup_name or not records.is_committed(folder):
            raise PatchError(f"No committed backup named {backup_name!r}; see the list of backups.")
        try:
            manifest = records.read_manifest(folder)
        except (FileNotFoundError, Damaged) as exc:
            why = exc.why if isinstance(exc, Damaged) else "its manifest is missing"
            raise PatchError(
                f"cannot restore from {records.state_label(settings, folder)}: {why}; "
                "nothing was changed"
            ) from None
        paths = {e.path for e in records.entries_of(manifest)}
        if relpath is not None and relpath not in paths:
            raise PatchError(f"Backup {backup_name} holds nothing for {relpath}.")
        revert = _revert_of(settings, folder, manifest, only=relpath, check=False, force=True)
        if not revert.writes:
            raise PatchError(
                f"Nothing to restore from {backup_name}: the files are already as it left them."
            )
        done = run_locked(
            settings,
            revert.writes,
            kind="restore",
            extra={
                "reverts": backup_name,
                "only": relpath,
                "user_task": f"restore {relpath or 'every file'} from {backup_name}",
            },
            stack=lambda name: undo_stack.patch_fields(undo_stack.current_state(settings), name),
            removed_dirs=revert.removed_dirs,
        )
    result = result_from_manifest(settings, done)
    content = (
        f"Reverted {backup_dir_label(settings, backup_name)}"
        + (f" (only {relpath})" if relpath else "")
        + ".\n\n"
        + "\n".join(result.summary_lines())
        + f"\n\nBackup of the state before this restore: {result.backup_dir}\n"
    )
    result.note_id = _note(settings, "Files restored from backup", content, "patch_restored")
    return result


# ---- history ----------------------------------------------------------------------------


def _file_lines(manifest: dict[str, Any]) -> list[str]:
    files = manifest.get("files")
    if isinstance(files, list) and files:
        return [str(f) for f in files]
    result = CommitResult()
    _fill_result(result, manifest)
    return result.summary_lines()


# The line of a "Patch applied" note (commit.py) naming the transaction's backup folder.
_BACKUP_LINE = re.compile(r"^Backup folder: (.+) \(undo with ", re.MULTILINE)


def _written_patches(settings: Settings) -> dict[str, DiffSummary]:
    """Each "Patch applied" note's diff, read back, by the backup folder the note names."""
    from hello_tui.store.notes import NoteStore

    try:
        notes = NoteStore(settings.state.notes).list()
    except OSError:
        return {}  # the history shows without the counts
    out: dict[str, DiffSummary] = {}
    for note in notes:
        folder = _BACKUP_LINE.search(note.content)
        summary = note_patch_summary(note.content) if "patch_applied" in note.tags else None
        if folder is not None and summary is not None:
            out.setdefault(folder.group(1), summary)
    return out


def history(settings: Settings) -> list[HistoryEntry]:
    """Applied patches and restores, newest first, each undone or not, a patch with what
    its note's diff changed."""
    state = undo_stack.current_state(settings)
    applied = undo_stack.walk(settings, state.applied_top)
    undone = undo_stack.walk(settings, state.undone_top)
    in_effect, can_redo = set(applied.patches), set(undone.patches)
    patches = _written_patches(settings)
    out: list[HistoryEntry] = []
    for folder, manifest in _committed_manifests(settings):
        if isinstance(manifest, Damaged):
            out.append(HistoryEntry(folder.name, "", "?", [], "", None, damaged=manifest.why))
            continue
        if manifest.get("kind") not in PATCH_KINDS:
            continue
        name = folder.name
        if name in in_effect:
            status: bool | None = False
        elif name in can_redo or applied.complete:
            status = True
        else:
            status = None
        out.append(
            HistoryEntry(
                name=name,
                created_at=str(manifest.get("created_at", "")),
                kind=str(manifest["kind"]),
                files=_file_lines(manifest),
                task=str(manifest.get("user_task", "")),
                undone=status,
                redoable=name in can_redo,
                patch=patches.get(backup_dir_label(settings, name)),
            )
        )
    return out
