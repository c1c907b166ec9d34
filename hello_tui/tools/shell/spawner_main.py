"""The spawner process: a fresh Python (standard library only) that starts commands.

The app runs this file's source with `python -I -S -c`, an empty
environment and one end of a socket pair: it shares no memory with the app
and never sees the key. Set-up, once:

0. a fork whose parent ends at once, so that neither the spawner nor any
   command it starts descends from the app;
1. where user namespaces exist, a user, mount, PID and IPC namespace of its own
   (its own ids mapped to themselves), then a fork: the child is PID 1 of the
   namespace, mounts a /proc that shows only the namespace's processes, and
   serves; the first process only waits for it. If PID 1 dies, the kernel
   kills every process in the namespace. Where the kernel keeps pid_max per
   PID namespace (Linux 6.14), PID 1 sets it: the namespace then holds at
   most that many processes, a limit that binds root too (RLIMIT_NPROC never
   does), and /proc/sys is mounted read-only behind it. Without namespaces
   it serves itself, as a subreaper;
2. for approved commands, the mounts their confinement asks for: everything
   read-only but the writable folders (the repo, the private folder), and
   inside those the protected ones (`.git/`, the state folder) read-only
   again. Without a PID namespace it makes a mount namespace of its own
   first (through a user namespace unless it runs as root);
3. non-dumpable, no_new_privs, no capabilities, the Landlock ruleset the app
   built (plus its own /proc) and the app's seccomp filter.

Each command gets a keeper: a fork that enters a nested Landlock domain and
becomes a subreaper, then forks the command's child, which enters another
domain below it. Both are forked ahead, before the command comes: the app
sends the spawner two sockets, the command's control socket and its child's
channel, and the spawner forks a keeper on them. The keeper watches the
control socket from then on; the request (argv, cwd, environment, rlimits,
with stdout and stderr as file descriptors) goes from the app straight to
the child, never through the spawner. The child dies with its keeper.
Landlock's scoping
(ABI 6) lets neither signal, trace or read anything outside its own domain:
not the keeper, not the spawner, not other commands, not the app. The
keeper reports the exit status on the control socket; when the app says
"kill" or closes it, the keeper kills every process of its domain
(`kill(-1)` reaches no one else under scoping), reaps them, and ends.

This file must not import hello_tui: it runs without it. Everything it uses
is imported at the top, before it loses the right to read its own install.
"""

from __future__ import annotations

import array  # noqa: F401 - socket's send_fds/recv_fds use it
import ctypes
import errno
import gc
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import time
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
SYS_MOUNT_SETATTR = 442  # the same on every architecture
AT_FDCWD, AT_RECURSIVE = -100, 0x8000
MOUNT_ATTR_RDONLY = 0x1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW = 1, 1 << 2
SYS_ADD_RULE, SYS_RESTRICT_SELF = 445, 446
RULE_PATH_BENEATH = 1
CAPABILITY_VERSION_3 = 0x20080522
SCOPED_SIGNALS_ABI = 6
MESSAGE_SIZE = 1 << 20
# "A request is coming": the child forked ahead stays awake this long to take it at once.
WAKE = b"wake"
WAKE_SECONDS = 0.003

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result < 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def _prctl(option: int, value: int) -> None:
    zero = ctypes.c_ulong(0)
    result = _libc.prctl(option, ctypes.c_ulong(value), zero, zero, zero)
    _check(result, f"prctl({option})")


def _write(path: str, data: str) -> None:
    # Plain descriptors: after unshare, lazy imports (a codec) may no longer be readable.
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, data.encode())
    finally:
        os.close(fd)


NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC


def enter_namespaces(flags: int = NAMESPACES) -> None:
    """A user namespace mapping only our own ids, with (by default) a mount, a PID and an
    IPC namespace: System V shared memory, semaphores and message queues are no files,
    so Landlock cannot keep commands from the user's own; in a namespace of its own the
    spawner and its commands see none of them, and what they make dies with it."""
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(flags), "unshare")
    if flags & CLONE_NEWUSER:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")


def enter_mount_namespace() -> None:
    """Without a PID namespace: a mount and IPC namespace (root needs no user namespace)."""
    private = CLONE_NEWNS | CLONE_NEWIPC
    enter_namespaces(private if os.geteuid() == 0 else CLONE_NEWUSER | private)


def _private_mounts() -> None:
    """Nothing mounted here may reach the rest of the system."""
    _check(_libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None), "mount")


def limit_processes(pid_max: int) -> bool:
    """In the new PID namespace, with its own /proc: at most `pid_max - 1` processes in it.

    Every process below also takes a number in this namespace, whatever
    namespaces it makes itself, so the limit holds for all of them.
    /proc/sys is then mounted read-only, and Landlock grants commands only
    read access to /proc besides: nothing below can raise the limit again.
    """
    try:
        fd = os.open("/proc/sys/kernel/pid_max", os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        os.write(fd, str(pid_max).encode())
    except OSError:
        return False
    finally:
        os.close(fd)
    _bind("/proc/sys")
    _read_only("/proc/sys")
    return True


def mount_own_proc() -> bool:
    """In the new PID namespace: mounts private, and a /proc of this namespace only."""
    _private_mounts()
    flags = ctypes.c_ulong(MS_NOSUID | MS_NODEV | MS_NOEXEC)
    return _libc.mount(b"proc", b"/proc", b"proc", flags, None) == 0


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


def _bind(path: str) -> None:
    """Mount `path` onto itself, so it can get flags of its own."""
    raw = os.fsencode(path)
    _check(_libc.mount(raw, raw, None, ctypes.c_ulong(MS_BIND | MS_REC), None), f"bind {path}")


def _read_only(path: str, read_only: bool = True) -> None:
    """Set (or clear) read-only on the mount at `path` and every mount below it."""
    flag = MOUNT_ATTR_RDONLY
    attr = _MountAttr(flag if read_only else 0, 0 if read_only else flag, 0, 0)
    result = _libc.syscall(
        ctypes.c_long(SYS_MOUNT_SETATTR),
        ctypes.c_int(AT_FDCWD),
        ctypes.c_char_p(os.fsencode(path)),
        ctypes.c_uint(AT_RECURSIVE),
        ctypes.c_void_p(ctypes.addressof(attr)),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    _check(result, f"{'read-only' if read_only else 'writable'} {path}")


def confine_mounts(writable: list[str], protected: list[str]) -> None:
    """Everything read-only except `writable`; inside those, `protected` read-only again.

    chmod, chown, utimes and xattrs are not Landlock rights; a read-only
    mount refuses them (and every other change) outside the repo, and keeps
    `.git/` read-only where Landlock can only grant "write beneath the repo".
    """
    _private_mounts()
    for path in writable:
        _bind(path)
    _read_only("/")
    for path in writable:
        _read_only(path, read_only=False)
    for path in protected:
        _bind(path)
        _read_only(path)


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def grant(ruleset_fd: int, path: str, rights: int) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        attr = _PathBeneath(rights, fd)
        result = _libc.syscall(
            ctypes.c_long(SYS_ADD_RULE),
            ctypes.c_long(ruleset_fd),
            ctypes.c_long(RULE_PATH_BENEATH),
            ctypes.c_void_p(ctypes.addressof(attr)),
            ctypes.c_long(0),
        )
        _check(result, f"landlock_add_rule {path}")
    finally:
        os.close(fd)


def restrict(ruleset_fd: int) -> None:
    """A new Landlock domain, nested in the current one."""
    result = _libc.syscall(
        ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_long(ruleset_fd), ctypes.c_long(0)
    )
    _check(result, "landlock_restrict_self")


def drop_capabilities() -> None:
    header = struct.pack("=Ii", CAPABILITY_VERSION_3, 0)
    data = ctypes.create_string_buffer(24)
    _check(_libc.capset(header, data), "capset")


def install_filter(program: bytes, seccomp_syscall: int | None) -> None:
    """Install the filter; SPEC_ALLOW spares every syscall the forced store-bypass mitigation."""
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = ctypes.create_string_buffer(
        struct.pack("@HP", len(program) // 8, ctypes.addressof(buffer))
    )
    zero = ctypes.c_ulong(0)
    if seccomp_syscall is None:
        result = _libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), fprog, zero, zero)
    else:
        result = _libc.syscall(
            ctypes.c_long(seccomp_syscall),
            ctypes.c_long(SECCOMP_SET_MODE_FILTER),
            ctypes.c_long(SECCOMP_FILTER_FLAG_SPEC_ALLOW),
            fprog,
        )
    _check(result, "seccomp")


# ---------------------------------------------------------------- one command


def _kill_domain(command: int, scoped: bool) -> int | None:
    """Kill every process left in this keeper's domain, reaping them, until none is left.

    Returns the command's wait status when it was reaped here.
    """
    status = None
    while True:
        try:
            if scoped:
                os.kill(-1, signal.SIGKILL)  # scoping: only this domain and those below
            else:
                os.killpg(command, signal.SIGKILL)
                _kill_children()
        except OSError:
            pass
        try:
            pid, code = os.waitpid(-1, 0)
        except ChildProcessError:
            return status
        if pid == command:
            status = code


def _kill_children() -> None:
    """Without scoping: what this subreaper has as children (orphans come here)."""
    me = os.getpid()
    try:
        fd = os.open(f"/proc/self/task/{me}/children", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        pids = [int(p) for p in os.read(fd, 1 << 20).split()]
    finally:
        os.close(fd)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _send(sock: socket.socket, message: dict[str, Any]) -> bool:
    try:
        sock.send(json.dumps(message).encode())
    except OSError:
        return False
    return True


def _exec_command(channel: socket.socket, ruleset_fd: int, report: int, keeper_pid: int) -> None:
    """The command's child, forked ahead: its own domain, then wait for the request and exec.

    It dies with its keeper (never runs without it), and does everything that
    needs no request before it waits, so the request finds only the exec to do.
    """
    try:
        os.setpgid(0, 0)
        restrict(ruleset_fd)
        _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
        if os.getppid() != keeper_pid:
            os._exit(0)  # the keeper died before the line above
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        null = os.open("/dev/null", os.O_RDONLY)
        _touch_request_path()
        data, fds = _next_request(channel)
        if not data or len(fds) != 2:
            os._exit(0)  # never used: the app went away
        request = json.loads(data)
        for number, soft, hard in request["limits"]:
            resource.setrlimit(number, (soft, hard))
        os.dup2(null, 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
        os.chdir(request["cwd"])
        os.closerange(3, report)
        os.closerange(report + 1, 65536)
        argv = request["argv"]
        exec_program(argv, request["env"])
    except OSError as exc:
        os.write(report, str(exc.errno or errno.EPERM).encode())
    os._exit(127)


def exec_program(argv: list[str], env: dict[str, str]) -> None:
    """`os.execvpe(argv[0], argv, env)`, with one execve instead of one per PATH entry.

    Each execve copies the whole environment into the kernel, so trying every
    folder on PATH in turn costs a millisecond. Folders where the name does
    not exist (a stat says so) are passed over; every candidate that exists
    is exec'd as execvpe would, in PATH order. The rules stay execvpe's: a
    name with a '/' is exec'd as it is; an empty PATH entry is the current
    folder; a candidate that exists but will not run (EACCES, ENOEXEC) does
    not end the search, and its error is the one raised when nothing else
    ran; otherwise the error is ENOENT.
    """
    name = argv[0]
    if "/" in name:
        os.execve(name, argv, env)
    if not name:
        raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))
    path = env.get("PATH")
    folders = (os.defpath if path is None else path).split(os.pathsep)
    first: OSError | None = None
    for folder in folders:
        candidate = os.path.join(folder, name)
        try:
            os.stat(candidate)
            os.execve(candidate, argv, env)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            first = first or exc
    if first is not None:
        raise first
    raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))


def _next_request(channel: socket.socket) -> tuple[bytes, list[int]]:
    """The request, and the descriptors that came with it; "wake" words are not requests.

    A sleeping process takes a while to run again once woken (on a virtual
    machine an idle CPU must be woken first). The app says "wake" when it
    starts judging a command, and the child then watches its channel
    without sleeping, yielding the CPU to anyone who wants it, for
    `WAKE_SECONDS`: the request that follows is taken at once.
    """
    while True:
        data, fds, _, _ = socket.recv_fds(channel, MESSAGE_SIZE, 2)
        if data != WAKE or fds:
            return data, fds
        until = time.monotonic() + WAKE_SECONDS
        while time.monotonic() < until and not select.select([channel], [], [], 0)[0]:
            os.sched_yield()


# A request's shape, for the warm-up below: argv, a folder, an environment, limits; bytes,
# as the real one arrives (json.loads takes another path for bytes than for str).
_SAMPLE_REQUEST = json.dumps(
    {
        "argv": ["program", "argument"],
        "cwd": "/",
        "env": {f"NAME_{i}": "value " * 8 for i in range(64)},
        "limits": [[0, 0, 0]] * 4,
    }
).encode()
# A folder no PATH names: the warm-up looks a program up in it, as `exec_program` does in
# every folder on PATH before the one that has it.
_NO_FOLDER = "/nonexistent-hello-tui-folder"


def _touch_request_path() -> None:
    """Parse a request like the real one, and miss a program on PATH, while waiting for it.

    A forked Python shares its memory with the spawner until it writes to
    it, and every page it first writes costs a fault of microseconds: reading
    a request touches hundreds of them, and so does the first stat that
    fails (its exception). Doing both ahead makes those pages its own, and
    the real request reuses them: measured, the lookup of a program ten
    folders down PATH takes about 0.13 ms less, the parse about 0.03 ms.
    """
    request = json.loads(_SAMPLE_REQUEST)
    for number, _soft, _hard in request["limits"]:
        resource.getrlimit(number)
    del request
    try:
        os.stat(os.path.join(_NO_FOLDER, "program"))
    except (FileNotFoundError, NotADirectoryError):
        pass


def keeper(
    control: socket.socket, command_channel: socket.socket, ruleset_fd: int, abi: int
) -> None:
    """Forked ahead from the spawner, with its command's child forked ahead too.

    Forks are the slow part of starting a command, so both happen before the
    command comes, and this keeper watches from the start: the app's request
    goes to the child alone, and the child dies with its keeper, so the
    command never runs without it. Never returns.
    """
    try:
        restrict(ruleset_fd)
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
    except OSError:
        os._exit(1)
    report_read, report_write = os.pipe2(os.O_CLOEXEC)
    os.set_blocking(report_read, False)
    me = os.getpid()
    command = os.fork()
    if command == 0:
        control.close()
        os.close(report_read)
        _exec_command(command_channel, ruleset_fd, report_write, me)
    command_channel.close()
    os.close(report_write)
    _watch(control, command, report_read, abi)


def _watch(control: socket.socket, command: int, report: int, abi: int) -> None:
    """Report how the command went once it ends; end the domain when told or done.

    Only two things wake this keeper: the command's end (its pidfd) and the
    app's word. Whether exec worked is read from the report pipe after the
    command ended, so a command costs the app a single message.
    """
    ended = os.pidfd_open(command)
    _rehearse_end()
    outcome: dict[str, int] | None = None
    said = False
    while True:
        watched = [control.fileno()] if outcome else [control.fileno(), ended]
        try:
            ready, _, _ = select.select(watched, [], [])
        except InterruptedError:
            continue
        if ended in ready:
            outcome = _outcome(command, os.waitpid(command, 0)[1], report)
            if _reap_orphans():
                break  # nothing it started is left (its orphans would be ours): end at once
            said = _send(control, outcome)
        if control.fileno() in ready:
            try:
                if control.recv(64) in (b"", b"kill"):
                    break
            except OSError:
                break
    last = _kill_domain(command, scoped=abi >= SCOPED_SIGNALS_ABI)
    if outcome is None:
        outcome = _outcome(command, signal.SIGKILL if last is None else last, report)
    # Every process of the command has ended and been reaped: one message says so, with
    # how it went unless that was said already.
    _send(control, {"gone": True} if said else {**outcome, "gone": True})
    os._exit(0)


def _rehearse_end() -> None:
    """Walk the path a command's end takes, on things of its own, before the command comes.

    The keeper is a fork of the spawner: the first time it runs a piece of
    code or makes an object, it copies the pages that touches, a fault each.
    Rehearsed here (an empty pipe read as `_outcome` reads the report, the
    "not a child" error the reaping ends on, the closing message encoded),
    the real end, which the app waits for, finds most of those pages its own:
    measured, it halves the keeper's time from the command's end to its
    message (about 0.2 ms). Nothing here touches the command, its report or
    the control socket.
    """
    empty, writer = os.pipe2(os.O_CLOEXEC)
    try:
        os.set_blocking(empty, False)
        _outcome(0, 0, empty)
    finally:
        os.close(empty)
        os.close(writer)
    try:
        os.waitpid(os.getpid(), os.WNOHANG)  # never a child of itself: ChildProcessError
    except ChildProcessError:
        pass
    json.dumps({"started": 1, "exit": 0, "gone": True}).encode()


def _reap_orphans() -> bool:
    """Reap what the command left that has ended; True when no process of it is left."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return False


def _outcome(command: int, status: int, report: int) -> dict[str, int]:
    """The errno exec failed with, or the command's start and exit status.

    The child has ended, so its end of the report pipe is closed: by a
    successful exec, or after it wrote why exec failed.
    """
    try:
        failed = os.read(report, 32)
    except BlockingIOError:
        failed = b""
    if failed:
        return {"error": int(failed)}  # a command that never ran has no exit status
    return {"started": command, "exit": status}


# ---------------------------------------------------------------- the spawner


def serve(sock: socket.socket, ruleset_fd: int, setup: dict[str, Any]) -> None:
    """Confine this process once, then fork keepers as the app asks until the app goes."""
    own_proc = setup["pid_namespace"] and mount_own_proc()
    limited = False
    if own_proc:
        grant(ruleset_fd, "/proc", setup["proc_rights"])
        limited = bool(setup.get("pid_max")) and limit_processes(setup["pid_max"])
    if setup["mounts"]:
        confine_mounts(**setup["mounts"])
    if not setup["pid_namespace"]:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    drop_capabilities()
    restrict(ruleset_fd)
    if setup["seccomp"]:
        install_filter(bytes.fromhex(setup["seccomp"]), setup["seccomp_syscall"])
    _send(sock, {"ready": True, "own_proc": bool(own_proc), "process_limit": limited})
    # Nothing here makes reference cycles, and a collector walking every object after
    # a fork would copy the forked memory page by page: keepers and commands start faster.
    gc.disable()
    gc.freeze()
    _fork_keepers(sock, ruleset_fd, setup["abi"])


def _fork_keepers(sock: socket.socket, ruleset_fd: int, abi: int) -> None:
    """Fork a keeper for each pair of sockets the app sends, until the app goes.

    One is the command's control socket, the other the channel its child
    gets the request on; the app keeps their other ends, so requests never
    pass through here.
    """
    while True:
        try:
            ready, _, _ = select.select([sock], [], [], 5.0)
        except InterruptedError:
            ready = []
        _reap()
        if not ready:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(sock, 64, 2)
        except OSError:
            return
        if not data:
            return  # the app is gone: PID 1 ends, and the namespace with it
        if len(fds) == 2 and os.fork() == 0:
            sock.close()
            keeper(socket.socket(fileno=fds[0]), socket.socket(fileno=fds[1]), ruleset_fd, abi)
        for fd in fds:
            os.close(fd)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _fail(sock: socket.socket, exc: OSError) -> None:
    _send(sock, {"ready": False, "error": str(exc)})
    os._exit(1)


PROBE_NO_PID_MAX = 3  # a PID namespace and its /proc, but no pid_max of its own


def probe(pid_max: bool) -> int:
    """Can this machine give the spawner its PID namespace and /proc? Exit 0 if so.

    With `pid_max` (asked only of kernels that keep it per namespace: on older
    ones the write would change the whole machine's), also its process limit;
    PROBE_NO_PID_MAX if that alone fails.
    """
    try:
        enter_namespaces()
    except OSError:
        return 1
    pid = os.fork()
    if pid == 0:
        try:
            if not mount_own_proc():
                os._exit(2)
            os._exit(0 if not pid_max or limit_processes(4096) else PROBE_NO_PID_MAX)
        except OSError:
            os._exit(PROBE_NO_PID_MAX if pid_max else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def probe_mounts(writable: str, protected: str, route: str) -> int:
    """Can the spawner make the approved commands' mounts, on its `route` ("pid" or "mount")?"""
    try:
        if route == "pid":
            enter_namespaces()
        else:
            enter_mount_namespace()
        confine_mounts([writable], [protected])
    except OSError:
        return 1
    return 0


def main() -> None:
    if sys.argv[1] == "probe":
        sys.exit(probe(pid_max=sys.argv[2:] == ["pid-max"]))
    if sys.argv[1] == "probe-mounts":
        sys.exit(probe_mounts(sys.argv[2], sys.argv[3], sys.argv[4]))
    # No command may descend from the app: the spawner leaves it at once, to be
    # adopted by init (or the nearest subreaper); the socket still ties their lives.
    if os.fork():
        os._exit(0)
    sock = socket.socket(fileno=int(sys.argv[1]))
    ruleset_fd = int(sys.argv[2])
    setup = json.loads(sock.recv(MESSAGE_SIZE))
    try:
        if setup["pid_namespace"]:
            enter_namespaces()
            pid = os.fork()
            if pid:  # the namespace's first process stays outside it and only waits
                sock.close()
                _prctl(PR_SET_DUMPABLE, 0)
                sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        elif setup["mounts"]:
            enter_mount_namespace()
        serve(sock, ruleset_fd, setup)
    except OSError as exc:
        _fail(sock, exc)
    os._exit(0)


if __name__ == "__main__":
    main()
