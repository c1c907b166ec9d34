"""Durable file operations for the patch engine, each one announced at a write point.

Every operation that changes the disk on behalf of a transaction, its
recovery, undo or redo goes through here:
- `atomic_write`: a temp file beside the target (created with O_EXCL|O_NOFOLLOW
  under an unpredictable name, so a planted symlink can never redirect it),
  fsync, os.replace, fsync of the folder; the temp file is gone on any failure;
- `link_into_place`: puts a backup back by hard link, which needs no new data
  blocks — the way back from a full disk;
- `hard_link_backup`, `remove_file`, `make_dirs`, `remove_empty_dir`, `rename`.

`write_point(label)` is called just before each of those steps (and once more
after the last step of a transaction); the crash and fault tests set
`WRITE_POINT_HOOK` to kill the process there or to raise ENOSPC / EIO. Any
OSError becomes a `WriteError` naming what was being written.

When running as root, rewritten files keep their owner and group, and new
files and folders take the owner and group of the folder they are created in.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from hello_tui.core.lazy_regex import lazy_compile

TMP_SUFFIX = ".hello-tmp"
TMP_TOKEN_BYTES = 6
# `.name.<12 hex>.hello-tmp`: only names of exactly this shape are ever cleaned up as ours.
_TMP_RE = lazy_compile(
    r"^\.(?P<name>.+)\.[0-9a-f]{" + str(2 * TMP_TOKEN_BYTES) + "}" + re.escape(TMP_SUFFIX) + "$"
)
_TMP_ATTEMPTS = 32


def temp_token() -> str:
    """The unpredictable part of a temp file's name (os.urandom: `secrets` would cost
    every command its import of hmac and hashlib)."""
    return os.urandom(TMP_TOKEN_BYTES).hex()


# Called with a label before each durable step; tests use it to kill or fail the process there.
WRITE_POINT_HOOK: Callable[[str], None] | None = None


class WriteError(OSError):
    """An OSError while writing `what` (a repo- or state-relative path, for messages)."""

    def __init__(self, cause: OSError, what: str) -> None:
        super().__init__(cause.errno, cause.strerror or str(cause))
        self.what = what
        self.cause = cause

    def describe(self) -> str:
        return describe_os_error(self.cause)


def describe_os_error(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on device"
    if exc.errno == errno.EDQUOT:
        return "disk quota exceeded"
    if exc.errno == errno.EIO:
        return "input/output error"
    text = exc.strerror or str(exc) or type(exc).__name__
    return text[:1].lower() + text[1:]


def write_point(label: str) -> None:
    if WRITE_POINT_HOOK is not None:
        WRITE_POINT_HOOK(label)


@contextmanager
def writing(what: str) -> Iterator[None]:
    """Turn any OSError inside into a WriteError that names `what`."""
    try:
        yield
    except WriteError:
        raise
    except OSError as exc:
        raise WriteError(exc, what) from exc


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise  # a real I/O error; "not supported on folders" is not one
    finally:
        os.close(fd)


def is_temp_name(name: str) -> bool:
    return _TMP_RE.match(name) is not None


def temp_names_for(target: Path) -> list[Path]:
    """Leftover temp files of ours for `target` (never follows links, never matches other names)."""
    try:
        names = os.listdir(target.parent)
    except OSError:
        return []
    out = []
    for name in names:
        m = _TMP_RE.match(name)
        if m and m.group("name") == target.name:
            out.append(target.parent / name)
    return out


def _open_temp(target: Path) -> tuple[int, Path]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    for _ in range(_TMP_ATTEMPTS):
        tmp = target.parent / f".{target.name}.{temp_token()}{TMP_SUFFIX}"
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue  # someone planted that name (perhaps as a symlink): never touch it
    raise FileExistsError(errno.EEXIST, "could not create a fresh temporary file", str(target))


def _running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def owner_of(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_uid, st.st_gid


def _new_file_owner(target: Path, owner: tuple[int, int] | None) -> tuple[int, int] | None:
    if not _running_as_root():
        return None
    return owner if owner is not None else owner_of(target.parent)


def atomic_write(
    target: Path,
    data: bytes,
    *,
    what: str,
    mode: int | None = None,
    owner: tuple[int, int] | None = None,
    sync_dir: bool = True,
) -> None:
    """Write `data` to `target` atomically; `mode` None gives a new file the umask default.

    `owner` (uid, gid) is applied when running as root; None then means "like the folder".
    `sync_dir` False: the caller fsyncs the folder later (once for many files).
    """
    write_files([FileWrite(target, data, what=what, mode=mode, owner=owner)])
    if sync_dir:
        with writing(what):
            fsync_dir(target.parent)


class FileWrite:
    """One file for `write_files`: what `atomic_write` takes."""

    __slots__ = ("data", "mode", "owner", "target", "what")

    def __init__(
        self,
        target: Path,
        data: bytes,
        *,
        what: str,
        mode: int | None = None,
        owner: tuple[int, int] | None = None,
    ) -> None:
        self.target, self.data, self.what, self.mode, self.owner = target, data, what, mode, owner


# At most this many temp files are open at once; their fsyncs run on this many threads
# (the calling one included). Four commit 21 small files' fsyncs on ext4 as fast as eight,
# and each thread more costs its start on every group of fsyncs.
WRITE_BATCH = 64
FSYNC_THREADS = 4


def write_files(
    files: list[FileWrite], *, stage_also: list[FileWrite] | None = None
) -> list[Staged]:
    """`atomic_write` of each file in order, without syncing folders, their fsyncs together.

    Each file's data is durable before its name is replaced, as with `atomic_write`:
    every temp file is written, then all are fsynced at once (a journaling filesystem
    commits them together rather than once per file), then each replaces its target.
    On a failure the temp files not yet in place are removed; those in place stay.

    `stage_also`: files written and fsynced with the last batch but left under their
    temp names, returned in order for the caller to `place` (or `discard`) later: a
    record whose content is known early (a commit marker) then costs no fsync of its own.
    """
    extra = list(stage_also or [])
    batches = [files[i : i + WRITE_BATCH] for i in range(0, len(files), WRITE_BATCH)] or [[]]
    kept: list[Staged] = []
    for n, batch in enumerate(batches):
        last = n == len(batches) - 1
        staged = stage_files(batch + (extra if last else []))
        try:
            for one in staged[: len(batch)]:
                one.place()
        except BaseException:
            for one in staged:
                one.discard()
            raise
        if last:
            kept = staged[len(batch) :]
    return kept


class Staged:
    """A file written and fsynced under a temp name beside its target, not in place yet."""

    __slots__ = ("file", "placed", "tmp")

    def __init__(self, file: FileWrite, tmp: Path) -> None:
        self.file, self.tmp, self.placed = file, tmp, False

    def place(self) -> None:
        """Replace the target with the temp file (its folder's fsync is the caller's)."""
        with writing(self.file.what):
            write_point(f"replace {self.file.what}")
            os.replace(self.tmp, self.file.target)
        self.placed = True

    def discard(self) -> None:
        """Remove the temp file unless it was placed."""
        if not self.placed:
            _unlink_quietly(self.tmp)
            self.placed = True  # nothing left to place or remove


def stage_files(files: list[FileWrite]) -> list[Staged]:
    """Write each file to a fresh temp file beside its target and fsync them all together;
    nothing is replaced. On a failure every temp file is removed."""
    fds: list[int] = []  # the open temp files
    temps: list[Path] = []
    try:
        for f in files:
            with writing(f.what):
                write_point(f"open {f.what}")
                fd, tmp = _open_temp(f.target)
                fds.append(fd)
                temps.append(tmp)
                _fill(fd, f)
        errors = _fsync_together(fds)
        for f in files:
            with writing(f.what):
                os.close(fds.pop(0))
        for f, error in zip(files, errors, strict=True):
            if error is not None:
                raise WriteError(error, f.what) from error
    except BaseException:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        for tmp in temps:
            _unlink_quietly(tmp)
        raise
    return [Staged(f, tmp) for f, tmp in zip(files, temps, strict=True)]


def _fill(fd: int, f: FileWrite) -> None:
    view = memoryview(f.data)
    while view:
        view = view[os.write(fd, view) :]
    write_point(f"fsync {f.what}")
    # Owner first: the kernel clears setuid and setgid on a chown, even root's.
    chown_to = _new_file_owner(f.target, f.owner)
    if chown_to is not None:
        os.fchown(fd, *chown_to)
    os.fchmod(fd, f.mode if f.mode is not None else 0o666 & ~_umask())


def _fsync_together(fds: list[int]) -> list[OSError | None]:
    """fsync every descriptor, up to FSYNC_THREADS at a time; each one's error, or None."""
    errors: list[OSError | None] = [None] * len(fds)
    pending = list(reversed(range(len(fds))))

    def work() -> None:
        while pending:
            try:
                i = pending.pop()
            except IndexError:  # another thread took the last one
                return
            try:
                os.fsync(fds[i])
            except OSError as exc:
                errors[i] = exc

    finished: list[_thread.LockType] = []  # a held lock per helper started; it releases it
    try:
        if len(fds) > 1:  # a one-file write needs no thread
            # Plain `_thread` threads (loaded with the interpreter): `threading` would cost
            # its import, and each start would wait for its thread to be running.
            def helper(done: _thread.LockType) -> None:
                try:
                    work()
                finally:
                    done.release()

            for _ in range(min(FSYNC_THREADS, len(fds)) - 1):
                done = _thread.allocate_lock()
                done.acquire()
                _thread.start_new_thread(helper, (done,))
                finished.append(done)  # started: it will release it
        work()
    finally:
        pending.clear()  # interrupted: no helper starts another fsync on a closing descriptor
        for done in finished:
            done.acquire()  # joined: its fsync is over
    return errors


_UMASK: int | None = None


def _umask() -> int:
    global _UMASK
    if _UMASK is None:
        # os.umask can only be read by setting it; done once, at the first write.
        current = os.umask(0o022)
        os.umask(current)
        _UMASK = current
    return _UMASK


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def hard_link_backup(source: Path, backup: Path, *, what: str) -> bool:
    """Keep `source`'s current inode under `backup`; False when the filesystem cannot link.

    Linking costs no data blocks and no copy. The transaction replaces the tree's
    file with a new inode, so the backup then holds the old bytes alone.
    """
    with writing(what):
        write_point(f"link {what}")
        try:
            os.link(source, backup, follow_symlinks=False)
        except OSError as exc:
            if exc.errno in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EACCES):
                return False
            raise
        return True


def link_into_place(
    backup: Path,
    target: Path,
    *,
    what: str,
    mode: int | None = None,
    owner: tuple[int, int] | None = None,
) -> bool:
    """Put `backup`'s inode at `target` (link to a temp name, replace); False if it cannot link.

    `mode` and `owner` (applied when running as root) are set on the temp name, before
    it replaces the target: a kill right after the replace then leaves the file as it
    was in every respect, and a copied backup (mode 0600) never shows in the tree.
    """
    with writing(what):
        write_point(f"link {what}")  # a new name for an existing inode: no data blocks
        for _ in range(_TMP_ATTEMPTS):
            tmp = target.parent / f".{target.name}.{temp_token()}{TMP_SUFFIX}"
            try:
                os.link(backup, tmp, follow_symlinks=False)
                break
            except FileExistsError:
                continue
            except OSError as exc:
                if exc.errno in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                    return False
                raise
        else:
            raise FileExistsError(errno.EEXIST, "could not create a fresh temporary file")
        try:
            set_owner_and_mode(tmp, owner, mode)
            write_point(f"replace {what}")
            os.replace(tmp, target)
        except BaseException:
            _unlink_quietly(tmp)
            raise
        fsync_dir(target.parent)
        return True


def set_owner_and_mode(path: Path, owner: tuple[int, int] | None, mode: int | None) -> None:
    """Give `path` its owner (when running as root), then its mode, in that order: the
    kernel clears setuid and setgid on every chown, even root's to the same owner."""
    if owner is not None and _running_as_root():
        os.chown(path, *owner, follow_symlinks=False)
    if mode is not None:
        os.chmod(path, mode, follow_symlinks=False)


def remove_file(target: Path, *, what: str, sync_dir: bool = True) -> None:
    with writing(what):
        if not os.path.lexists(target):
            return
        write_point(f"remove {what}")
        os.unlink(target)
        if sync_dir:
            fsync_dir(target.parent)


def sync_dirs(folders: list[Path], *, what: str) -> None:
    """Make the names created, replaced or removed in `folders` durable: one fsync per
    folder, all issued together (a journaling filesystem commits them at once)."""
    with writing(what):
        fds: list[int] = []
        try:
            for folder in dict.fromkeys(folders):
                try:
                    fds.append(os.open(folder, os.O_RDONLY | os.O_DIRECTORY))
                except OSError:
                    continue  # as fsync_dir: a folder that cannot be opened has nothing to sync
            errors = _fsync_together(fds)
        finally:
            for fd in fds:
                os.close(fd)
        for error in errors:
            if error is not None and error.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
                raise error  # a real I/O error; "not supported on folders" is not one


def remove_temp_files(target: Path, *, what: str) -> list[Path]:
    removed = []
    for tmp in temp_names_for(target):
        remove_file(tmp, what=f"{what} (temporary file)")
        removed.append(tmp)
    return removed


def make_dirs(root: Path, rels: list[str], *, label: Callable[[str], str]) -> None:
    """Create the folders `rels` (repo-relative, parents first) below `root`."""
    for rel in rels:
        path = root / rel
        if os.path.isdir(path):
            continue
        with writing(label(rel)):
            write_point(f"mkdir {label(rel)}")
            os.mkdir(path)
            owner = _new_file_owner(path, None)
            if owner is not None:
                os.chown(path, *owner)
            fsync_dir(path.parent)


def remove_empty_dir(path: Path, *, what: str) -> bool:
    with writing(what):
        if not os.path.isdir(path) or os.path.islink(path):
            return False
        try:
            if any(os.scandir(path)):
                return False
        except OSError:
            return False
        write_point(f"rmdir {what}")
        try:
            os.rmdir(path)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
                return False
            raise
        fsync_dir(path.parent)
        return True


def rename(source: Path, dest: Path, *, what: str) -> None:
    with writing(what):
        write_point(f"rename {what}")
        os.rename(source, dest)
        fsync_dir(source.parent)
        if dest.parent != source.parent:
            fsync_dir(dest.parent)
