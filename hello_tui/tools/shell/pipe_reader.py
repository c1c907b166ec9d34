"""Reading a command's output pipe: in batches while it runs, at once when it ends.

A program that writes a line at a time (rg, a test runner) would wake the
event loop for every write, and each wake-up costs the app more than the
write cost the program. So after a short read the reader rests for
`BATCH_SECONDS` while the pipe, widened to `PIPE_SIZE`, gathers what comes
next; a long read (the pipe was filling) is followed at once by the next,
so a fast writer is never held back. Once the command has ended, `flush()`
reads what is left without resting.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import Callable

PIPE_SIZE = 1 << 20
DEFAULT_PIPE_SIZE = 1 << 16
BATCH_SECONDS = 0.01
_FLUSH_READ = 1 << 18


def widen(fd: int) -> int:
    """Give the pipe room for a batch; returns its size (the kernel may keep it as it was)."""
    with contextlib.suppress(OSError):
        return fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    with contextlib.suppress(OSError):
        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    return DEFAULT_PIPE_SIZE


class PipeReader(asyncio.Protocol):
    """Hands each read to `on_data`; `done` is set when the pipe has closed."""

    def __init__(
        self, on_data: Callable[[bytes], None], capacity: int, loop: asyncio.AbstractEventLoop
    ) -> None:
        self.done: asyncio.Future[None] = loop.create_future()
        self._on_data = on_data
        self._loop = loop
        # A read of a quarter of the pipe or more: the writer may be waiting for room.
        self._long_read = max(capacity // 4, 1)
        self._transport: asyncio.ReadTransport | None = None
        self._resting: asyncio.TimerHandle | None = None
        self._flushing = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._on_data(data)
        if self._flushing or len(data) >= self._long_read or self._transport is None:
            return
        self._transport.pause_reading()
        self._resting = self._loop.call_later(BATCH_SECONDS, self._wake)

    def flush(self) -> None:
        """Read on without resting: the writer has ended (or is being stopped).

        What it left, and its end, are read at once, resting or not, not on
        the loop's next turns; the pipe is watched again only if something
        still holds it open.
        """
        self._flushing = True
        if self._transport is None or self._transport.is_closing():
            return
        resting, self._resting = self._resting, None
        if resting is not None:
            resting.cancel()
        pipe = self._transport.get_extra_info("pipe")
        while True:
            try:
                data = os.read(pipe.fileno(), _FLUSH_READ)
            except BlockingIOError:
                if resting is not None:
                    self._transport.resume_reading()
                return
            except OSError:
                data = b""
            if not data:
                self._transport.close()
                if not self.done.done():
                    self.done.set_result(None)
                return
            self._on_data(data)

    def _wake(self) -> None:
        self._resting = None
        if self._transport is not None:
            self._transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._resting is not None:
            self._resting.cancel()
            self._resting = None
        if not self.done.done():
            self.done.set_result(None)
