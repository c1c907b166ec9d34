"""Crash and fault harness for the patch engine's durable write points.

`run_killed(fn, n)` runs `fn` in a forked child that SIGKILLs itself at write
point n (1-based; None: never) and reports every label it passed. Forking from
the already-imported test process keeps hundreds of real kills affordable.

`Fault` raises an OSError at write points in-process: ENOSPC the way a full
disk fails (every later step that needs new blocks fails too; renames,
removals and links still work), or EIO once or for good.

`next_command(argv)` runs a real CLI command in-process and returns its exit
code and output; any exception escaping `main` fails the test.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import select
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from hello_tui.cli import main
from hello_tui.patch import durable, records

CHILD_DEADLINE_SECONDS = 60.0
# Steps that need new data blocks or inodes fail on a full disk; the rest do not.
NEEDS_SPACE = ("open ", "fsync ", "mkdir ")

# Imports and lazy initialisations done before any fork, so a child never
# needs the import lock another thread might hold at fork time.
datetime.strptime("20240101_000000_000000", records.NAME_FORMAT)
import hello_tui.commands.patch_commands
import hello_tui.store.notes  # noqa: F401


@dataclass
class ChildRun:
    killed: bool
    labels: list[str]
    outcome: str  # "ok", "error <type>: <message>", or "" when killed


def run_killed(fn: Callable[[], object], kill_at: int | None) -> ChildRun:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read_fd)
        count = 0

        def hook(label: str) -> None:
            nonlocal count
            count += 1
            os.write(write_fd, (label + "\n").encode())
            if count == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

        durable.WRITE_POINT_HOOK = hook
        try:
            fn()
            os.write(write_fd, b"\x00ok\n")
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            os.write(write_fd, f"\x00error {type(exc).__name__}: {exc}\n".encode())
        os._exit(0)
    os.close(write_fd)
    chunks: list[bytes] = []
    deadline = time.monotonic() + CHILD_DEADLINE_SECONDS
    while True:
        ready, _, _ = select.select([read_fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read_fd)
            raise AssertionError("the child hung")
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    labels, outcome = [], ""
    for line in b"".join(chunks).decode().splitlines():
        if line.startswith("\x00"):
            outcome = line[1:]
        else:
            labels.append(line)
    return ChildRun(killed, labels, outcome)


def count_points(fn: Callable[[], object]) -> list[str]:
    run = run_killed(fn, None)
    assert run.outcome == "ok", run.outcome
    return run.labels


@dataclass
class Fault:
    """Raise at the n-th write point: ENOSPC (sticky for steps needing space) or EIO."""

    at: int
    errno_: int = errno.ENOSPC
    sticky: bool = True
    seen: list[str] = field(default_factory=list)
    fired: str | None = None

    def __call__(self, label: str) -> None:
        if label == "closed":
            return  # the end of a transaction, not a write
        self.seen.append(label)
        n = len(self.seen)
        if n < self.at:
            return
        if n == self.at or (self.sticky and self._applies(label)):
            self.fired = self.fired or label
            raise OSError(self.errno_, os.strerror(self.errno_))

    def _applies(self, label: str) -> bool:
        return self.errno_ != errno.ENOSPC or label.startswith(NEEDS_SPACE)


@contextlib.contextmanager
def hook(fn: Callable[[str], None] | None) -> Iterator[None]:
    old = durable.WRITE_POINT_HOOK
    durable.WRITE_POINT_HOOK = fn
    try:
        yield
    finally:
        durable.WRITE_POINT_HOOK = old


@dataclass
class Ran:
    code: int
    out: str
    err: str


def next_command(*argv: str, stdin: str | None = None) -> Ran:
    """A CLI command in this process (its real `main`), as the next thing a user runs."""
    import sys

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = _BytesStdin(stdin.encode())
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        sys.stdin = old_stdin
    assert "Traceback" not in err.getvalue() + out.getvalue()
    return Ran(code, out.getvalue(), err.getvalue())


class _BytesStdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


# Hundreds of transactions per test: on a memory filesystem fsync costs nothing, and a
# SIGKILL (unlike a power cut) loses nothing that fsync would have kept, so the
# crash semantics are the same. Falls back to pytest's temp folder elsewhere.
MEMORY_FS = Path("/dev/shm")


@contextlib.contextmanager
def scratch_root(fallback: Path) -> Iterator[Path]:
    if MEMORY_FS.is_dir() and os.access(MEMORY_FS, os.W_OK):
        root = Path(tempfile.mkdtemp(prefix="hello-tui-crash-", dir=MEMORY_FS))
        try:
            yield root
        finally:
            shutil.rmtree(root, ignore_errors=True)
    else:
        yield fallback


def leftovers(repo: Path) -> list[str]:
    """Our temp files anywhere under repo (the state folder included)."""
    return [p.as_posix() for p in repo.rglob("*") if durable.is_temp_name(p.name)]
