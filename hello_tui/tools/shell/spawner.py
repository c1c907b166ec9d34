"""The app's side of the spawner processes that start every command under the sandbox.

A command must never share a thread, a process or a Landlock domain with
the app, whose memory holds the key. So read-only commands are started by a
small separate process (`spawner_main.py`): a fresh `python -I -S` given
that file's source, an empty environment, one end of a socket pair and the
Landlock ruleset the app built. It confines itself once (namespaces where
the machine has them, the approved commands' read-only mounts, then
non-dumpable, no_new_privs, no capabilities, Landlock, seccomp) and forks a
keeper and the command for each request.

Landlock domains only narrow, so a spawner is confined exactly as widely as
the commands it starts: one spawner serves every command of one
confinement (its rules, network, mounts and filter: read-only commands
share one, approved ones get their own, started on the first approved
command); a few are kept, the least recently used is closed.
Starting a spawner blocks (callers do it in a thread); handing it a command
does not. The spawner forks each command's keeper and child ahead, on two
sockets the app sent it: the command's control socket, which the keeper
watches from then on, and the child's channel. `start` only sends the
request down that channel, never through the spawner; the next pair is
forked in the background once the command has ended and its result is on
its way (`housekeeping.py`), so those forks compete neither with a
command's start nor with its report. When the terminal starts judging a
command it says "wake" to the child forked ahead (`wake_recent`), which
then watches its channel for a moment instead of sleeping: a sleeping
process is slow to run again, on a virtual machine most of all. The keeper's one message when the command ends (its exit
status, or the errno exec failed with) is read on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import platform
import re
import select
import socket
import subprocess
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import lru_cache
from pathlib import Path
from typing import IO, Any

from hello_tui.tools.shell import housekeeping
from hello_tui.tools.shell.seccomp import SYS_SECCOMP
from hello_tui.tools.shell.spawner_main import MESSAGE_SIZE, PROBE_NO_PID_MAX, WAKE

# MESSAGE_SIZE and the probe's exit codes have one home, the spawner's own file.
MAX_SPAWNERS = 8
START_TIMEOUT = 30.0


class SpawnerError(OSError):
    """The spawner process could not start or confine itself."""


@lru_cache(maxsize=1)
def entry_source() -> str:
    """The spawner's program, passed with -c so it runs without reading this package's files."""
    return (Path(__file__).with_name("spawner_main.py")).read_text(encoding="utf-8")


def _python(*args: str, **options: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", entry_source(), *args],
        env={},
        cwd="/",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # A process group of its own keeps the terminal's ^C away; not a session of its
        # own, which would put every command in a scheduler autogroup of its own.
        process_group=0,
        **options,
    )


# pid_max became a setting of each PID namespace in Linux 6.14; before, the same
# write from a namespace of root's would change the limit of the whole machine.
PER_NAMESPACE_PID_MAX = (6, 14)


def kernel_keeps_pid_max_per_namespace(release: str | None = None) -> bool:
    found = re.match(r"(\d+)\.(\d+)", release if release is not None else os.uname().release)
    return found is not None and (int(found[1]), int(found[2])) >= PER_NAMESPACE_PID_MAX


def probe_pid_namespace() -> tuple[bool, bool]:
    """(Can the spawner get a user, mount and PID namespace with a /proc of its own here,
    and can it hold the processes in it to a number with pid_max?)"""
    if not kernel_keeps_pid_max_per_namespace():
        return _probe("probe"), False
    code = _probe_code("probe", "pid-max")
    return code in (0, PROBE_NO_PID_MAX), code == 0


def probe_mounts(writable: Path, protected: Path, *, pid_namespace: bool) -> bool:
    """Can the spawner make the approved commands' read-only mounts (on the route it takes)?"""
    return _probe(
        "probe-mounts",
        os.fspath(writable),
        os.fspath(protected),
        "pid" if pid_namespace else "mount",
    )


def _probe(*args: str) -> bool:
    return _probe_code(*args) == 0


def _probe_code(*args: str) -> int | None:
    try:
        return _python(*args).wait(timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None


class RemoteCommand:
    """A command handed to a keeper forked ahead: its output pipes and the control socket.

    The keeper speaks once the command has ended: the errno exec failed with,
    or the command's pid and exit status, and that every process of it has
    ended ("gone"), in that message or after the app said "kill".
    """

    def __init__(
        self,
        stdout: IO[bytes],
        stderr: IO[bytes],
        control: socket.socket,
        on_close: Callable[[], None],
    ) -> None:
        self.pid: int | None = None  # in the spawner's PID namespace when it has one
        self.stdout = stdout
        self.stderr = stderr
        self.returncode: int | None = None
        self._failed: int | None = None  # the errno it could not start with
        self._gone = False
        self._control = control
        self._on_close: Callable[[], None] | None = on_close
        control.setblocking(False)

    async def exited(self) -> int:
        """The exit status as soon as the command itself ends (its pipes may live on).

        Raises OSError when it never ran: why exec failed, or EPIPE when the
        keeper went away without a word.
        """
        while self.returncode is None and self._failed is None and not self._gone:
            await self._next_message()
        if self.returncode is None:
            code = self._failed or errno.EPIPE
            raise OSError(code, os.strerror(code))
        return self.returncode

    async def ended(self) -> int | None:
        """Stop everything and wait until the keeper says every process has ended.

        Returns the exit status, None when the command never ran.
        """
        self.stop()
        while not self._gone:
            await self._next_message()
        return self.returncode

    async def _next_message(self) -> None:
        try:
            data = await asyncio.get_running_loop().sock_recv(self._control, 4096)
        except OSError:
            data = b""
        if not data:
            self._gone = True
            return
        message = json.loads(data)
        if "started" in message:
            self.pid = int(message["started"])
        if "error" in message:
            self._failed = int(message["error"])
        if "exit" in message:
            self.returncode = os.waitstatus_to_exitcode(message["exit"])
        if message.get("gone"):
            self._gone = True

    def stop(self) -> None:
        """Kill the command and everything it started (the keeper kills its whole domain)."""
        if self._gone:
            return
        with contextlib.suppress(OSError):
            self._control.send(b"kill")

    def close(self) -> None:
        self.stop()
        self._control.close()
        if self._on_close is not None:
            self._on_close()
            self._on_close = None


class SpawnerProcess:
    """One confined spawner process; `start` runs a command from it."""

    def __init__(
        self,
        ruleset_fd: int,
        *,
        seccomp_program: bytes | None,
        pid_namespace: bool,
        pid_max: int | None = None,
        proc_rights: int,
        abi: int,
        mounts: dict[str, list[str]] | None = None,
    ) -> None:
        """`mounts`: the folders approved commands may change ("writable") and, inside
        them, the ones kept read-only ("protected"); None leaves every mount as it is."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._sock = ours
        self._lock = threading.Lock()
        self._running = 0
        self._retired = False
        try:
            self.process = _python(
                str(theirs.fileno()), str(ruleset_fd), pass_fds=(theirs.fileno(), ruleset_fd)
            )
        finally:
            theirs.close()
        setup = {
            "pid_namespace": pid_namespace,
            "pid_max": pid_max,
            "seccomp": seccomp_program.hex() if seccomp_program else "",
            "seccomp_syscall": SYS_SECCOMP.get(platform.machine()),
            "proc_rights": proc_rights,
            "abi": abi,
            "mounts": mounts,
        }
        ours.settimeout(START_TIMEOUT)
        try:
            ours.send(json.dumps(setup).encode())
            reply = json.loads(ours.recv(MESSAGE_SIZE) or b"{}")
        except (OSError, ValueError) as exc:
            self.close()
            raise SpawnerError(f"the spawner process did not answer ({exc})") from None
        ours.settimeout(None)
        if not reply.get("ready"):
            self.close()
            raise SpawnerError(reply.get("error") or "the spawner process ended at start")
        self.pid_namespace = pid_namespace
        self.own_proc = bool(reply.get("own_proc"))
        if pid_max and not reply.get("process_limit"):
            self.close()
            raise SpawnerError("the spawner could not set its process limit (pid_max)")
        self.process.wait()  # the first process only forked the spawner and ended
        self._ahead: tuple[socket.socket, socket.socket] | None = None
        with contextlib.suppress(OSError):
            self._ahead = self._fork_ahead()

    @property
    def alive(self) -> bool:
        """Its socket is readable only once the spawner has ended (it never speaks unasked)."""
        try:
            return not select.select([self._sock], [], [], 0)[0]
        except (OSError, ValueError):
            return False

    def start(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        limits: list[tuple[int, int, int]],
    ) -> RemoteCommand:
        """Hand `argv` to a child forked ahead, without waiting: `await exited()` on the result.

        `limits` are (RLIMIT_* number, soft, hard) triples the command gets.
        Raises OSError when the spawner cannot take it.
        """
        request = json.dumps(
            {"argv": argv, "cwd": os.fspath(cwd), "env": env, "limits": limits}
        ).encode()
        out_read, out_write = os.pipe2(os.O_CLOEXEC)
        err_read, err_write = os.pipe2(os.O_CLOEXEC)
        try:
            control = self._hand_over(request, out_write, err_write)
        except OSError:
            os.close(out_read)
            os.close(err_read)
            raise
        finally:
            os.close(out_write)
            os.close(err_write)
        stdout = open(out_read, "rb", buffering=0)  # noqa: SIM115 - the runner closes them
        stderr = open(err_read, "rb", buffering=0)  # noqa: SIM115
        return RemoteCommand(stdout, stderr, control, self._finished)

    def wake(self) -> None:
        """A command may come soon: the child forked ahead stays awake a moment to take it."""
        with self._lock:
            ahead = self._ahead
            if ahead is not None:
                with contextlib.suppress(OSError):
                    ahead[1].send(WAKE, socket.MSG_DONTWAIT)

    def _hand_over(self, request: bytes, stdout: int, stderr: int) -> socket.socket:
        """Send the request to a child forked ahead; returns its keeper's control socket."""
        with self._lock:
            pair = self._ahead or self._fork_ahead()
            self._ahead = None
        try:
            return self._send_request(pair, request, stdout, stderr)
        except OSError:  # that pair died before its turn (its keeper was killed)
            return self._send_request(self._fork_ahead(), request, stdout, stderr)

    def _send_request(
        self, pair: tuple[socket.socket, socket.socket], request: bytes, stdout: int, stderr: int
    ) -> socket.socket:
        control, child = pair
        try:
            socket.send_fds(child, [request], [stdout, stderr])
        except OSError:
            control.close()
            raise
        finally:
            child.close()
        with self._lock:
            self._running += 1
        return control

    def _fork_ahead(self) -> tuple[socket.socket, socket.socket]:
        """Have the spawner fork a keeper and its command's child now, for a later command.

        Returns the app's ends of their sockets: the command's control socket,
        which the keeper watches from the start, and the child's channel for
        the request. A request sent at once waits there until the child reads it.
        """
        control, keeper_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        child, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            socket.send_fds(self._sock, [b"fork"], [keeper_end.fileno(), child_end.fileno()])
        except OSError:
            control.close()
            child.close()
            raise
        finally:
            keeper_end.close()
            child_end.close()
        return control, child

    def _finished(self) -> None:
        """A command ended: the next one's keeper and child are forked in the background,
        after this command's result (a command that comes first forks its own)."""
        with self._lock:
            self._running -= 1
            idle = self._retired and not self._running
            refill = not self._retired and self._ahead is None
        if idle:
            self.close()
        elif refill:
            housekeeping.later(self._refill)

    def _refill(self) -> None:
        """Fork a keeper and child ahead, unless one waits already or the spawner is done."""
        with self._lock:
            if not self._retired and self._ahead is None and self.alive:
                with contextlib.suppress(OSError):
                    self._ahead = self._fork_ahead()

    def retire(self) -> None:
        """Close once no command of this spawner runs any more (closing kills them)."""
        with self._lock:
            self._retired = True
            idle = not self._running
        if idle:
            self.close()

    def close(self) -> None:
        """Closing the socket ends the spawner, and with its namespace every command left."""
        with self._lock:  # no keeper is forked ahead from here on
            self._retired = True
            with contextlib.suppress(OSError):
                self._sock.close()
            ahead, self._ahead = getattr(self, "_ahead", None), None
        for end in ahead or ():
            end.close()  # the keeper and child forked ahead end on their own
        process = self.process if hasattr(self, "process") else None
        if process is not None:
            threading.Thread(target=process.wait, daemon=True).start()  # reap it


_SPAWNERS: OrderedDict[Hashable, SpawnerProcess] = OrderedDict()
_LOCK = threading.Lock()


def wake_recent() -> None:
    """A command is about to be judged: wake the most recently used spawner's next child."""
    with _LOCK:
        recent = next(reversed(_SPAWNERS.values()), None)
    if recent is not None:
        recent.wake()


def live_spawner(key: Hashable) -> SpawnerProcess | None:
    """The spawner for `key` if one runs (never blocks)."""
    with _LOCK:
        found = _SPAWNERS.get(key)
        if found is not None and found.alive:
            _SPAWNERS.move_to_end(key)
            return found
    return None


def spawner_for(key: Hashable, make: Callable[[], SpawnerProcess]) -> SpawnerProcess:
    """The live spawner for `key`, made on first use; the least recently used goes first."""
    found = live_spawner(key)
    if found is not None:
        return found
    made = make()
    with _LOCK:
        raced = _SPAWNERS.get(key)
        if raced is not None and raced.alive:  # another caller made one meanwhile: keep theirs
            made.close()
            return raced
        if raced is not None:
            raced.retire()
        _SPAWNERS[key] = made
        while len(_SPAWNERS) > MAX_SPAWNERS:
            _, old = _SPAWNERS.popitem(last=False)
            old.retire()
    return made
