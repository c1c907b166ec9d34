"""One process from its start to its end: output captured, its exit seen, all it started stopped.

`start_process` starts it: handed to a keeper forked ahead by the confined
spawner (`spawner.py`), which ends every process of the command's domain,
or, without a sandbox, forked from the app in a session of its own whose
process group is stopped. `follow` reads its stdout and stderr apart
(`pipe_reader.py`), waits for its exit, a timeout or a cancellation, gives
background jobs that hold the pipes a moment, then stops everything.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from hello_tui.tools.shell.pipe_reader import PipeReader, widen
from hello_tui.tools.shell.spawner import RemoteCommand, SpawnerProcess

# What the UI keeps of each stream (head and tail) when a command floods it.
FULL_OUTPUT_LIMIT = 8 * 1024 * 1024
# How long pipes may stay open after the command itself exited (background jobs).
BACKGROUND_GRACE = 2.0


class OutputCapture:
    """Keeps the head and the tail of a stream, counting what fell in between."""

    def __init__(self, limit: int = FULL_OUTPUT_LIMIT) -> None:
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.limit // 2 - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.limit:
                del self.tail[: len(self.tail) - self.limit // 2]

    @property
    def dropped(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def data(self) -> bytes:
        """Every byte kept (all of them when nothing was dropped)."""
        return bytes(self.head + self.tail) if self.tail else bytes(self.head)

    def text(self) -> str:
        if not self.tail:  # all of it fits the head: decoded where it lies, no copy first
            return self.head.decode("utf-8", errors="replace")
        if not self.dropped:
            return (self.head + self.tail).decode("utf-8", errors="replace")
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        return f"{head}\n[… {self.dropped} bytes not kept …]\n{tail}"


@dataclass
class StageStatus:
    name: str
    code: int


@dataclass
class ProcessOutcome:
    stdout: OutputCapture
    stderr: OutputCapture
    exit_code: int | None  # None when it never started
    pipelines: list[list[StageStatus]] = field(default_factory=list)
    timed_out: bool = False
    cancelled: bool = False
    start_error: str = ""
    sandbox: str = ""  # how it was confined, e.g. "landlock v7, read-only, no network"


OutputSink = Callable[[str, str], None]  # (text, stream)


class Started:
    """A running command, however it was started: output pipes, its end, stopping it all."""

    def __init__(
        self,
        stdout: IO[bytes],
        stderr: IO[bytes],
        exited: Callable[[], Awaitable[int]],
        stop: Callable[[], None],
        finish: Callable[[], Awaitable[int | None]],
    ) -> None:
        self.stdout, self.stderr = stdout, stderr
        self.exited, self.stop, self.finish = exited, stop, finish

    def abandon(self) -> None:
        """Stop it all and reap it in the background: no one follows it (its caller left)."""
        self.stop()
        for pipe in (self.stdout, self.stderr):
            with contextlib.suppress(OSError):
                pipe.close()

        async def finish() -> None:
            await self.finish()

        threading.Thread(target=lambda: asyncio.run(finish()), daemon=True).start()


def start_process(
    cmd: list[str],
    cwd: Path,
    env: dict[str, str],
    *,
    spawner: SpawnerProcess | None,
    limits: list[tuple[int, int, int]],
) -> Started:
    """Start `cmd`; raises OSError when it cannot.

    Through a spawner this is a send, fit for the event loop (whether exec
    worked comes with its exit: `exited` raises OSError when it never ran).
    Without one the app forks it, which blocks: call that from a thread.
    """
    if spawner is not None:
        return _remote(spawner.start(cmd, cwd, env, limits))
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # no sandbox: leave the terminal behind too
    )
    return _local(proc)


def _local(proc: subprocess.Popen[bytes]) -> Started:
    """A child forked from the app (no sandbox): its process group."""
    assert proc.stdout is not None and proc.stderr is not None

    async def finish() -> int | None:
        _kill_group(proc.pid)
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.get_running_loop().run_in_executor(None, proc.wait)
        return proc.returncode

    return Started(
        proc.stdout, proc.stderr, lambda: _exited(proc), lambda: _kill_group(proc.pid), finish
    )


def _remote(command: RemoteCommand) -> Started:
    """A command the spawner started: its keeper kills everything in its domain."""

    async def finish() -> int | None:
        try:
            return await command.ended()
        finally:
            command.close()

    return Started(command.stdout, command.stderr, command.exited, command.stop, finish)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def _exited(proc: subprocess.Popen[bytes]) -> int:
    """The exit status as soon as the command itself ends (its pipes may live on)."""
    loop = asyncio.get_running_loop()
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        # No pidfd (not Linux, or already reaped): a thread waits instead.
        return await loop.run_in_executor(None, proc.wait)
    done = loop.create_future()

    def exited() -> None:
        if not done.done():
            done.set_result(None)

    loop.add_reader(pidfd, exited)
    try:
        await done
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)
    return proc.wait()


def _output_sink(
    capture: OutputCapture, name: str, sink: OutputSink | None, stream_all: bool
) -> Callable[[bytes], None]:
    """What each read of a stream goes to: the capture, and the sink as text."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def take(chunk: bytes) -> None:
        # Past the limit the UI gets no more either, unless the caller reads it all live.
        live = stream_all or capture.total < capture.limit
        capture.add(chunk)
        if live and sink is not None:
            text = decoder.decode(chunk)
            if text:
                sink(text, name)

    return take


async def _reader(
    pipe: IO[bytes],
    take: Callable[[bytes], None],
    loop: asyncio.AbstractEventLoop,
    transports: list[asyncio.BaseTransport],
) -> PipeReader:
    capacity = widen(pipe.fileno())
    transport, reader = await loop.connect_read_pipe(lambda: PipeReader(take, capacity, loop), pipe)
    transports.append(transport)
    return reader


def not_started(cmd: list[str], exc: OSError, output_limit: int) -> ProcessOutcome:
    return ProcessOutcome(
        OutputCapture(output_limit),
        OutputCapture(output_limit),
        None,
        start_error=f"{cmd[0]}: {exc.strerror or exc}",
    )


async def follow(
    started: Started,
    cmd: list[str],
    timeout: float,
    sink: OutputSink | None,
    *,
    cancel: asyncio.Event | None = None,
    output_limit: int = FULL_OUTPUT_LIMIT,
    stream_all: bool = False,
) -> ProcessOutcome:
    """See `started` (and all it started) end; its output goes to `sink` as it comes."""
    out, err = OutputCapture(output_limit), OutputCapture(output_limit)
    loop = asyncio.get_running_loop()
    timed_out = cancelled = False
    pipes: list[PipeReader] = []
    readers: list[asyncio.Future[None]] = []
    transports: list[asyncio.BaseTransport] = []
    waiter: asyncio.Future[int] | None = None
    stopper: asyncio.Future[Any] | None = None
    returncode: int | None = None
    try:
        pipes = list(
            await asyncio.gather(
                _reader(
                    started.stdout, _output_sink(out, "stdout", sink, stream_all), loop, transports
                ),
                _reader(
                    started.stderr, _output_sink(err, "stderr", sink, stream_all), loop, transports
                ),
            )
        )
        readers = [pipe.done for pipe in pipes]
        waiter = asyncio.ensure_future(started.exited())
        stopper = asyncio.ensure_future(cancel.wait()) if cancel is not None else None
        pending = {waiter} | ({stopper} if stopper else set())
        done, _ = await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done:
            timed_out = stopper is None or stopper not in done
            cancelled = not timed_out
            started.stop()
            await asyncio.wait([waiter])
        failed = waiter.exception()
        if isinstance(failed, OSError) and not (timed_out or cancelled):  # exec failed
            return not_started(cmd, failed, output_limit)
        for pipe in pipes:
            pipe.flush()
        # Background jobs may still hold the pipes open; give them a moment, then stop them.
        still_reading = {reader for reader in readers if not reader.done()}
        if still_reading:
            _, still_reading = await asyncio.wait(still_reading, timeout=BACKGROUND_GRACE)
        started.stop()
        if still_reading:
            await asyncio.wait(still_reading, timeout=BACKGROUND_GRACE)
    finally:
        # Also on cancellation: nothing the command started outlives it.
        started.stop()
        for task in (*readers, *(t for t in (waiter, stopper) if t is not None)):
            task.cancel()
        returncode = await started.finish()
        # A pipe closed under a transport still watching it would leave the loop reading its
        # number, which the next command's pipe may get: close the transports first.
        for transport in transports:
            transport.close()
        for stream in (started.stdout, started.stderr):
            with contextlib.suppress(OSError):
                stream.close()
    return ProcessOutcome(out, err, returncode, timed_out=timed_out, cancelled=cancelled)
