"""Backups as history: listing them, undoing the last transaction, restoring from any backup.

Every committed transaction leaves `<state>/backups/<name>/` with the old
bytes of each file it touched and a manifest. Undo and restore are
transactions themselves (with their own backups), so they can be undone too.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hello_tui.config import Settings
from hello_tui.patch.transaction import ANY, COMMITTED, MANIFEST, Write, run_transaction
from hello_tui.patch.types import CommitResult, PatchError


@dataclass
class BackupInfo:
    name: str
    path: Path
    created_at: str
    files: list[str]  # relative paths whose old content this backup holds
    kind: str = "patch"  # patch | undo | restore
    added: list[str] = field(default_factory=list)  # files the transaction created


def _load_manifest(folder: Path) -> dict[str, Any] | None:
    if not (folder / COMMITTED).exists():
        return None
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) and "entries" in manifest else None


def list_backups(settings: Settings) -> list[BackupInfo]:
    """Committed backups, newest first."""
    root = settings.state.backups
    if not root.is_dir():
        return []
    infos: list[BackupInfo] = []
    for folder in sorted(root.iterdir(), key=lambda p: p.name, reverse=True):
        manifest = _load_manifest(folder) if folder.is_dir() else None
        if manifest is None:
            continue
        entries = manifest["entries"]
        infos.append(
            BackupInfo(
                name=folder.name,
                path=folder,
                created_at=str(manifest.get("created_at", "")),
                files=[e["path"] for e in entries if e["existed"]],
                kind=str(manifest.get("kind", "patch")),
                added=[e["path"] for e in entries if not e["existed"] and e["after"] == "write"],
            )
        )
    return infos


def read_backup(settings: Settings, backup_name: str, relpath: str) -> bytes | None:
    """The bytes a committed backup holds for `relpath`; None when it holds none (e.g. added)."""
    folder = settings.state.backups / backup_name
    manifest = _load_manifest(folder)
    for entry in (manifest or {}).get("entries", []):
        if entry.get("path") == relpath and entry.get("existed") and entry.get("backup"):
            try:
                return (folder / entry["backup"]).read_bytes()
            except OSError:
                return None
    return None


def backup_dir_label(settings: Settings, name: str) -> str:
    return f"{settings.state_dir_name}/backups/{name}"


def result_from_manifest(settings: Settings, manifest: dict[str, Any]) -> CommitResult:
    result = CommitResult(backup_dir=backup_dir_label(settings, manifest["name"]))
    for e in manifest["entries"]:
        if e["after"] == "write":
            (result.updated if e["existed"] else result.added).append(e["path"])
        elif e["existed"]:
            result.deleted.append(e["path"])
    return result


def _revert_writes(
    settings: Settings, folder: Path, manifest: dict[str, Any], only: str | None
) -> list[Write]:
    repo = Path(os.path.realpath(settings.repo))
    writes: list[Write] = []
    for e in manifest["entries"]:
        if only is not None and e["path"] != only:
            continue
        if e["existed"]:
            data = (folder / e["backup"]).read_bytes()
            writes.append(Write(e["path"], data, e["mode"], ANY))
        elif os.path.lexists(repo / e["path"]):
            writes.append(Write(e["path"], None, None, ANY))
    return writes


def _remove_empty_dirs(settings: Settings, created: list[str]) -> None:
    """Folders the reverted transaction created go too, if nothing else lives in them now."""
    repo = Path(os.path.realpath(settings.repo))
    for rel in reversed(created):
        try:
            (repo / rel).rmdir()
        except OSError:
            pass  # not empty (or already gone): it is not ours to remove any more


def _note(settings: Settings, title: str, content: str, tag: str) -> str | None:
    from hello_tui.patch.notes import write_note

    return write_note(settings, title, content, "action", tag)


def _revert(settings: Settings, info_name: str, only: str | None, kind: str) -> CommitResult:
    folder = settings.state.backups / info_name
    manifest = _load_manifest(folder)
    if manifest is None:
        raise PatchError(f"No committed backup named {info_name!r}; see the list of backups.")
    if only is not None and only not in {e["path"] for e in manifest["entries"]}:
        raise PatchError(f"Backup {info_name} holds nothing for {only}.")
    writes = _revert_writes(settings, folder, manifest, only)
    if not writes:
        raise PatchError(
            f"Nothing to restore from {info_name}: the files are already as it left them."
        )
    done = run_transaction(settings, writes, kind=kind, extra={"reverts": info_name, "only": only})
    if only is None:
        _remove_empty_dirs(settings, manifest.get("created_dirs", []))
    result = result_from_manifest(settings, done)
    title = "Patch undone" if kind == "undo" else "Files restored from backup"
    content = (
        f"Reverted {backup_dir_label(settings, info_name)}"
        + (f" (only {only})" if only else "")
        + ".\n\n"
        + "\n".join(result.summary_lines())
        + f"\n\nBackup of the state before this {kind}: {result.backup_dir}\n"
    )
    result.note_id = _note(
        settings, title, content, "patch_undone" if kind == "undo" else "patch_restored"
    )
    return result


def undo_last(settings: Settings) -> CommitResult:
    """Revert the newest committed transaction (a patch, an undo or a restore)."""
    backups = list_backups(settings)
    if not backups:
        raise PatchError("Nothing to undo: no applied patch has been recorded in this repository.")
    return _revert(settings, backups[0].name, None, "undo")


def restore_from_backup(
    settings: Settings, backup_name: str, relpath: str | None = None
) -> CommitResult:
    """Put back one file (or every file) as it was before the transaction `backup_name`."""
    return _revert(settings, backup_name, relpath, "restore")
