"""All-or-nothing writes: lock, recovery, stale guard, space check, backups, journal, commit.

A transaction, under the repository's write lock (`settings.state.lock_file`,
a plain `flock`, see core/file_lock.py):
0. first completes or rolls back an interrupted one (`recovery.recover_locked`);
1. checks every target still has the hash recorded at plan time (else: conflict,
   nothing written), that none is a git control file (paths.py), and that the
   disk has room (else: refused, nothing written);
2. keeps the old bytes of every existing target in `<state>/backups/<name>/<relpath>.bak`
   (a hard link when possible, else a copy) and writes `manifest.json` there:
   each file's sha256, mode and owner before and after, the folders it creates,
   the undo-stack fields, and a checksum;
3. opens the journal (`<state>/journal/open.json`, naming the folder and
   carrying a second copy of the manifest);
4. writes each file atomically (`durable.atomic_write`) or removes it;
5. writes `COMMITTED` into the folder (the commit point), then closes the journal.
If anything fails in 3-5 before the commit point, every file is put back from
the backups (by hard link: no new space needed) and the folder goes. If the
process dies, the next command's recovery does the same from the records.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from hello_tui.config import Settings
from hello_tui.core.file_lock import FileLock, Timeout
from hello_tui.patch import durable, records
from hello_tui.patch.durable import TMP_SUFFIX, WriteError, describe_os_error
from hello_tui.patch.lines import sha256
from hello_tui.patch.paths import check_git_control_files, resolve_patch_paths
from hello_tui.patch.recovery import RecoveryBlocked, RecoveryReport, empty_trash, recover_locked
from hello_tui.patch.space import SpaceNeeds
from hello_tui.patch.types import PatchError

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ANY",
    "LOCK_TIMEOUT_SECONDS",
    "TMP_SUFFIX",
    "StaleFiles",
    "Write",
    "lock_for",
    "recover",
    "recovered_lock",
    "run_locked",
    "run_transaction",
    "write_lock",
]

LOCK_TIMEOUT_SECONDS = 30.0
ANY = "*"  # expect_hash value: take the file as it is now (restore, forced undo)
RECORD_BYTES_PER_ENTRY = 600  # a generous estimate of one entry in the manifest and journal


def _write_point(label: str) -> None:
    durable.write_point(label)


if TYPE_CHECKING:
    # Fields of the undo stack for the transaction about to be written, given its folder name.
    StackFields = Callable[[str], dict[str, Any]]


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class Write:
    """One file a transaction writes or removes, and what it must hold before."""

    path: str  # repo-relative, POSIX
    data: bytes | None  # None: remove the file
    mode: int | None = None  # permission bits for the written file (None: keep / default)
    expect_hash: str | None = ANY  # sha256 it must have now; None: it must not exist
    # (uid, gid) for the written file when running as root (undo: the owner it had);
    # None: an existing file keeps its owner, a new one takes its folder's
    owner: tuple[int, int] | None = None


class StaleFiles(PatchError):
    """Targets that no longer hold what the caller expected; nothing was written."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems  # (path, "changed" | "exists" | "missing")
        text = "; ".join(
            f"{p} now exists (it did not when the patch was planned)"
            if why == "exists"
            else f"{p} changed on disk after the patch was planned"
            for p, why in problems
        )
        super().__init__(
            f"Conflict, nothing was written: {text}. Re-read the file(s) and make a new patch."
        )

    @property
    def paths(self) -> list[str]:
        return [p for p, _ in self.problems]


def lock_for(settings: Settings) -> FileLock:
    settings.state.ensure()
    return FileLock(str(settings.state.lock_file), timeout=LOCK_TIMEOUT_SECONDS)


@contextmanager
def write_lock(settings: Settings) -> Iterator[None]:
    lock = lock_for(settings)
    try:
        lock.acquire()
    except Timeout:
        raise PatchError(
            "Another hello-tui is writing to this repository right now; nothing was written. Try again."
        ) from None
    try:
        yield
    finally:
        lock.release()


def _recover_or_raise(settings: Settings) -> RecoveryReport:
    try:
        report = recover_locked(settings)
    except OSError as exc:
        raise PatchError(
            f"{_failure_message(exc)} while recovering an interrupted patch; it is not "
            "recovered yet and nothing else was changed (the next hello-tui command tries again)"
        ) from None
    if report.blocked:
        raise RecoveryBlocked(report)
    return report


@contextmanager
def recovered_lock(settings: Settings) -> Iterator[RecoveryReport]:
    """The write lock, with any interrupted transaction completed or rolled back first."""
    with write_lock(settings):
        yield _recover_or_raise(settings)


def recover(settings: Settings) -> list[str]:
    """Finish or roll back a transaction interrupted by a crash; return what was done.

    Raises PatchError (RecoveryBlocked), naming the folder, when a record cannot be
    verified; nothing is deleted then, and writes stay refused until it is resolved.
    """
    if not settings.state.root.exists():
        return []
    with write_lock(settings):
        return _recover_or_raise(settings).actions


def run_transaction(
    settings: Settings,
    writes: list[Write],
    *,
    kind: str,
    extra: dict[str, Any] | None = None,
    attachments: dict[str, bytes] | None = None,
    stack: StackFields | None = None,
    removed_dirs: list[str] | None = None,
    before_commit: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Apply `writes` all or nothing; return the manifest (its `name` is the backup folder).

    `attachments` are extra files kept in the backup folder (the patch text, for instance).
    `before_commit` runs once every file is written, before the commit point: when it
    raises, the files are put back as after any failed write (the user's editor is told
    the new text there, see `tools/editor_texts.py`). `removed_dirs` as for `run_locked`.
    """
    if not writes:
        raise PatchError("No files were modified: nothing to write.")
    with recovered_lock(settings):
        return run_locked(
            settings,
            writes,
            kind=kind,
            extra=extra,
            attachments=attachments,
            stack=stack,
            removed_dirs=removed_dirs,
            before_commit=before_commit,
        )


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class _Target:
    """A write, with the file as read under the lock."""

    write: Write
    rel: str
    path: Path
    data: bytes | None  # current bytes, None when absent
    st: os.stat_result | None


def _read_targets(settings: Settings, repo: Path, writes: list[Write]) -> list[_Target]:
    targets: list[_Target] = []
    seen: set[str] = set()
    problems: list[tuple[str, str]] = []
    paths = resolve_patch_paths(repo, [w.path for w in writes], settings.state_dir_name)
    resolved = [(w, rel, path) for w, (rel, path) in zip(writes, paths, strict=True)]
    # Planning checked this too, but the tree may have changed since (a command that made
    # a folder into a bare repository): checked again under the lock, right before writing.
    check_git_control_files(repo, {rel: w.data for w, rel, _ in resolved}, settings.state_dir_name)
    for w, rel, path in resolved:
        if rel in seen:
            raise PatchError(f"{rel} is written twice in one transaction; nothing was written.")
        seen.add(rel)
        st: os.stat_result | None
        data: bytes | None = None
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        else:
            if not stat.S_ISREG(st.st_mode):
                raise PatchError(f"{rel} is not a regular file; nothing was written.")
            data = path.read_bytes()
        targets.append(_Target(w, rel, path, data, st))
        if w.expect_hash == ANY:
            continue
        if w.expect_hash is None and data is not None:
            problems.append((rel, "exists"))
        elif w.expect_hash is not None and (data is None or sha256(data) != w.expect_hash):
            problems.append((rel, "missing" if data is None else "changed"))
    if problems:
        raise StaleFiles(problems)
    return targets


def _missing_dirs(repo: Path, target: Path) -> list[str]:
    missing: list[str] = []
    parent = target.parent
    while parent != repo and not os.path.lexists(parent):
        missing.append(parent.relative_to(repo).as_posix())
        parent = parent.parent
    return list(reversed(missing))


def _after_mode(t: _Target) -> int | None:
    if t.write.mode is not None:
        return t.write.mode
    return stat.S_IMODE(t.st.st_mode) if t.st is not None else None


def _check_space(settings: Settings, targets: list[_Target], attachments: dict[str, bytes]) -> None:
    needs = SpaceNeeds()
    backups = settings.state.backups
    backups.mkdir(parents=True, exist_ok=True)
    state_dev = os.stat(backups).st_dev
    for t in targets:
        if t.write.data is not None:
            needs.add(t.path.parent, len(t.write.data))
        if t.st is not None and (t.st.st_dev != state_dev or t.st.st_nlink > 1):
            needs.add(backups, t.st.st_size)  # cannot be a hard link: a copy
    record = RECORD_BYTES_PER_ENTRY * len(targets) + sum(len(b) for b in attachments.values())
    needs.add(backups, 2 * record)  # the manifest and the journal's copy
    needs.check(_plural(targets) if targets else "the record")


def _failure_message(exc: BaseException) -> str:
    if isinstance(exc, WriteError):
        return f"{exc.describe()} while writing {exc.what}"
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        return f"{describe_os_error(exc)}{where}"
    return f"{type(exc).__name__}: {exc}"


def run_locked(
    settings: Settings,
    writes: list[Write],
    *,
    kind: str,
    extra: dict[str, Any] | None = None,
    attachments: dict[str, bytes] | None = None,
    stack: StackFields | None = None,
    removed_dirs: list[str] | None = None,
    allow_empty: bool = False,
    before_commit: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """The transaction itself; the caller holds the write lock and has recovered.

    `removed_dirs` (repo-relative, parents first) are removed after the writes when
    they are empty then. `allow_empty`: a record with no file (undo of a patch whose
    files are already as before still moves the undo stack).
    """
    if not writes and not allow_empty:
        raise PatchError("No files were modified: nothing to write.")
    attachments = attachments or {}
    repo = Path(os.path.realpath(settings.repo))
    try:
        targets = _read_targets(settings, repo, writes)
        _check_space(settings, targets, attachments)
        name, folder = records.new_record_folder(settings)
    except PatchError:
        raise
    except OSError as exc:
        raise PatchError(f"{_failure_message(exc)}; nothing was changed") from None
    staged: list[durable.Staged] = []  # the journal, then the commit marker
    try:
        manifest, written_in, kept = _write_records(
            settings, repo, name, folder, targets, kind, extra, attachments
        )
        manifest["removed_dirs"] = list(removed_dirs or [])
        if stack is not None:
            manifest.update(stack(name))
        # The attachments and the manifest are written and the journal staged beside its
        # name, all fsynced together; the backups and the manifest must be durable before
        # the journal lets the tree change: the folders they were written in are synced
        # (together, the record's own included), then the journal is put in place.
        kept.append(records.manifest_write(settings, folder, manifest))
        staged = durable.write_files(kept, stage_also=[records.journal_write(settings, manifest)])
        durable.sync_dirs(written_in, what=records.state_label(settings, folder))
        records.place_journal(staged.pop())
    except BaseException as exc:
        for one in staged:
            one.discard()
        try:
            records.close_journal(settings)  # in case it was written but its folder sync failed
        except OSError:
            pass
        _discard_folder(settings, folder)
        if isinstance(exc, PatchError):
            raise
        if isinstance(exc, OSError):
            raise PatchError(f"{_failure_message(exc)}; nothing was changed") from None
        raise
    try:
        # The commit marker is staged with the last files (its fsync in theirs); it is put
        # in place once every name in the tree is durable (their folders synced together).
        marker = records.committed_write(settings, folder, manifest)
        staged = _write_targets(repo, targets, manifest, marker)
        durable.sync_dirs([t.path.parent for t in targets], what=_plural(targets))
        for rel in reversed(manifest["removed_dirs"]):
            durable.remove_empty_dir(repo / rel, what=rel)
        if before_commit is not None:
            before_commit()
        records.place_committed(staged[0])
    except BaseException as exc:
        for one in staged:
            one.discard()
        problem = _roll_back_now(settings, repo, folder, manifest)
        if problem is not None:
            raise PatchError(
                f"{_failure_message(exc)}; rolling back failed too ({problem}): the next "
                "hello-tui command finishes the roll-back (`hello-tui recover` shows it)"
            ) from None
        if isinstance(exc, PatchError):
            raise
        if isinstance(exc, OSError):
            raise PatchError(f"{_failure_message(exc)}; nothing was changed") from None
        raise
    try:
        records.close_journal(settings)
    except OSError:
        pass  # committed already; the next recovery closes the journal
    _write_point("closed")
    return manifest


def _write_records(
    settings: Settings,
    repo: Path,
    name: str,
    folder: Path,
    targets: list[_Target],
    kind: str,
    extra: dict[str, Any] | None,
    attachments: dict[str, bytes],
) -> tuple[dict[str, Any], list[Path], list[durable.FileWrite]]:
    """The manifest, the folders whose new names (backups, attachments) the caller makes
    durable, and the attachments, for the caller to write with the manifest."""
    entries: list[dict[str, Any]] = []
    created_dirs: list[str] = []
    backup_dirs: list[Path] = [folder]
    for t in targets:
        before: dict[str, Any] | None = None
        if t.data is not None and t.st is not None:
            bak = t.rel + ".bak"
            # _read_targets has checked the data against an expected hash: it is that one.
            checked = t.write.expect_hash not in (ANY, None)
            before = {
                "sha256": t.write.expect_hash if checked else sha256(t.data),
                "size": len(t.data),
                "mode": stat.S_IMODE(t.st.st_mode),
                "uid": t.st.st_uid,
                "gid": t.st.st_gid,
                "backup": bak,
            }
            _keep_backup(settings, t, folder / bak)
            backup_dirs.append((folder / bak).parent)
        after = None
        if t.write.data is not None:
            after = {"sha256": sha256(t.write.data), "mode": _after_mode(t)}
            for d in _missing_dirs(repo, t.path):
                if d not in created_dirs:
                    created_dirs.append(d)
        entries.append(records.Entry(t.rel, before, after).to_json())
    kept = [
        durable.FileWrite(folder / fname, blob, what=records.state_label(settings, folder / fname))
        for fname, blob in attachments.items()
    ]
    backup_dirs.append(settings.state.backups)  # the record's folder is a new name there
    backup_dirs.append(settings.state.root)  # and backups/ may be one in the state folder
    manifest = {
        "version": records.FORMAT_VERSION,
        "name": name,
        "kind": kind,
        "created_at": datetime.now().isoformat(timespec="microseconds"),
        "entries": entries,
        "created_dirs": created_dirs,
        **(extra or {}),
    }
    return manifest, backup_dirs, kept


def _keep_backup(settings: Settings, t: _Target, bak: Path) -> None:
    assert t.data is not None and t.st is not None
    what = records.state_label(settings, bak)
    with durable.writing(what):
        bak.parent.mkdir(parents=True, exist_ok=True)
    # A file with other names could change through them: only a sole name is linked.
    if t.st.st_nlink == 1 and durable.hard_link_backup(t.path, bak, what=what):
        return
    durable.atomic_write(bak, t.data, what=what, mode=0o600, sync_dir=False)


def _plural(targets: list[_Target]) -> str:
    return targets[0].rel if len(targets) == 1 else f"{len(targets)} files"


def _write_targets(
    repo: Path, targets: list[_Target], manifest: dict[str, Any], marker: durable.FileWrite
) -> list[durable.Staged]:
    """Every target written or removed, in order; consecutive writes have their fsyncs
    issued together (`durable.write_files`), and a removal waits for the writes before
    it (a file removed may be the folder a later one is written in). `marker` is staged
    with the last writes, and returned."""
    pending: list[durable.FileWrite] = []
    for t in targets:
        if t.write.data is None:
            durable.write_files(pending)
            pending = []
            durable.remove_file(t.path, what=t.rel, sync_dir=False)
            continue
        dirs = [d for d in manifest["created_dirs"] if t.rel.startswith(d + "/")]
        durable.make_dirs(repo, dirs, label=lambda rel: rel)
        owner = t.write.owner
        if owner is None and t.st is not None:
            owner = (t.st.st_uid, t.st.st_gid)
        pending.append(
            durable.FileWrite(t.path, t.write.data, what=t.rel, mode=_after_mode(t), owner=owner)
        )
    return durable.write_files(pending, stage_also=[marker])


def _roll_back_now(
    settings: Settings, repo: Path, folder: Path, manifest: dict[str, Any]
) -> str | None:
    """Undo the writes of a failed transaction; None when done, else what stopped it."""
    # Imported here: a transaction that succeeds (and a recovery with nothing
    # interrupted) never needs the roll-back, and its import cost every apply 2 %.
    from hello_tui.patch.rollback import execute_rollback, plan_rollback

    try:
        # Every file was written once COMMITTED exists; without it, recovery rolls back.
        durable.remove_file(folder / records.COMMITTED, what="the commit marker")
        plan = plan_rollback(repo, folder, manifest)
        if not plan.verifiable:
            names = [e.path for e in plan.changed] + [str(d.path) for d in plan.damaged]
            return "changed meanwhile: " + ", ".join(names)
        execute_rollback(settings, repo, folder, manifest, plan)
        records.close_journal(settings)
    except OSError as exc:
        return _failure_message(exc)
    _discard_folder(settings, folder)
    return None


def _discard_folder(settings: Settings, folder: Path) -> None:
    """A folder no file depends on (never journaled, or rolled back): to the trash, then gone.

    When it cannot be moved (the disk that failed the transaction refuses the rename too),
    it is removed where it is: unlinking needs no new blocks. Left in place, the next
    recovery would take it for a transaction interrupted by a crash, and an `undo` then
    would call that the undo and revert nothing, after this command had said that
    nothing was changed. Only a disk that refuses even that leaves it (and the next
    recovery removes it).
    """
    try:
        records.move_aside(settings, folder, records.TRASH)
        empty_trash(settings)
    except OSError:
        from hello_tui.core.tree_removal import remove_tree  # only on a failing disk

        remove_tree(folder)
