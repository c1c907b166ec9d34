"""Running one command: sandbox, allow-listed environment, process group, timeout, live output.

`run_command` is the one entry point for every command hello-tui starts on
the model's behalf (the terminal tool, grep's and context_fetch's rg) and
for the user's own commands: it takes the command (a string for bash, or an
argv list run without a shell), the working folder, the mode (read-only or
approved), whether the network is allowed, a timeout, a cancel event and an
output callback. It is `begin_command` (confine and start; blocking unless
a spawner for the command already runs) then `follow_command` (on the event
loop, to the end); a caller already in a thread may begin there, so the
command starts without waiting for the loop.

Under the OS sandbox (`sandbox.py`) every command, read-only or approved,
starts from a spawner process (`spawner.py`) confined as its mode says,
whose keeper ends every process the command started, `setsid` or not.
Without a sandbox the app forks it, in a session of its own whose process
group is stopped. Commands get stdin closed, the environment of
`environment.py` and a private folder for HOME and TMPDIR that is emptied
afterwards (in the background, or before the next command if it comes
first). A timeout, a cancellation or the end of the command stops it
all, so nothing it started lives on. stdout and stderr are captured apart;
a pipeline reports every stage's exit status, so `pytest | tail` cannot
hide a failing pytest.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import os
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Self

from hello_tui.config import SECRET_ENV_VARS, Settings
from hello_tui.core.tree_removal import remove_contents, remove_tree
from hello_tui.tools.shell import housekeeping, sandbox
from hello_tui.tools.shell.environment import (
    MIN_SECRET_LENGTH,
    command_environment,
    private_dirs,
)
from hello_tui.tools.shell.limits import CommandLimits, limit_line, rlimit_triples
from hello_tui.tools.shell.parse import instrument
from hello_tui.tools.shell.processes import (
    BACKGROUND_GRACE,
    FULL_OUTPUT_LIMIT,
    OutputCapture,
    OutputSink,
    ProcessOutcome,
    StageStatus,
    Started,
    follow,
    not_started,
    start_process,
)
from hello_tui.tools.shell.sandbox import (
    Mode,
    SandboxSetting,
    SandboxSetupError,
    SandboxSpec,
    SandboxUnavailable,
    Support,
)

__all__ = [
    "BACKGROUND_GRACE",
    "FULL_OUTPUT_LIMIT",
    "Begun",
    "CommandScope",
    "OutputCapture",
    "OutputSink",
    "ProcessOutcome",
    "RunConfig",
    "StageStatus",
    "begin_command",
    "follow_command",
    "program_folder",
    "run_command",
    "runnable_without_shell",
]

# Commands start (and their sandbox is built) here when that blocks, off the event loop;
# a pool of its own, so a busy default executor never holds a command back.
_STARTER = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hello-tui-start")


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
        """The config of `settings`' commands: made once per settings object (the repo's
        path resolved then), with the secrets read anew each time."""
        values = tuple(os.environ.get(name, "") for name in SECRET_ENV_VARS)
        secrets = tuple(v for v in (*values, settings.api_key or "") if v)
        with _CONFIGS_LOCK:
            found = _CONFIGS.get(id(settings))
            if found is not None and found[0] is settings and found[1].secrets == secrets:
                return found[1]
        made = cls(
            repo=settings.repo.resolve(),
            state_dir=settings.state.root,
            sandbox=settings.sandbox,
            secrets=secrets,
        )
        with _CONFIGS_LOCK:
            # The settings object is kept with its config, so its id is not reused meanwhile.
            _CONFIGS[id(settings)] = (settings, made)
            while len(_CONFIGS) > _MAX_CONFIGS:
                _CONFIGS.pop(next(iter(_CONFIGS)))
        return made


_MAX_CONFIGS = 8
_CONFIGS: dict[int, tuple[Settings, RunConfig]] = {}
_CONFIGS_LOCK = threading.Lock()


class PrivateFolder:
    """The HOME and TMPDIR commands of one repo get: made once, emptied after each command.

    Making and removing folders costs milliseconds on some file systems, and a
    stable folder lets read-only commands reuse one confined spawner thread.
    What a command leaves there is removed when no other command of the repo
    is still running: in the background once its result is on its way
    (`housekeeping.py`), or by the next command first if it comes sooner, so
    no command ever sees what another left. The folder itself goes when the
    process ends.
    """

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="hello-tui-cmd-")).resolve()
        self.home, self.tmp = private_dirs(self.root)
        self._users = 0
        self._dirty = False  # a command left it, and it is not emptied yet
        self._lock = threading.Lock()

    def enter(self) -> None:
        with self._lock:
            if self._dirty:
                self._empty_now()
            if not self.home.is_dir() or not self.tmp.is_dir():
                self.home, self.tmp = private_dirs(self.root)
            self._users += 1

    def leave(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users:
                return
            self._dirty = True
        housekeeping.later(self.tidy)

    def tidy(self) -> None:
        """Empty HOME and TMPDIR if no command uses them and one left them."""
        with self._lock:
            if self._dirty and not self._users:
                self._empty_now()

    def _empty_now(self) -> None:
        # The whole folder, not only HOME and TMPDIR inside it: a command may write beside
        # them, or swap HOME for a link to a folder of its own beside it, which the next
        # command (an approved one) would then take as its HOME, with code planted there
        # (a `.pth` in the user site-packages, a cargo or npm config). Links are removed,
        # never followed (`tree_removal`); HOME and TMPDIR are made again, real folders.
        remove_contents(self.root)
        self.home, self.tmp = private_dirs(self.root)
        self._dirty = False

    def remove(self) -> None:
        remove_tree(self.root)


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


def _describe(found: sandbox.Support, mode: Mode, network: bool) -> str:
    net = "network" if network else "no network"
    return f"landlock v{found.landlock_abi}, {mode}, {net}"


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
    # The program found last time for this PATH, if it is still there and executable: the
    # answer is the same (which would find it, or one before it), for one stat, not one a folder.
    key = (name, path_value)
    known = _FOUND_ON_PATH.get(key)
    if known is not None and os.path.isfile(known) and os.access(known, os.X_OK):
        return True
    found = shutil.which(name, path=path_value)
    if found is None or not os.path.isabs(found):
        _FOUND_ON_PATH.pop(key, None)
        return found is not None
    if len(_FOUND_ON_PATH) >= 256:
        _FOUND_ON_PATH.clear()
    _FOUND_ON_PATH[key] = found
    return True


_FOUND_ON_PATH: dict[tuple[str, str | None], str] = {}


@dataclass
class Begun:
    """A command `begin_command` started, or the outcome of one that never could."""

    cmd: list[str]  # what runs: the argv, or bash with the instrumented script
    mode: Mode
    network: bool
    started: Started | None = None
    prepared: sandbox.PreparedSandbox | None = None
    found: Support | None = None  # what the machine offers, when it confines the command
    refused: ProcessOutcome | None = None  # why nothing ran (sandbox, state folder, exec)
    statuses: tuple[Path, list[list[str]]] | None = None  # a bash pipeline's status file
    exec_only: bool = False  # an argv run without a shell: one stage

    def abandon(self) -> None:
        """Its caller left before following it: stop it all."""
        if self.started is not None:
            self.started.abandon()


def begin_command(
    command: str | Sequence[str],
    *,
    cwd: Path,
    config: RunConfig,
    scope: CommandScope,
    mode: Mode = "read-only",
    network: bool = False,
    may_block: bool = True,
) -> Begun | None:
    """Confine and start `command` (bash for a string, exec for an argv list).

    Blocking (probing, building a spawner, a fork from the app): call it from
    a thread, or with `may_block=False` on the event loop, where it returns
    None instead of blocking. `follow_command` then sees it to its end.
    """
    begun = Begun([], mode, network)
    hide_secrets_in_command_line(config.secrets)
    problem = _state_folder_problem(config) if mode == "approved" else None
    if problem:
        begun.refused = _refused(problem)
        return begun
    spec = SandboxSpec(
        repo=config.repo,
        mode=mode,
        network=network,
        private_dir=scope.private_dir,
        cwd=cwd,
        state_dir=config.state_dir,
        extra_read=scope.extra_read,
    )
    path, found, limits = scope.env["PATH"], config.confinement, config.limits
    prepared: sandbox.PreparedSandbox | None
    try:
        if may_block:
            prepared = sandbox.prepare(spec, config.sandbox, path, found=found, limits=limits)
        else:
            prepared = sandbox.prepare_at_once(
                spec, config.sandbox, path, found=found, limits=limits
            )
    except (SandboxUnavailable, SandboxSetupError) as exc:
        begun.refused = _refused(str(exc))
        return begun
    if prepared is None or (not prepared.active and not may_block):
        return None  # the sandbox must be set up first, or the app forks the command
    begun.prepared = prepared
    if prepared.active:
        begun.found = found or sandbox.support()
    begun.cmd, begun.statuses = _command_line(command, scope)
    begun.exec_only = not isinstance(command, str)
    rlimits = (
        prepared.limits.rlimits(own_user_namespace=prepared.counts_processes)
        if prepared.active
        else {}
    )
    try:
        begun.started = start_process(
            begun.cmd, cwd, scope.env, spawner=prepared.spawner, limits=rlimit_triples(rlimits)
        )
    except OSError as exc:
        begun.refused = not_started(begun.cmd, exc, FULL_OUTPUT_LIMIT)
    return begun


_HIDDEN: set[tuple[str, ...]] = set()


def hide_secrets_in_command_line(secrets: tuple[str, ...]) -> None:
    """Blank every secret in this process's own command line (`--api-key sk-...`).

    /proc/<pid>/cmdline is readable by every process that sees the pid, with no
    ptrace check that Landlock's scoping could refuse: a command without a PID
    namespace of its spawner's sees the app's pid, and would read the key there.
    The kernel reads that file from the process's argument area, so the secret is
    overwritten there (as setproctitle does); Python's own sys.argv is a copy and
    keeps it. Done once per set of secrets, before the first command.
    """
    if secrets in _HIDDEN:
        return
    _HIDDEN.add(secrets)
    real = [s.encode() for s in secrets if len(s) >= MIN_SECRET_LENGTH]
    if not real or not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        # arg_start and arg_end are fields 48 and 49 of stat (Linux 3.5+), after "(comm)".
        fields = Path("/proc/self/stat").read_bytes().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])
    except (OSError, IndexError, ValueError):
        return
    if not 0 < start < end or end - start > 1 << 24:
        return
    area = ctypes.string_at(start, end - start)
    for secret in real:
        at = area.find(secret)
        while at >= 0:
            ctypes.memset(start + at, ord("*"), len(secret))
            at = area.find(secret, at + len(secret))


def _refused(why: str) -> ProcessOutcome:
    return ProcessOutcome(OutputCapture(), OutputCapture(), None, start_error=why)


def _command_line(
    command: str | Sequence[str], scope: CommandScope
) -> tuple[list[str], tuple[Path, list[list[str]]] | None]:
    """The argv that runs `command`, and for a bash script the file its pipelines' statuses
    go to, with the stages of each."""
    if not isinstance(command, str):
        return list(command), None
    bash = shutil.which("bash", path=scope.env.get("PATH")) or "/bin/bash"
    fd, status_path = tempfile.mkstemp(prefix="status-", dir=scope.tmp)
    os.close(fd)
    instrumented = instrument(command, status_path)
    if instrumented is None:
        return [bash, "-c", command], None
    return [bash, "-c", instrumented.script], (Path(status_path), instrumented.pipelines)


async def follow_command(
    begun: Begun,
    *,
    timeout: float,
    on_output: OutputSink | None = None,
    cancel: asyncio.Event | None = None,
    output_limit: int = FULL_OUTPUT_LIMIT,
    stream_all: bool = False,
) -> ProcessOutcome:
    """See a begun command to its end: its outcome, stages and sandbox, and a limit it met."""
    if begun.refused is not None or begun.started is None or begun.prepared is None:
        return begun.refused or _refused("the command was not started")
    outcome = await follow(
        begun.started,
        begun.cmd,
        timeout,
        on_output,
        cancel=cancel,
        output_limit=output_limit,
        stream_all=stream_all,
    )
    if begun.statuses is not None:
        outcome.pipelines = _read_statuses(*begun.statuses)
    elif outcome.exit_code is not None and begun.exec_only:
        outcome.pipelines = [[StageStatus(begun.cmd[0], outcome.exit_code)]]
    prepared = begun.prepared
    if begun.found is not None:
        outcome.sandbox = _describe(begun.found, begun.mode, begun.network)
        _report_limit(outcome, prepared, on_output)
    else:
        outcome.sandbox = "none"
    return outcome


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
    own_scope = scope is None
    scope = scope or CommandScope(config)
    try:
        begin = functools.partial(
            begin_command, command, cwd=cwd, config=config, scope=scope, mode=mode, network=network
        )
        # A running spawner takes a command with a send, on the loop; probing, building a
        # spawner and forking from the app block, so they go to a thread.
        begun = begin(may_block=False) or await _off_loop(begin)
        return await follow_command(
            begun,
            timeout=timeout,
            on_output=on_output,
            cancel=cancel,
            output_limit=output_limit,
            stream_all=stream_all,
        )
    finally:
        if own_scope:
            scope.close()


async def _off_loop(begin: Callable[[], Begun | None]) -> Begun:
    """`begin()` in a starter thread; what it starts after the caller was cancelled is stopped."""
    starting = _STARTER.submit(begin)
    try:
        begun = await asyncio.shield(asyncio.wrap_future(starting))
    except asyncio.CancelledError:
        starting.add_done_callback(_abandon_begun)
        raise
    assert begun is not None
    return begun


def _abandon_begun(starting: Future[Begun | None]) -> None:
    if not starting.cancelled() and starting.exception() is None:
        begun = starting.result()
        if begun is not None:
            begun.abandon()


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


# A status line is a few bytes per pipeline stage; more than this was not written by bash.
STATUS_LIMIT = 1 << 20


def _status_text(path: Path) -> str:
    """The status file's text, read as the command cannot make the app read anything else.

    The file lies in the command's TMPDIR, so the command may have replaced it: with a
    FIFO (opening it would block the event loop forever), or a link to /dev/zero or to a
    file of the user's (read unconfined, by the app). Only a regular file is read, never
    through a link and never more than `STATUS_LIMIT` bytes; anything else reads as empty.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
    try:
        fd = os.open(path, flags)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return os.read(fd, STATUS_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return ""
    finally:
        os.close(fd)


def _read_statuses(path: Path, pipelines: list[list[str]]) -> list[list[StageStatus]]:
    found: list[list[StageStatus]] = []
    lines = _status_text(path).splitlines()
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
