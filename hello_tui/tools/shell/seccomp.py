"""A seccomp filter for what Landlock cannot express: new sockets, metadata changes, tracing.

Landlock's network rights cover TCP bind and connect only; UDP, raw and
netlink sockets, and connecting to a unix socket by path (a container
daemon's, an ssh agent's) pass it by. Without network this filter makes
`socket()` fail with EACCES for every address family, and refuses io_uring,
which could open sockets without the socket syscall. `socketpair()` stays
allowed: a pair of connected local sockets reaches no one.

Landlock does not cover metadata either: chmod, chown, utimes, extended
attributes and `chattr` flags work on any file the process can name. For
read-only commands the filter refuses those syscalls (EPERM) everywhere;
approved commands get a read-only view of everything outside the repo from
their spawner's mount namespace instead (`spawner_main.py`).

Every command is also refused (EPERM) the syscalls that reach into another
process or the kernel's shared state: ptrace, process_vm_readv/writev,
process_madvise, kcmp, pidfd_getfd, perf_event_open, bpf, userfaultfd, the
keyring calls and open_by_handle_at. Landlock already forbids tracing
outside the command's domain; this holds even where a kernel bug would not.

Read-only commands are also refused (EPERM) System V IPC: shared memory,
message queues and semaphores are neither files nor processes, so neither
Landlock nor scoping covers them. Without this a command could attach the
user's own segments (a database's, a desktop program's) and write them, and
leave segments that outlive it, holding memory until the machine restarts.
Every spawner also gets an IPC namespace of its own where it can make one
(`spawner_main.py`), so approved commands never see the user's objects.
They are refused flock too: it works on a file opened only for reading, so
a read-only command could hold the app's own lock files in the state folder
(`write.lock`, the notes') and keep the app's writers waiting.

Read-only commands may not make memory that no process limit counts either:
RLIMIT_DATA counts private writable mappings, not shared anonymous ones
(`mmap(MAP_SHARED | MAP_ANONYMOUS)`) nor a memfd's pages, so either would let
one command take all the machine's memory past its limit. The filter refuses
memfd_create and mmap with both MAP_SHARED and MAP_ANONYMOUS set (EPERM);
shared mappings of files (rg's, git's) and private ones stay allowed.

Nor may a command change another process's limits or scheduling: prlimit64,
the sched_set* calls, setpriority and ioprio_set check only the user id, not
Landlock's domains, so a command could set the app's RLIMIT_CPU (SIGXCPU
ends it) or its keeper's and spawner's, or renice every process of the user.
prlimit64 is refused unless its pid is 0 (the caller) for every command; the
scheduling calls, for read-only commands, unless they name the caller (pid 0,
PRIO_PROCESS or IOPRIO_WHO_PROCESS with who 0).

Syscalls of a foreign ABI (32-bit x86 on a 64-bit kernel, x32) are refused
outright, since their numbers differ and would slip past the lists. The
filter is a classic BPF program built here as bytes; the spawner process
installs it on itself once, and every command inherits it.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

# BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_JA = 0x05
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
_OFFSET_NR = 0
_OFFSET_ARCH = 4
_OFFSET_ARG0_LOW = 16  # seccomp_data.args[0]; the pid (an int: the kernel reads these bits)
_OFFSET_ARG1_LOW = 24  # seccomp_data.args[1], low 32 bits on little-endian machines
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1
_OFFSET_ARG3_LOW = 40  # seccomp_data.args[3]: mmap's flags
MAP_SHARED, MAP_ANONYMOUS = 0x01, 0x20  # MAP_SHARED_VALIDATE (0x03) has MAP_SHARED's bit
# ioctl requests that change inode flags or project attributes (chattr).
FS_IOC_SETFLAGS = (0x40086602, 0x40046602)  # 64-bit and 32-bit encodings
FS_IOC_FSSETXATTR = 0x401C5820
# seccomp(2)'s number, for the SPEC_ALLOW flag prctl cannot pass.
SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}


@dataclass(frozen=True)
class _Arch:
    audit_arch: int
    sockets: tuple[int, ...]  # socket, io_uring_setup, io_uring_enter, io_uring_register
    metadata: tuple[int, ...]  # chmod, chown, utimes and xattr families
    # ptrace process_vm_readv process_vm_writev process_madvise kcmp perf_event_open
    # bpf userfaultfd add_key request_key keyctl pidfd_getfd open_by_handle_at
    tracing: tuple[int, ...]
    # shmget shmat shmctl shmdt semget semop semctl semtimedop msgget msgsnd msgrcv msgctl
    # flock
    ipc: tuple[int, ...]
    memfd_create: int
    mmap: int
    prlimit: int
    # sched_setparam sched_setscheduler sched_setaffinity sched_setattr: a pid first
    scheduling: tuple[int, ...]
    setpriority: int
    ioprio_set: int
    ioctl: int
    foreign_from: int | None  # syscall numbers at or above this belong to another ABI


_ARCHES = {
    "x86_64": _Arch(
        audit_arch=0xC000003E,
        sockets=(41, 425, 426, 427),
        # chmod fchmod chown fchown lchown utime utimes fchownat futimesat fchmodat
        # utimensat setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr
        # fchmodat2 setxattrat removexattrat
        metadata=(90, 91, 92, 93, 94, 132, 235, 260, 261, 268, 280)
        + (188, 189, 190, 197, 198, 199, 452, 463, 466),
        tracing=(101, 310, 311, 440, 312, 298, 321, 323, 248, 249, 250, 438, 304),
        ipc=(29, 30, 31, 67, 64, 65, 66, 220, 68, 69, 70, 71, 73),
        memfd_create=319,
        mmap=9,
        prlimit=302,
        scheduling=(142, 144, 203, 314),
        setpriority=141,
        ioprio_set=251,
        ioctl=16,
        foreign_from=0x40000000,
    ),
    "aarch64": _Arch(
        audit_arch=0xC00000B7,
        sockets=(198, 425, 426, 427),
        # fchmod fchmodat fchownat fchown utimensat setxattr lsetxattr fsetxattr
        # removexattr lremovexattr fremovexattr fchmodat2 setxattrat removexattrat
        metadata=(52, 53, 54, 55, 88, 5, 6, 7, 14, 15, 16, 452, 463, 466),
        tracing=(117, 270, 271, 440, 272, 241, 280, 282, 217, 218, 219, 438, 265),
        ipc=(194, 196, 195, 197, 190, 193, 191, 192, 186, 189, 188, 187, 32),
        memfd_create=279,
        mmap=222,
        prlimit=261,
        scheduling=(118, 119, 122, 274),
        setpriority=140,
        ioprio_set=30,
        ioctl=29,
        foreign_from=None,
    ),
}


def supported() -> bool:
    return platform.machine() in _ARCHES


class _Program:
    """A tiny assembler: instructions with forward jumps to named labels."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | int, str | int, int | str]] = []
        self.labels: dict[str, int] = {}

    def emit(
        self, code: int, k: int, jt: str | int = 0, jf: str | int = 0, to: str | None = None
    ) -> None:
        """One instruction; `to` is the label an unconditional jump (JA) goes to."""
        self.code.append((code, jt, jf, to if to is not None else k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = []
        for index, (code, jt, jf, k) in enumerate(self.code):
            jumps = [t if isinstance(t, int) else self.labels[t] - index - 1 for t in (jt, jf)]
            if not all(0 <= j <= 255 for j in jumps):
                raise ValueError("a conditional jump reaches too far for classic BPF")
            offset = k if isinstance(k, int) else self.labels[k] - index - 1
            out.append(struct.pack("=HBBI", code, jumps[0], jumps[1], offset))
        return b"".join(out)


def build_program(
    *,
    deny_sockets: bool,
    deny_metadata: bool,
    deny_tracing: bool = False,
    deny_ipc: bool = False,
    deny_shared_memory: bool = False,
    deny_others_scheduling: bool = False,
) -> bytes | None:
    """The filter's instructions, or None on an architecture it does not know.

    It runs on every syscall a command makes, so the listed numbers are
    found by a binary search, not one by one: an allowed syscall leaves
    after about eight comparisons, whatever the lists hold.
    """
    arch = _ARCHES.get(platform.machine())
    wanted = (
        deny_sockets,
        deny_metadata,
        deny_tracing,
        deny_ipc,
        deny_shared_memory,
        deny_others_scheduling,
    )
    if arch is None or not any(wanted):
        return None
    targets: dict[int, str] = {}
    if deny_sockets:
        targets.update(dict.fromkeys(arch.sockets, "no_socket"))
    if deny_tracing:
        targets.update(dict.fromkeys(arch.tracing, "refused"))
        targets[arch.prlimit] = "own_pid"
    if deny_others_scheduling:
        targets.update(dict.fromkeys(arch.scheduling, "own_pid"))
        targets[arch.setpriority] = "own_priority"
        targets[arch.ioprio_set] = "own_io_priority"
    if deny_ipc:
        targets.update(dict.fromkeys(arch.ipc, "refused"))
    if deny_shared_memory:
        targets[arch.memfd_create] = "refused"
        targets[arch.mmap] = "mmap"
    if deny_metadata:
        targets.update(dict.fromkeys(arch.metadata, "refused"))
        targets[arch.ioctl] = "ioctl"
    p = _Program()
    p.emit(_LD_W_ABS, _OFFSET_ARCH)
    p.emit(_JEQ_K, arch.audit_arch, jt=0, jf="foreign")
    p.emit(_LD_W_ABS, _OFFSET_NR)
    if arch.foreign_from is not None:
        p.emit(_JGE_K, arch.foreign_from, jt="foreign", jf=0)
    _search(p, sorted(targets.items()))
    if deny_tracing or deny_others_scheduling:
        p.label("own_pid")
        p.emit(_LD_W_ABS, _OFFSET_ARG0_LOW)
        p.emit(_JEQ_K, 0, jt="allow", jf="refused")
    if deny_others_scheduling:
        for label, which in (
            ("own_priority", PRIO_PROCESS),
            ("own_io_priority", IOPRIO_WHO_PROCESS),
        ):
            p.label(label)
            p.emit(_LD_W_ABS, _OFFSET_ARG0_LOW)
            p.emit(_JEQ_K, which, jt=0, jf="refused")
            p.emit(_LD_W_ABS, _OFFSET_ARG1_LOW)
            p.emit(_JEQ_K, 0, jt="allow", jf="refused")
    if deny_shared_memory:
        p.label("mmap")
        p.emit(_LD_W_ABS, _OFFSET_ARG3_LOW)
        p.emit(_JSET_K, MAP_ANONYMOUS, jt=0, jf="allow")
        p.emit(_JSET_K, MAP_SHARED, jt="refused", jf="allow")
    if deny_metadata:
        p.label("ioctl")
        p.emit(_LD_W_ABS, _OFFSET_ARG1_LOW)
        for request in (*FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR):
            p.emit(_JEQ_K, request, jt="refused", jf=0)
    p.label("allow")
    p.emit(_RET_K, RET_ALLOW)
    p.label("no_socket")
    p.emit(_RET_K, RET_ERRNO | errno.EACCES)
    p.label("refused")
    p.emit(_RET_K, RET_ERRNO | errno.EPERM)
    p.label("foreign")
    p.emit(_RET_K, RET_ERRNO | errno.EPERM)
    return p.assemble()


def _search(p: _Program, targets: list[tuple[int, str]]) -> None:
    """Jump to the label of the syscall number in the accumulator, or to "allow"."""
    if not targets:
        p.emit(_JA, 0, to="allow")
        return
    if len(targets) <= 2:
        *first, (number, label) = targets
        for other, other_label in first:
            p.emit(_JEQ_K, other, jt=other_label, jf=0)
        p.emit(_JEQ_K, number, jt=label, jf="allow")
        return
    middle = len(targets) // 2
    above = f"at_least_{targets[middle][0]}"
    p.emit(_JGE_K, targets[middle][0], jt=above, jf=0)
    _search(p, targets[:middle])
    p.label(above)
    _search(p, targets[middle:])
