"""All-or-nothing writes: lock, stale guard, backups, journal, atomic replace, rollback, recovery.

A transaction, under the repository's write lock:
1. checks every target still has the hash recorded at plan time (else: conflict, nothing written);
2. copies every existing target to `<state>/backups/<YYYYmmdd_HHMMSS_ffffff>/<relpath>.bak`
   and writes `manifest.json` there;
3. opens the journal (`<state>/journal/open.json`, naming the backup folder);
4. writes each file atomically (temp file in the same folder, fsync, os.replace,
   fsync the folder), keeping its permission bits, or removes it;
5. marks the backup folder COMMITTED (the commit point), then closes the journal.
If anything fails in 4, every file is restored from the backups and every added
file removed. If the process dies, `recover()` (run before every transaction
and at startup) finds the open journal and does the same, unless the backup
folder was already marked COMMITTED.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from hello_tui.config import Settings
from hello_tui.patch.lines import sha256
from hello_tui.patch.paths import resolve_repo_path
from hello_tui.patch.types import PatchError

MANIFEST = "manifest.json"
COMMITTED = "COMMITTED"
ROLLED_BACK = "ROLLED_BACK"
JOURNAL = "open.json"
TMP_SUFFIX = ".hello-tmp"
LOCK_TIMEOUT_SECONDS = 30.0
ANY = "*"  # expect_hash value: take the file as it is now (undo and restore)

# Called with a label at each durable step ("backups", "journal", "write <path>",
# "committed", "closed"); the crash tests use it to kill the process at that point.
WRITE_POINT_HOOK: Callable[[str], None] | None = None


@dataclass
class Write:
    path: str  # repo-relative, POSIX
    data: bytes | None  # None: remove the file
    mode: int | None = None  # permission bits for the written file (None: default)
    expect_hash: str | None = ANY  # sha256 it must have now; None: it must not exist


def _write_point(label: str) -> None:
    if WRITE_POINT_HOOK is not None:
        WRITE_POINT_HOOK(label)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems do not support fsync on folders
    finally:
        os.close(fd)


def temp_path(target: Path) -> Path:
    return target.parent / f".{target.name}{TMP_SUFFIX}"


def atomic_write(target: Path, data: bytes, mode: int | None, point: str | None = None) -> None:
    """Temp file in the same folder, fsync, os.replace, fsync the folder.

    `point` names a write point reported just before the replace (the temp file is complete).
    """
    tmp = temp_path(target)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if mode is not None:
            os.fchmod(fd, mode)
        os.fsync(fd)
    finally:
        os.close(fd)
    if point is not None:
        _write_point(point)
    os.replace(tmp, target)
    _fsync_dir(target.parent)


def _remove(target: Path) -> None:
    if os.path.lexists(target):
        os.unlink(target)
        _fsync_dir(target.parent)


def _read_or_none(target: Path) -> bytes | None:
    if not os.path.lexists(target):
        return None
    if target.is_dir():
        raise PatchError(f"{target.name} is a directory, not a file.")
    return target.read_bytes()


def _missing_dirs(repo: Path, target: Path) -> list[str]:
    missing: list[str] = []
    parent = target.parent
    while parent != repo and not parent.exists():
        missing.append(parent.relative_to(repo).as_posix())
        parent = parent.parent
    return list(reversed(missing))


def _new_backup_dir(backups: Path) -> tuple[str, Path]:
    backups.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now()
    while True:
        name = stamp.strftime("%Y%m%d_%H%M%S_%f")
        path = backups / name
        try:
            path.mkdir()
            return name, path
        except FileExistsError:
            stamp += timedelta(microseconds=1)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"), None)


def lock_for(settings: Settings):
    from filelock import FileLock

    settings.state.root.mkdir(parents=True, exist_ok=True)
    return FileLock(str(settings.state.lock_file), timeout=LOCK_TIMEOUT_SECONDS)


def _locked(settings: Settings):
    from filelock import Timeout

    lock = lock_for(settings)
    try:
        lock.acquire()
    except Timeout:
        raise PatchError(
            "Another hello-tui is writing to this repository right now; nothing was written. Try again."
        ) from None
    return lock


def run_transaction(
    settings: Settings,
    writes: list[Write],
    *,
    kind: str,
    extra: dict[str, Any] | None = None,
    attachments: dict[str, bytes] | None = None,
) -> dict[str, Any]:
    """Apply `writes` all or nothing; return the manifest (its `name` is the backup folder).

    `attachments` are extra files kept in the backup folder (the patch text, for instance).
    """
    if not writes:
        raise PatchError("No files were modified: nothing to write.")
    repo = Path(os.path.realpath(settings.repo))
    lock = _locked(settings)
    try:
        _recover_locked(settings)
        return _run_locked(settings, repo, writes, kind, extra or {}, attachments or {})
    finally:
        lock.release()


def _run_locked(
    settings: Settings,
    repo: Path,
    writes: list[Write],
    kind: str,
    extra: dict[str, Any],
    attachments: dict[str, bytes],
) -> dict[str, Any]:
    targets: list[Path] = []
    current: list[bytes | None] = []
    conflicts: list[str] = []
    for w in writes:
        rel, target = resolve_repo_path(repo, w.path, settings.state_dir_name)
        data = _read_or_none(target)
        targets.append(target)
        current.append(data)
        if w.expect_hash == ANY:
            continue
        if w.expect_hash is None and data is not None:
            conflicts.append(f"{rel} now exists (it did not when the patch was planned)")
        elif w.expect_hash is not None and (data is None or sha256(data) != w.expect_hash):
            conflicts.append(f"{rel} changed on disk after the patch was planned")
    if conflicts:
        raise PatchError(
            "Conflict, nothing was written: "
            + "; ".join(conflicts)
            + ". Re-read the file(s) and make a new patch."
        )
    name, backup_dir = _new_backup_dir(settings.state.backups)
    entries: list[dict[str, Any]] = []
    created_dirs: list[str] = []
    for w, target, data in zip(writes, targets, current):
        entry: dict[str, Any] = {
            "path": w.path,
            "existed": data is not None,
            "backup": None,
            "mode": None,
            "after": "write" if w.data is not None else "delete",
        }
        if data is not None:
            entry["backup"] = w.path + ".bak"
            entry["mode"] = os.stat(target).st_mode & 0o7777
            bak = backup_dir / entry["backup"]
            bak.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(bak, data, None)
        if w.data is not None:
            for d in _missing_dirs(repo, target):
                if d not in created_dirs:
                    created_dirs.append(d)
        entries.append(entry)
    manifest: dict[str, Any] = {
        "version": 1,
        "name": name,
        "kind": kind,
        "created_at": datetime.now().isoformat(timespec="microseconds"),
        "entries": entries,
        "created_dirs": created_dirs,
        **extra,
    }
    for fname, blob in attachments.items():
        atomic_write(backup_dir / fname, blob, None)
    _write_json(backup_dir / MANIFEST, manifest)
    _write_point("backups")
    journal = settings.state.journal / JOURNAL
    _write_json(journal, {"backup": name})
    _write_point("journal")
    try:
        for w, target in zip(writes, targets):
            if w.data is None:
                _remove(target)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_write(target, w.data, w.mode, point=f"temp {w.path}")
            _write_point(f"write {w.path}")
        (backup_dir / COMMITTED).write_text(manifest["created_at"], encoding="utf-8")
        _fsync_dir(backup_dir)
        _write_point("committed")
    except BaseException as exc:
        _rollback(repo, backup_dir, manifest)
        _close_rolled_back(backup_dir, journal)
        if isinstance(exc, PatchError):
            raise
        if isinstance(exc, OSError):
            raise PatchError(
                f"Writing failed ({exc}); every file was restored from the backups, nothing changed."
            ) from None
        raise
    _remove(journal)
    _write_point("closed")
    return manifest


def _rollback(repo: Path, backup_dir: Path, manifest: dict[str, Any]) -> None:
    for entry in reversed(manifest["entries"]):
        target = repo / entry["path"]
        tmp = temp_path(target)
        if os.path.lexists(tmp):
            os.unlink(tmp)
        if entry["existed"]:
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(target, (backup_dir / entry["backup"]).read_bytes(), entry["mode"])
        else:
            _remove(target)
    for d in reversed(manifest.get("created_dirs", [])):
        try:
            (repo / d).rmdir()
        except OSError:
            pass  # not empty or already gone: either way not ours to remove


def _close_rolled_back(backup_dir: Path, journal: Path) -> None:
    (backup_dir / ROLLED_BACK).write_text("rolled back", encoding="utf-8")
    _fsync_dir(backup_dir)
    _remove(journal)
    shutil.rmtree(backup_dir, ignore_errors=True)


def _recover_locked(settings: Settings) -> list[str]:
    messages: list[str] = []
    repo = Path(os.path.realpath(settings.repo))
    journal = settings.state.journal / JOURNAL
    open_name = None
    if journal.exists():
        try:
            open_name = json.loads(journal.read_text(encoding="utf-8"))["backup"]
        except (OSError, ValueError, KeyError, TypeError):
            open_name = None
        backup_dir = settings.state.backups / str(open_name)
        if open_name and (backup_dir / COMMITTED).exists():
            _remove(journal)
            messages.append(f"completed the interrupted patch {open_name}")
        elif open_name and (backup_dir / MANIFEST).exists():
            manifest = json.loads((backup_dir / MANIFEST).read_text(encoding="utf-8"))
            _rollback(repo, backup_dir, manifest)
            _close_rolled_back(backup_dir, journal)
            messages.append(f"rolled back the interrupted patch {open_name}")
        else:
            _remove(journal)
    tmp_journal = temp_path(journal)
    if os.path.lexists(tmp_journal):
        os.unlink(tmp_journal)
    backups = settings.state.backups
    if backups.is_dir():
        for folder in backups.iterdir():
            if folder.name == open_name or not folder.is_dir():
                continue
            if (folder / ROLLED_BACK).exists() or not (folder / COMMITTED).exists():
                # Backups of a transaction that died before opening its journal, or was
                # rolled back: no file of the tree depends on them (we hold the lock).
                shutil.rmtree(folder, ignore_errors=True)
    return messages


def recover(settings: Settings) -> list[str]:
    """Finish or roll back a transaction interrupted by a crash; return what was done."""
    if not settings.state.root.exists():
        return []
    lock = _locked(settings)
    try:
        return _recover_locked(settings)
    finally:
        lock.release()
