"""Putting a transaction's files back as they were, touching only what can be verified.

Each file a transaction touched is compared with the manifest's two states:
- *before*: as it was (nothing to do),
- *after*: as the transaction wrote it (put the verified backup back, or remove it),
- anything else: someone changed it since — it is never overwritten here.
The comparison is by sha256 (and mode, when only the mode differs between the two
states). Backups are put back by hard link when the filesystem allows, so rolling
back after "no space left on device" needs no new data blocks.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from hello_tui.config import Settings
from hello_tui.patch import durable
from hello_tui.patch.lines import sha256
from hello_tui.patch.records import Damaged, Entry, backup_bytes, entries_of, owner_before

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Any, Literal

    Side = Literal["before", "after", "other"]


@dataclass
class FileState:
    """What a tree path holds now: nothing, a regular file (its hash and mode), or other."""

    kind: Literal["missing", "file", "other"]
    sha: str | None = None
    mode: int | None = None


def file_state(path: Path) -> FileState:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return FileState("missing")
    except OSError:
        return FileState("other")
    if not stat.S_ISREG(st.st_mode):
        return FileState("other")
    try:
        data = path.read_bytes()
    except OSError:
        return FileState("other")
    return FileState("file", sha256(data), stat.S_IMODE(st.st_mode))


def _holds(state: FileState, side: dict[str, Any] | None) -> bool:
    if side is None:
        return state.kind == "missing"
    return state.kind == "file" and state.sha == side.get("sha256")


def classify(entry: Entry, state: FileState) -> Side:
    """Which of the entry's two states the file is in now."""
    is_before, is_after = _holds(state, entry.before), _holds(state, entry.after)
    if is_before and is_after:
        # Same bytes on both sides: only the mode can tell them apart.
        b_mode = (entry.before or {}).get("mode")
        a_mode = (entry.after or {}).get("mode")
        if a_mode is not None and a_mode != b_mode and state.mode == a_mode:
            return "after"
        return "before"
    if is_before:
        return "before"
    if is_after:
        return "after"
    return "other"


@dataclass
class RollbackPlan:
    """Each entry of a transaction sorted by what rolling it back needs."""

    to_restore: list[Entry] = field(default_factory=list)
    already_before: list[Entry] = field(default_factory=list)
    changed: list[Entry] = field(default_factory=list)  # neither before nor after
    damaged: list[Damaged] = field(default_factory=list)  # backups needed but unverifiable

    @property
    def verifiable(self) -> bool:
        return not self.changed and not self.damaged


def plan_rollback(repo: Path, folder: Path | None, manifest: dict[str, Any]) -> RollbackPlan:
    """Compare every file with the manifest; `folder` None: the backups are gone."""
    plan = RollbackPlan()
    for entry in entries_of(manifest):
        side = classify(entry, file_state(repo / entry.path))
        if side == "before":
            plan.already_before.append(entry)
        elif side == "other":
            plan.changed.append(entry)
        else:
            if entry.before is not None:
                if folder is None:
                    plan.damaged.append(Damaged(repo / entry.path, "its backup folder is gone"))
                    continue
                try:
                    backup_bytes(folder, entry)
                except Damaged as exc:
                    plan.damaged.append(exc)
                    continue
            plan.to_restore.append(entry)
    return plan


def restore_entry(settings: Settings, repo: Path, folder: Path, entry: Entry) -> None:
    """Put `entry` back as it was before (verified backup), or remove it if it did not exist."""
    target = repo / entry.path
    if entry.before is None:
        durable.remove_file(target, what=entry.path)
        return
    before = entry.before
    data = backup_bytes(folder, entry)
    target.parent.mkdir(parents=True, exist_ok=True)
    owner = owner_before(entry)
    bak = folder / str(before["backup"])
    if durable.link_into_place(bak, target, what=entry.path, mode=before.get("mode"), owner=owner):
        return
    durable.atomic_write(target, data, what=entry.path, mode=before.get("mode"), owner=owner)


def remove_leftovers(repo: Path, manifest: dict[str, Any]) -> None:
    """Our temp files beside each target, then the folders the transaction created, if empty."""
    for entry in entries_of(manifest):
        durable.remove_temp_files(repo / entry.path, what=entry.path)
    for rel in reversed(manifest.get("created_dirs", [])):
        durable.remove_empty_dir(repo / rel, what=rel)


def execute_rollback(
    settings: Settings, repo: Path, folder: Path, manifest: dict[str, Any], plan: RollbackPlan
) -> None:
    for entry in reversed(plan.to_restore):
        restore_entry(settings, repo, folder, entry)
    remove_leftovers(repo, manifest)
