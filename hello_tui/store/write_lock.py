"""Writing under the repository's write lock without ever blocking the event loop.

The patch engine takes `settings.state.lock_file` (a `core.file_lock.FileLock`) for
every commit, undo and restore, and would wait for it synchronously. So the
async callers first wait here: the lock is probed on a worker thread every
POLL_SECONDS, the caller is told once that it waits, and a cancellation (Esc)
simply ends the wait. When the lock is free the write runs on a worker
thread. A write that has started is never abandoned halfway: if the caller is
cancelled meanwhile, the write's result is still returned (so what the caller
records matches the disk) and the cancellation is delivered at the caller's
next await.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from hello_tui.core.file_lock import FileLock, Timeout

POLL_SECONDS = 0.1
WAITING_TEXT = "Waiting for another hello-tui writing this repo… (Esc cancels)"

T = TypeVar("T")


def lock_is_free(lock_file: Path) -> bool:
    """Whether nobody holds the lock right now (takes and releases it at once)."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_file))
    try:
        lock.acquire(blocking=False)
    except Timeout:
        return False
    lock.release()
    return True


async def wait_until_free(
    lock_file: Path,
    on_wait: Callable[[], None] | None = None,
    *,
    poll: float = POLL_SECONDS,
) -> bool:
    """Return once the lock is free; True if it had to wait. Cancelling ends the wait."""
    waited = False
    while not await asyncio.to_thread(lock_is_free, lock_file):
        if not waited and on_wait is not None:
            on_wait()
        waited = True
        await asyncio.sleep(poll)
    return waited


async def write_when_free(
    lock_file: Path,
    work: Callable[[], T],
    on_wait: Callable[[], None] | None = None,
    on_free: Callable[[], None] | None = None,
    *,
    poll: float = POLL_SECONDS,
) -> T:
    """Wait for the lock (cancellable), then run `work` on a thread and return its result.

    `on_wait` is called once if the lock is held by someone else, `on_free` once that wait
    is over (not when it was cancelled).
    """
    if await wait_until_free(lock_file, on_wait, poll=poll) and on_free is not None:
        on_free()
    running = asyncio.ensure_future(asyncio.to_thread(work))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        if running.cancelled():
            raise
        # The write began and finishes on its thread whatever we do: report what it did,
        # and let the cancellation through at the caller's next await.
        await asyncio.wait({running})
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
            task.cancel()  # delivered when the caller next waits
        return running.result()
