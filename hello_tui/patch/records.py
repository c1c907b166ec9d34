"""The on-disk records of the patch engine: manifests, the journal, markers and their checksums.

`<state>/backups/<name>/` is one transaction: `<relpath>.bak` (the old bytes of
each file it touched), optional attachments (`patch.txt`), `manifest.json`, and
`COMMITTED` once the transaction reached its commit point. `<state>/journal/open.json`
exists while a transaction writes to the tree; it names the folder and carries
a second copy of the manifest, so either record alone is enough to roll back.

Every record carries `checksum` (sha256 of its canonical JSON) and every backup
entry the sha256 of its `.bak`: a record that does not verify is *damaged*, and
a damaged record is reported, never acted on and never deleted.

Folder names sort in the order the transactions happened: a new name is always
greater than every existing one, even if the clock went backwards.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from hello_tui.config import Settings
from hello_tui.patch import durable
from hello_tui.patch.lines import sha256

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Any

FORMAT_VERSION = 2
MANIFEST = "manifest.json"
COMMITTED = "COMMITTED"
JOURNAL = "open.json"
NAME_FORMAT = "%Y%m%d_%H%M%S_%f"
TRASH = "trash"  # <state>/trash/: folders proven redundant, removed at the end of recovery
SET_ASIDE = "damaged"  # <state>/damaged/: records we could not verify, kept for the user


class Damaged(Exception):
    """A record that exists but does not verify (garbage, truncated, wrong checksum)."""

    def __init__(self, path: Path, why: str) -> None:
        super().__init__(f"{path}: {why}")
        self.path = path
        self.why = why


def backup_dir_label(settings: Settings, name: str) -> str:
    """A backup folder as the user reads it: relative to the repository."""
    return f"{settings.state_dir_name}/backups/{name}"


def _canonical(body: dict[str, Any]) -> bytes:
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8"
    )


def seal(body: dict[str, Any]) -> bytes:
    """The record as written: its fields plus `checksum`."""
    payload = {k: v for k, v in body.items() if k != "checksum"}
    sealed = {**payload, "checksum": "sha256:" + sha256(_canonical(payload))}
    return json.dumps(sealed, ensure_ascii=False, indent=1).encode("utf-8")


def unseal(raw: bytes, path: Path) -> dict[str, Any]:
    """The verified record, or Damaged."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise Damaged(path, "not valid JSON (garbage or truncated)") from None
    if not isinstance(data, dict):
        raise Damaged(path, "not a record")
    checksum = data.pop("checksum", None)
    if not isinstance(checksum, str):
        raise Damaged(path, "no checksum (written by an older hello-tui, or damaged)")
    if checksum != "sha256:" + sha256(_canonical(data)):
        raise Damaged(path, "wrong checksum")
    if data.get("version") != FORMAT_VERSION:
        raise Damaged(path, f"unknown format version {data.get('version')!r}")
    return data


def read_record(path: Path) -> dict[str, Any]:
    """A verified record; FileNotFoundError when absent, Damaged when it does not verify."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise Damaged(path, f"unreadable ({durable.describe_os_error(exc)})") from None
    return unseal(raw, path)


def state_label(settings: Settings, path: Path) -> str:
    """`path` as the user should read it: relative to the repo when inside it."""
    try:
        return Path(path).relative_to(settings.repo).as_posix()
    except ValueError:
        return str(path)


# ---- manifests ------------------------------------------------------------------------


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class Entry:
    """One file of a transaction: its state before and after (sha256, mode, owner)."""

    path: str
    before: dict[str, Any] | None  # {"sha256", "size", "mode", "uid", "gid", "backup"} or None
    after: dict[str, Any] | None  # {"sha256", "mode"} or None (the file is removed)

    @classmethod
    def from_json(cls, raw: Any) -> Entry:
        if not isinstance(raw, dict) or not isinstance(raw.get("path"), str):
            raise ValueError("bad entry")  # noqa: TRY004 - callers treat any ValueError as damage
        return cls(raw["path"], raw.get("before"), raw.get("after"))

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "before": self.before, "after": self.after}


def owner_before(entry: Entry) -> tuple[int, int] | None:
    """The (uid, gid) the file had before the transaction, as its manifest says; None if new.

    Whatever puts a file back as it was (a roll-back, an undo) gives it this owner, as it
    gives it the mode: a file removed and written again is a new inode, and a new file
    would otherwise take the owner of its folder.
    """
    before = entry.before or {}
    uid, gid = before.get("uid"), before.get("gid")
    return (uid, gid) if isinstance(uid, int) and isinstance(gid, int) else None


def entries_of(manifest: dict[str, Any]) -> list[Entry]:
    return [Entry.from_json(e) for e in manifest.get("entries", [])]


def read_manifest(folder: Path) -> dict[str, Any]:
    """The folder's verified manifest; FileNotFoundError or Damaged otherwise."""
    manifest = read_record(folder / MANIFEST)
    if manifest.get("name") != folder.name:
        raise Damaged(folder / MANIFEST, "it names another folder")
    try:
        entries_of(manifest)
    except ValueError:
        raise Damaged(folder / MANIFEST, "malformed entries") from None
    return manifest


def write_manifest(
    settings: Settings, folder: Path, manifest: dict[str, Any], *, sync_dir: bool = True
) -> None:
    """`sync_dir` False: the caller fsyncs the folder later (with the backups beside it)."""
    path = folder / MANIFEST
    durable.atomic_write(path, seal(manifest), what=state_label(settings, path), sync_dir=sync_dir)


def manifest_write(settings: Settings, folder: Path, manifest: dict[str, Any]) -> durable.FileWrite:
    """The manifest as a file for `durable.write_files` (the caller fsyncs its folder)."""
    path = folder / MANIFEST
    return durable.FileWrite(path, seal(manifest), what=state_label(settings, path))


def is_committed(folder: Path) -> bool:
    return os.path.lexists(folder / COMMITTED)


def committed_write(
    settings: Settings, folder: Path, manifest: dict[str, Any]
) -> durable.FileWrite:
    """The commit marker as a file to stage early: `place_committed` puts it in place."""
    path = folder / COMMITTED
    data = str(manifest.get("created_at", "")).encode()
    return durable.FileWrite(path, data, what=state_label(settings, path))


def place_committed(staged: durable.Staged) -> None:
    """The commit point: the staged (already fsynced) marker in place, its folder synced."""
    staged.place()
    with durable.writing(staged.file.what):
        durable.fsync_dir(staged.file.target.parent)


def mark_committed(settings: Settings, folder: Path, manifest: dict[str, Any]) -> None:
    place_committed(
        durable.write_files([], stage_also=[committed_write(settings, folder, manifest)])[0]
    )


# ---- the journal ----------------------------------------------------------------------


def journal_path(settings: Settings) -> Path:
    return settings.state.journal / JOURNAL


def write_journal(settings: Settings, manifest: dict[str, Any]) -> None:
    place_journal(durable.write_files([], stage_also=[journal_write(settings, manifest)])[0])


def journal_write(settings: Settings, manifest: dict[str, Any]) -> durable.FileWrite:
    """The journal as a file to stage early (its folder made first): `place_journal` opens it."""
    path = journal_path(settings)
    if not path.parent.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
        durable.fsync_dir(path.parent.parent)  # the new folder's own name
    body = {"version": FORMAT_VERSION, "backup": manifest["name"], "manifest": manifest}
    return durable.FileWrite(path, seal(body), what=state_label(settings, path))


def place_journal(staged: durable.Staged) -> None:
    """The journal opened: the staged (already fsynced) file in place, its folder synced."""
    staged.place()
    with durable.writing(staged.file.what):
        durable.fsync_dir(staged.file.target.parent)


def read_journal(settings: Settings) -> tuple[str, dict[str, Any]] | None:
    """(backup folder name, verified manifest copy); None when no journal; Damaged otherwise."""
    path = journal_path(settings)
    try:
        body = read_record(path)
    except FileNotFoundError:
        return None
    name, manifest = body.get("backup"), body.get("manifest")
    if not isinstance(name, str) or not isinstance(manifest, dict) or manifest.get("name") != name:
        raise Damaged(path, "malformed journal")
    try:
        entries_of(manifest)
    except ValueError:
        raise Damaged(path, "malformed entries") from None
    return name, manifest


def close_journal(settings: Settings) -> None:
    path = journal_path(settings)
    durable.remove_file(path, what=state_label(settings, path))


# ---- backup folders -------------------------------------------------------------------


# NAME_FORMAT's fields, read without strptime (whose import every command would pay).
_NAME_RE = re.compile(r"^(\d{4})(\d\d)(\d\d)_(\d\d)(\d\d)(\d\d)_(\d{6})$")


def parse_name(name: str) -> datetime | None:
    """The time a record folder's name stands for; None for a name that is not ours."""
    match = _NAME_RE.match(name)
    if match is None:
        return None
    try:
        year, month, day, hour, minute, second, micro = (int(f) for f in match.groups())
        return datetime(year, month, day, hour, minute, second, micro)
    except ValueError:
        return None


def record_folders(settings: Settings) -> list[Path]:
    """Every transaction folder, oldest first (other names in backups/ are not ours)."""
    root = settings.state.backups
    try:
        names = sorted(n for n in os.listdir(root) if parse_name(n) is not None)
    except FileNotFoundError:
        return []
    return [root / n for n in names if (root / n).is_dir() and not (root / n).is_symlink()]


def new_record_folder(settings: Settings) -> tuple[str, Path]:
    """A fresh folder whose name sorts after every existing one."""
    root = settings.state.backups
    root.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now()
    existing = record_folders(settings)
    if existing:
        newest = parse_name(existing[-1].name)
        assert newest is not None
        if stamp <= newest:
            stamp = newest + timedelta(microseconds=1)  # the clock went back: stay in order
    while True:
        name = stamp.strftime(NAME_FORMAT)
        path = root / name
        try:
            path.mkdir()
            return name, path
        except FileExistsError:
            stamp += timedelta(microseconds=1)


def backup_bytes(folder: Path, entry: Entry) -> bytes:
    """The verified old bytes of `entry`; Damaged when missing or not matching its sha256."""
    before = entry.before
    assert before is not None
    path = folder / str(before.get("backup"))
    try:
        data = path.read_bytes()
    except OSError:
        raise Damaged(path, "the backup file is missing or unreadable") from None
    if sha256(data) != before.get("sha256"):
        raise Damaged(path, "the backup file does not match its sha256")
    return data


def move_aside(settings: Settings, folder: Path, where: str) -> Path:
    """Move a folder out of backups/ into <state>/<where>/ (trash or damaged); never deletes."""
    dest_root = settings.state.root / where
    dest_root.mkdir(parents=True, exist_ok=True)
    dest = dest_root / folder.name
    n = 1
    while os.path.lexists(dest):
        dest = dest_root / f"{folder.name}.{n}"
        n += 1
    durable.rename(folder, dest, what=state_label(settings, folder))
    return dest
