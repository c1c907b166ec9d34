"""Running one already-approved command: process group, timeout, live output, stage statuses.

The command runs in its own session (process group) with stdin closed and
the model keys removed from its environment. A timeout, a cancellation or the
end of the command stops the whole group, so nothing it started lives on.
stdout and stderr are captured apart; a pipeline reports every stage's exit
status, so `pytest | tail` cannot hide a failing pytest.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hello_tui.config import SECRET_ENV_VARS, Settings
from hello_tui.tools.shell.parse import instrument

# What the UI keeps of each stream (head and tail) when a command floods it.
FULL_OUTPUT_LIMIT = 8 * 1024 * 1024
# How long pipes may stay open after the command itself exited (background jobs).
BACKGROUND_GRACE = 2.0
_READ_CHUNK = 65536


def command_env(settings: Settings) -> dict[str, str]:
    """os.environ without model keys, with pagers and prompts that can't block."""
    env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV_VARS}
    if settings.api_key:
        env = {k: v for k, v in env.items() if v != settings.api_key}
    env.update(
        PAGER="cat",
        GIT_PAGER="cat",
        GIT_TERMINAL_PROMPT="0",
        GIT_EDITOR="true",  # a commit without -m aborts instead of waiting for an editor
        TERM="dumb",
    )
    return env


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

    def text(self) -> str:
        head = bytes(self.head).decode("utf-8", errors="replace")
        if not self.dropped:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", errors="replace")
        tail = bytes(self.tail).decode("utf-8", errors="replace")
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
    start_error: str = ""


OutputSink = Callable[[str, str], None]  # (text, stream)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def _pump(
    stream: asyncio.StreamReader, capture: OutputCapture, name: str, sink: OutputSink
) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        chunk = await stream.read(_READ_CHUNK)
        if not chunk:
            break
        live = capture.total < capture.limit  # past the limit the UI gets no more either
        capture.add(chunk)
        if live:
            text = decoder.decode(chunk)
            if text:
                sink(text, name)


async def run_process(
    cmd: list[str], cwd: Path, env: dict[str, str], timeout: float, sink: OutputSink
) -> tuple[ProcessOutcome, int]:
    """Run `cmd`; returns the outcome and the process id (its process group id)."""
    out, err = OutputCapture(), OutputCapture()
    try:
        proc = await asyncio.create_subprocess_exec(
            *cmd,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return ProcessOutcome(out, err, None, start_error=f"{cmd[0]}: {exc.strerror or exc}"), 0
    assert proc.stdout is not None and proc.stderr is not None
    readers = [
        asyncio.create_task(_pump(proc.stdout, out, "stdout", sink)),
        asyncio.create_task(_pump(proc.stderr, err, "stderr", sink)),
    ]
    timed_out = False
    try:
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            timed_out = True
            _kill_group(proc.pid)
            await proc.wait()
        # Background jobs may still hold the pipes open; give them a moment, then stop them.
        _, pending = await asyncio.wait(readers, timeout=BACKGROUND_GRACE)
        _kill_group(proc.pid)
        if pending:
            await asyncio.wait(pending, timeout=BACKGROUND_GRACE)
    finally:
        # Also on cancellation: nothing the command started outlives it.
        _kill_group(proc.pid)
        for reader in readers:
            reader.cancel()
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
    outcome = ProcessOutcome(out, err, proc.returncode, timed_out=timed_out)
    return outcome, proc.pid


async def execute(
    command: str,
    argv: list[str] | None,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    sink: OutputSink,
) -> ProcessOutcome:
    """Run a checked command: as argv without a shell when possible, else through bash."""
    if argv and _executable(argv[0], cwd, env):
        outcome, _ = await run_process(argv, cwd, env, timeout, sink)
        if outcome.exit_code is not None:
            outcome.pipelines = [[StageStatus(argv[0], outcome.exit_code)]]
        return outcome
    bash = shutil.which("bash", path=env.get("PATH")) or "/bin/bash"
    fd, status_path = tempfile.mkstemp(prefix="hello-tui-status-")
    os.close(fd)
    try:
        instrumented = instrument(command, status_path)
        script = instrumented.script if instrumented else command
        outcome, _ = await run_process([bash, "-c", script], cwd, env, timeout, sink)
        if instrumented:
            outcome.pipelines = _read_statuses(Path(status_path), instrumented.pipelines)
        return outcome
    finally:
        with contextlib.suppress(OSError):
            os.unlink(status_path)


def _executable(name: str, cwd: Path, env: dict[str, str]) -> bool:
    """Can `name` run without a shell? (Builtins and missing programs go through bash.)"""
    if "/" in name:
        target = cwd / name
        return target.is_file() and os.access(target, os.X_OK)
    return shutil.which(name, path=env.get("PATH")) is not None


def _read_statuses(path: Path, pipelines: list[list[str]]) -> list[list[StageStatus]]:
    found: list[list[StageStatus]] = []
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return found
    for line in lines:
        index_text, _, codes_text = line.partition(":")
        try:
            index = int(index_text)
            codes = [int(c) for c in codes_text.split()]
        except ValueError:
            continue
        if 0 <= index < len(pipelines) and len(codes) == len(pipelines[index]):
            found.append([StageStatus(n, c) for n, c in zip(pipelines[index], codes)])
    return found
