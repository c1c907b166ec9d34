"""Running one command: sandbox, allow-listed environment, process group, timeout, live output.

`run_command` is the one entry point for every command hello-tui starts on
the model's behalf (the terminal tool, grep's and context_fetch's rg) and
for the user's own commands: it takes the command (a string for bash, or an
argv list run without a shell), the working folder, the mode (read-only or
approved), whether the network is allowed, a timeout, a cancel event and an
output callback.

Under the OS sandbox (`sandbox.py`) every command, read-only or approved,
starts from a spawner process (`spawner.py`) confined as its mode says,
whose keeper ends every process the command started, `setsid` or not.
Without a sandbox the app forks it, in a session of its own whose process
group is stopped. Commands get stdin closed, the environment of
`environment.py` and a private folder for HOME and TMPDIR that is emptied
afterwards. A timeout, a cancellation or the end of the command stops it
all, so nothing it started lives on. stdout and stderr are captured apart;
a pipeline reports every stage's exit status, so `pytest | tail` cannot
hide a failing pytest.
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import contextlib
import functools
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, Self

from hello_tui.config import SECRET_ENV_VARS, Settings
from hello_tui.tools.shell import sandbox
from hello_tui.tools.shell.environment import command_environment, private_dirs
from hello_tui.tools.shell.limits import CommandLimits, limit_line, rlimit_triples
from hello_tui.tools.shell.parse import instrument
from hello_tui.tools.shell.sandbox import (
    Mode,
    SandboxSetting,
    SandboxSetupError,
    SandboxSpec,
    SandboxUnavailable,
    Support,
)
from hello_tui.tools.shell.spawner import RemoteCommand, SpawnerProcess

# What the UI keeps of each stream (head and tail) when a command floods it.
FULL_OUTPUT_LIMIT = 8 * 1024 * 1024
# How long pipes may stay open after the command itself exited (background jobs).
BACKGROUND_GRACE = 2.0
_READ_CHUNK = 65536
# Commands start (and their sandbox is built) here, off the event loop; a pool of
# its own, so a busy default executor never holds a command back.
_STARTER = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hello-tui-start")


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
        return bytes(self.head) + bytes(self.tail)

    def text(self) -> str:
        head = bytes(self.head).decode("utf-8", errors="replace")
        if not self.dropped:
            return self.data().decode("utf-8", errors="replace")
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
    cancelled: bool = False
    start_error: str = ""
    sandbox: str = ""  # how it was confined, e.g. "landlock v7, read-only, no network"


OutputSink = Callable[[str, str], None]  # (text, stream)


@dataclass(frozen=True)
class RunConfig:
    """What every command of one session shares."""

    repo: Path
    state_dir: Path | None = None
    sandbox: SandboxSetting = "auto"
    secrets: tuple[str, ...] = ()
    environ: Mapping[str, str] | None = None  # None: os.environ at the time of the run
    # What the machine offers; None: the probe's answer (a lower ABI acts like an older kernel).
    confinement: Support | None = None
    limits: CommandLimits = field(default_factory=CommandLimits)

    @classmethod
    def from_settings(cls, settings: Settings) -> RunConfig:
        values = tuple(os.environ.get(name, "") for name in SECRET_ENV_VARS)
        secrets = tuple(v for v in (*values, settings.api_key or "") if v)
        return cls(
            repo=settings.repo.resolve(),
            state_dir=settings.state.root,
            sandbox=settings.sandbox,
            secrets=secrets,
        )


class PrivateFolder:
    """The HOME and TMPDIR commands of one repo get: made once, emptied after each command.

    Making and removing folders costs milliseconds on some file systems, and a
    stable folder lets read-only commands reuse one confined spawner thread.
    What a command leaves there is removed when no other command of the repo
    is still running; the folder itself goes when the process ends.
    """

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="hello-tui-cmd-")).resolve()
        self.home, self.tmp = private_dirs(self.root)
        self._users = 0
        self._lock = threading.Lock()

    def enter(self) -> None:
        with self._lock:
            if not self.home.is_dir() or not self.tmp.is_dir():
                self.home, self.tmp = private_dirs(self.root)
            self._users += 1

    def leave(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users:
                return
            for folder in (self.home, self.tmp):
                _empty(folder)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _empty(folder: Path) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


_PRIVATE: dict[Path, PrivateFolder] = {}
_PRIVATE_LOCK = threading.Lock()


def private_folder(repo: Path) -> PrivateFolder:
    with _PRIVATE_LOCK:
        found = _PRIVATE.get(repo)
        if found is None or not found.root.is_dir():
            found = _PRIVATE[repo] = PrivateFolder()
        return found


@atexit.register
def _remove_private_folders() -> None:
    for folder in _PRIVATE.values():
        folder.remove()


@lru_cache(maxsize=8)
def program_folder(program: str | None) -> tuple[Path, ...]:
    """The folder an absolute program path lives in, links resolved: what its sandbox must
    also let it read (rg's wheel folder). Looked up once per program, not per call."""
    if not program or not os.path.isabs(program):
        return ()
    return (Path(program).resolve().parent,)


class CommandScope:
    """A command's private folder (HOME, TMPDIR) and environment; emptied on close."""

    def __init__(self, config: RunConfig, extra_read: tuple[Path, ...] = ()) -> None:
        self.config = config
        self._folder = private_folder(config.repo)
        self._folder.enter()
        self.private_dir = self._folder.root
        source = os.environ if config.environ is None else config.environ
        self.extra_read = extra_read
        readable = tuple(sandbox.program_dirs(source.get("PATH", ""))) + extra_read
        self.env = command_environment(
            source,
            config.repo,
            self.private_dir,
            secrets=config.secrets,
            readable=readable + (config.repo,),
            folders=(self._folder.home, self._folder.tmp),
        )
        self._open = True

    @property
    def tmp(self) -> Path:
        return Path(self.env["TMPDIR"])

    def close(self) -> None:
        if self._open:
            self._open = False
            self._folder.leave()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Started:
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


def _local(proc: subprocess.Popen[bytes]) -> _Started:
    """A child forked from the app (no sandbox): its process group."""
    assert proc.stdout is not None and proc.stderr is not None

    async def finish() -> int | None:
        _kill_group(proc.pid)
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await asyncio.get_running_loop().run_in_executor(None, proc.wait)
        return proc.returncode

    return _Started(
        proc.stdout, proc.stderr, lambda: _exited(proc), lambda: _kill_group(proc.pid), finish
    )


def _remote(command: RemoteCommand) -> _Started:
    """A command the spawner started: its keeper kills everything in its domain."""

    async def finish() -> int | None:
        try:
            return await command.ended()
        finally:
            command.close()

    return _Started(command.stdout, command.stderr, command.exited, command.stop, finish)


def _start_remote(
    spawner: SpawnerProcess,
    cmd: list[str],
    cwd: Path,
    env: dict[str, str],
    limits: list[tuple[int, int, int]],
) -> _Started:
    """Hand the command to the spawner: a send, on the loop. Whether exec worked comes
    with its exit (`exited` raises OSError when it never ran)."""
    return _remote(spawner.start(cmd, cwd, env, limits))


async def _start_local(cmd: list[str], cwd: Path, env: dict[str, str]) -> _Started:
    """Without a sandbox the app forks it (in a thread: fork and exec block)."""

    def start() -> _Started:
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

    starting = _STARTER.submit(start)
    try:
        return await asyncio.shield(asyncio.wrap_future(starting))
    except asyncio.CancelledError:
        # Cancelled while it was starting: it may start anyway, so stop it once it has.
        starting.add_done_callback(_stop_when_started)
        raise


def _stop_when_started(starting: Future[_Started]) -> None:
    if starting.cancelled() or starting.exception() is not None:
        return
    started = starting.result()
    started.stop()
    for pipe in (started.stdout, started.stderr):
        with contextlib.suppress(OSError):
            pipe.close()

    async def finish() -> None:
        await started.finish()

    def reap() -> None:
        asyncio.run(finish())

    threading.Thread(target=reap, daemon=True).start()


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def _pump(
    stream: asyncio.StreamReader,
    capture: OutputCapture,
    name: str,
    sink: OutputSink | None,
    stream_all: bool,
) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        chunk = await stream.read(_READ_CHUNK)
        if not chunk:
            break
        # Past the limit the UI gets no more either, unless the caller reads it all live.
        live = stream_all or capture.total < capture.limit
        capture.add(chunk)
        if live and sink is not None:
            text = decoder.decode(chunk)
            if text:
                sink(text, name)


def _describe(
    prepared: sandbox.PreparedSandbox, found: sandbox.Support, mode: Mode, network: bool
) -> str:
    if not prepared.active:
        return "none"
    net = "network" if network else "no network"
    return f"landlock v{found.landlock_abi}, {mode}, {net}"


async def _reader(
    pipe: IO[bytes], loop: asyncio.AbstractEventLoop, transports: list[asyncio.BaseTransport]
) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=2 * _READ_CHUNK, loop=loop)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe
    )
    transports.append(transport)
    return reader


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


async def run_process(
    cmd: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    sink: OutputSink | None,
    *,
    spawner: SpawnerProcess | None = None,
    rlimits: dict[str, int] | None = None,
    cancel: asyncio.Event | None = None,
    output_limit: int = FULL_OUTPUT_LIMIT,
    stream_all: bool = False,
) -> ProcessOutcome:
    """Start `cmd` and see it (and all it started) end.

    The `spawner` process starts it (a keeper ends every process it left),
    or, without a sandbox, the app forks it (its process group is stopped).
    """
    out, err = OutputCapture(output_limit), OutputCapture(output_limit)
    loop = asyncio.get_running_loop()
    try:
        if spawner is not None:
            started = _start_remote(spawner, cmd, cwd, env, rlimit_triples(rlimits or {}))
        else:
            started = await _start_local(cmd, cwd, env)
    except OSError as exc:
        return _not_started(cmd, exc, out, err)
    timed_out = cancelled = False
    readers: list[asyncio.Task[None]] = []
    transports: list[asyncio.BaseTransport] = []
    waiter = stopper = None
    returncode: int | None = None
    try:
        streams = [
            await _reader(started.stdout, loop, transports),
            await _reader(started.stderr, loop, transports),
        ]
        readers = [
            asyncio.create_task(_pump(streams[0], out, "stdout", sink, stream_all)),
            asyncio.create_task(_pump(streams[1], err, "stderr", sink, stream_all)),
        ]
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
            return _not_started(cmd, failed, out, err)
        # Background jobs may still hold the pipes open; give them a moment, then stop them.
        _, still_reading = await asyncio.wait(readers, timeout=BACKGROUND_GRACE)
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
        for pipe in (started.stdout, started.stderr):
            with contextlib.suppress(OSError):
                pipe.close()
    return ProcessOutcome(out, err, returncode, timed_out=timed_out, cancelled=cancelled)


def _not_started(
    cmd: list[str], exc: OSError, out: OutputCapture, err: OutputCapture
) -> ProcessOutcome:
    return ProcessOutcome(out, err, None, start_error=f"{cmd[0]}: {exc.strerror or exc}")


def _state_folder_problem(config: RunConfig) -> str | None:
    """Make sure the state folder exists as a real folder before a command may write the repo.

    A command must not be able to create it first, as a link to somewhere else:
    the app would then write its sessions and notes through that link. An
    existing folder is kept read-only by the sandbox.
    """
    state = config.state_dir
    if state is None:
        return None
    if state.is_symlink() or (state.exists() and not state.is_dir()):
        return f"the state folder {state} is not a real folder; nothing ran"
    try:
        state.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"the state folder {state} could not be made ({exc.strerror or exc}); nothing ran"
    return None


def runnable_without_shell(argv: Sequence[str], cwd: Path, path_value: str | None) -> bool:
    """Can argv[0] run without a shell? (Builtins and missing programs go through bash.)"""
    name = argv[0]
    if "/" in name:
        target = cwd / name
        return target.is_file() and os.access(target, os.X_OK)
    return shutil.which(name, path=path_value) is not None


async def run_command(
    command: str | Sequence[str],
    *,
    cwd: Path,
    config: RunConfig,
    mode: Mode = "read-only",
    network: bool = False,
    timeout: float,
    on_output: OutputSink | None = None,
    cancel: asyncio.Event | None = None,
    output_limit: int = FULL_OUTPUT_LIMIT,
    stream_all: bool = False,
    scope: CommandScope | None = None,
) -> ProcessOutcome:
    """Run `command` (bash for a string, exec for an argv list) confined as `mode` says.

    `on_output` gets the text as it comes, up to `output_limit` bytes per
    stream (all of it with `stream_all`, for callers that parse it live);
    setting `cancel` stops the command and everything it started.

    Under CODE_AGENT_SANDBOX=require on a system without a sandbox nothing
    runs: the outcome's `start_error` says why.
    """
    problem = _state_folder_problem(config) if mode == "approved" else None
    if problem:
        return ProcessOutcome(OutputCapture(), OutputCapture(), None, start_error=problem)
    own_scope = scope is None
    scope = scope or CommandScope(config)
    try:
        spec = SandboxSpec(
            repo=config.repo,
            mode=mode,
            network=network,
            private_dir=scope.private_dir,
            cwd=cwd,
            state_dir=config.state_dir,
            extra_read=scope.extra_read,
        )
        path = scope.env["PATH"]
        found, limits = config.confinement, config.limits
        try:
            # Probing, building rulesets and starting a spawner block: never on the event
            # loop. A running spawner needs none of that, and no trip to a thread either.
            prepared = sandbox.prepare_at_once(
                spec, config.sandbox, path, found=found, limits=limits
            )
            if prepared is None:
                prepare = functools.partial(
                    sandbox.prepare, spec, config.sandbox, path, found=found, limits=limits
                )
                prepared = await asyncio.get_running_loop().run_in_executor(_STARTER, prepare)
        except (SandboxUnavailable, SandboxSetupError) as exc:
            empty = OutputCapture()
            return ProcessOutcome(empty, OutputCapture(), None, start_error=str(exc))
        run_options = {
            "spawner": prepared.spawner,
            "rlimits": prepared.limits.rlimits(own_user_namespace=prepared.counts_processes)
            if prepared.active
            else None,
            "cancel": cancel,
            "output_limit": output_limit,
            "stream_all": stream_all,
        }
        outcome = await _run_prepared(command, cwd, scope, timeout, on_output, run_options)
        outcome.sandbox = _describe(
            prepared, config.confinement or sandbox.support(), mode, network
        )
        if prepared.active:
            _report_limit(outcome, prepared, on_output)
        return outcome
    finally:
        if own_scope:
            scope.close()


async def _run_prepared(
    command: str | Sequence[str],
    cwd: Path,
    scope: CommandScope,
    timeout: float,
    sink: OutputSink | None,
    options: dict[str, Any],
) -> ProcessOutcome:
    if not isinstance(command, str):
        argv = list(command)
        outcome = await run_process(argv, cwd, scope.env, timeout, sink, **options)
        if outcome.exit_code is not None:
            outcome.pipelines = [[StageStatus(argv[0], outcome.exit_code)]]
        return outcome
    bash = shutil.which("bash", path=scope.env.get("PATH")) or "/bin/bash"
    fd, status_path = tempfile.mkstemp(prefix="status-", dir=scope.tmp)
    os.close(fd)
    instrumented = instrument(command, status_path)
    script = instrumented.script if instrumented else command
    outcome = await run_process([bash, "-c", script], cwd, scope.env, timeout, sink, **options)
    if instrumented:
        outcome.pipelines = _read_statuses(Path(status_path), instrumented.pipelines)
    return outcome


def _report_limit(
    outcome: ProcessOutcome, prepared: sandbox.PreparedSandbox, sink: OutputSink | None
) -> None:
    """One line on stderr when the command failed the way a resource limit makes it fail."""
    if outcome.exit_code is None or outcome.timed_out or outcome.cancelled:
        return
    codes = [outcome.exit_code, *(s.code for p in outcome.pipelines for s in p)]
    what = prepared.limits.hit(codes, outcome.stderr.text(), processes=prepared.counts_processes)
    if what is None:
        return
    line = limit_line(what) + "\n"
    if outcome.stderr.total and not outcome.stderr.data().endswith(b"\n"):
        line = "\n" + line
    outcome.stderr.add(line.encode())
    if sink is not None:
        sink(line, "stderr")


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
