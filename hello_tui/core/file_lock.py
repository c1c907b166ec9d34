"""An inter-process lock on a file: `fcntl.flock`, polled until a timeout.

Every command takes one (the repository's write lock, the notes' and todos'
locks, the MCP approvals'), and `filelock` 4 cost each of them about 12 ms to
import (decimal, platform, its soft-lock and lease machinery), more than a
whole small `hello-tui apply`. hello-tui runs on Linux only (its command sandbox
is Linux's), so a plain `flock` is all it needs.

It behaves as `filelock.FileLock` does where the callers rely on it, and locks
against one held by `filelock` in another process (both are `flock` on the same
file, which neither removes on release):
- `acquire()` waits up to `timeout` seconds (negative: for ever) and then raises
  `Timeout`, a `TimeoutError`; `acquire(blocking=False)` tries once;
- the same lock object is re-entrant within one thread (a counter); another
  thread, or another lock object on the same file, waits like another process;
- the lock file stays in place on release, so every waiter locks the same inode,
  and a file unlinked while it was being locked is opened afresh.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time
from _thread import get_ident

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command

if TYPE_CHECKING:
    from types import TracebackType
    from typing import Self

POLL_SECONDS = 0.05
# O_NONBLOCK: opening a FIFO planted at the path must not hang; O_NOFOLLOW: nor may a
# symbolic link there make us create or lock another file.
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_BUSY = (errno.EAGAIN, errno.EACCES)


class Timeout(TimeoutError):
    """The lock could not be acquired in time."""

    def __init__(self, lock_file: str) -> None:
        super().__init__(f"The file lock '{lock_file}' could not be acquired.")
        self.lock_file = lock_file


class FileLock:
    def __init__(self, lock_file: str | os.PathLike[str], timeout: float = -1.0) -> None:
        self.lock_file = os.fspath(lock_file)
        self.timeout = timeout
        self._fd: int | None = None
        self._owner: int | None = None  # the thread holding it
        self._depth = 0

    @property
    def is_locked(self) -> bool:
        return self._fd is not None

    def acquire(self, timeout: float | None = None, *, blocking: bool = True) -> None:
        if self._fd is not None and self._owner == get_ident():
            self._depth += 1
            return
        wait = self.timeout if timeout is None else timeout
        deadline = None if wait < 0 else time.monotonic() + wait
        while True:
            fd = self._try_lock()
            if fd is not None:
                self._fd, self._owner, self._depth = fd, get_ident(), 1
                return
            if not blocking or (deadline is not None and time.monotonic() >= deadline):
                raise Timeout(self.lock_file)
            time.sleep(POLL_SECONDS)

    def _try_lock(self) -> int | None:
        """A descriptor holding the lock, or None while someone else holds it."""
        fd = os.open(self.lock_file, _OPEN_FLAGS, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in _BUSY:
                return None
            raise
        if os.fstat(fd).st_nlink == 0:  # unlinked before we locked it: nobody waits on it
            os.close(fd)
            return self._try_lock()
        return fd

    def release(self) -> None:
        if self._fd is None or self._owner != get_ident():
            return
        self._depth -= 1
        if self._depth > 0:
            return
        fd, self._fd, self._owner = self._fd, None, None
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
