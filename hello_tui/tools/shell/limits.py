"""Resource limits for every command, and the one line that says a command met one.

Each command gets rlimits (set by its own process before exec, inherited by
everything it starts):

- processes: where the kernel keeps pid_max per PID namespace (Linux 6.14),
  the spawner's namespace gets `pid_max`, which binds root too; and
  RLIMIT_NPROC, counted per user *and user namespace*, so it is only set
  where commands run in a user namespace of their own (the spawner's);
  elsewhere it would count every process the user has, and it never holds
  root;
- memory (RLIMIT_DATA: heap and private writable mappings, per process).
  Not RLIMIT_AS: V8, the JVM, Go and wasm runtimes reserve far more address
  space than they ever touch, and would not start. RLIMIT_DATA does not count
  shared anonymous memory or a memfd's pages, so read-only commands are refused
  both (`seccomp.py`); approved commands are trusted not to hide memory there;
- file size (RLIMIT_FSIZE) and CPU time (RLIMIT_CPU, per process).

The defaults leave real builds and test suites room (parallel compilers,
a large linker, a test run writing a few GB of logs) while stopping a fork
storm or a runaway allocation before the machine suffers.
"""

from __future__ import annotations

import os
import re
import resource
import signal
from dataclasses import dataclass

GIB = 1 << 30
# The kernel's smallest pid_max is 301 (RESERVED_PIDS + 1).
PID_MAX_FLOOR = 300

# What programs print when a limit refuses them (strerror of EAGAIN on fork,
# ENOMEM, EFBIG, and the usual runtimes' wording).
_PROCESS_WORDS = re.compile(
    r"(fork|clone|spawn|thread|process)[^\n]*Resource temporarily unavailable"
    r"|BlockingIOError: \[Errno 11\]|can't start new thread|Cannot fork"
)
_MEMORY_WORDS = re.compile(
    r"MemoryError|Cannot allocate memory|[Oo]ut of memory|std::bad_alloc"
    r"|memory exhausted|cannot allocate memory|failed to allocate"
)
_FILE_SIZE_SIGNAL = re.compile(r"File size limit exceeded")  # bash, for SIGXFSZ
_FILE_SIZE_ERROR = re.compile(r"File too large")  # EFBIG, for programs that ignore it
_CPU_SIGNAL = re.compile(r"CPU time limit exceeded")


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * GIB


def _size(value: int) -> str:
    return f"{value / GIB:.1f} GiB" if value >= GIB else f"{value >> 20} MiB"


@dataclass(frozen=True)
class CommandLimits:
    processes: int = 2048  # all commands of one spawner together (at least PID_MAX_FLOOR)
    memory: int = max(2 * GIB, _physical_memory() * 3 // 4)  # per process
    file_size: int = 16 * GIB
    cpu_seconds: int = 4 * 3600  # per process; the command's timeout comes first

    @property
    def pid_max(self) -> int:
        """The PID namespace's pid_max for this many processes (pids run 1 to pid_max - 1).

        Once the numbers wrap, the kernel hands out none below 300 again, so a
        long-lived spawner may hold up to 300 fewer than `processes`; the
        limit is never more than it says.
        """
        return max(self.processes, PID_MAX_FLOOR) + 1

    def rlimits(self, *, own_user_namespace: bool) -> dict[str, int]:
        """The spawner's names for the limits a command gets."""
        found = {"data": self.memory, "fsize": self.file_size, "cpu": self.cpu_seconds}
        if own_user_namespace:
            found["nproc"] = self.processes
        return found

    def hit(self, codes: list[int], stderr: str, *, processes: bool) -> str | None:
        """The one line for the model when the failure looks like one of these limits.

        `codes` are the exit statuses of the command and its pipeline stages
        (a negative status is a signal, 128+n a shell's report of one).
        """
        failed = [c for c in codes if c != 0]

        def signalled(number: int) -> bool:
            return any(c in (-number, 128 + number) for c in failed)

        # A shell reports a stage the kernel stopped even when the script goes on.
        if signalled(signal.SIGXFSZ) or _FILE_SIZE_SIGNAL.search(stderr):
            return f"the file-size limit ({_size(self.file_size)} per file)"
        if signalled(signal.SIGXCPU) or _CPU_SIGNAL.search(stderr):
            return f"the CPU-time limit ({self.cpu_seconds} s per process)"
        if not failed:
            return None
        if _FILE_SIZE_ERROR.search(stderr):
            return f"the file-size limit ({_size(self.file_size)} per file)"
        if processes and _PROCESS_WORDS.search(stderr):
            return f"the process limit ({self.processes} processes)"
        if _MEMORY_WORDS.search(stderr):
            return f"the memory limit ({_size(self.memory)} per process)"
        return None


DEFAULT_LIMITS = CommandLimits()

# The limit names of `CommandLimits.rlimits` and their RLIMIT_* numbers.
RLIMIT_NUMBERS = {
    "nproc": resource.RLIMIT_NPROC,
    "data": resource.RLIMIT_DATA,
    "fsize": resource.RLIMIT_FSIZE,
    "cpu": resource.RLIMIT_CPU,
}
CPU_GRACE = 5  # seconds between SIGXCPU at the soft limit and SIGKILL at the hard one


def rlimit_pair(name: str, value: int) -> tuple[int, int]:
    """(soft, hard) for one limit, never above the hard limit the process already has."""
    _, hard = resource.getrlimit(RLIMIT_NUMBERS[name])
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    if name == "cpu":
        top = value + CPU_GRACE
        return value, top if hard == resource.RLIM_INFINITY else min(hard, top)
    return value, value


def rlimit_triples(limits: dict[str, int]) -> list[tuple[int, int, int]]:
    """(RLIMIT_* number, soft, hard) for each limit, as the spawner sets them."""
    return [(RLIMIT_NUMBERS[name], *rlimit_pair(name, value)) for name, value in limits.items()]


def limit_line(what: str) -> str:
    return f"stopped: the command hit {what}"
