"""The steps a sandboxed child runs between fork and exec, prepared before fork.

The app has threads, so after fork only async-signal-safe work is allowed:
no imports, no locks, no real allocation. Everything the child needs (byte
strings, ctypes structures, argument tuples) is built here in the parent;
the child's `preexec` walks a list of `(function, arguments)` and stops at
the first call that returns -1. The failure raises an exception object made
in advance, which subprocess reports to the parent as a start error.
"""

from __future__ import annotations

import ctypes
import os
import platform
import resource
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hello_tui.tools.shell.landlock import SYS_RESTRICT_SELF, libc

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
SYS_MOUNT_SETATTR = 442  # the same on every architecture
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_SPEC_ALLOW = 1 << 2
SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}
_CAPABILITY_VERSION_3 = 0x20080522


def rlimit_triples(limits: dict[str, int]) -> list[tuple[int, int, int]]:
    """(RLIMIT_* number, soft, hard) for each limit, as the spawner sets them."""
    return [(RLIMIT_NUMBERS[name], *rlimit_pair(name, value)) for name, value in limits.items()]


class SandboxSetupError(Exception):
    """A sandbox step failed in the child; the command did not run."""


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


class _Rlimit(ctypes.Structure):
    _fields_ = [("soft", ctypes.c_ulong), ("hard", ctypes.c_ulong)]


# The limit names of `limits.CommandLimits.rlimits` and their RLIMIT_* numbers.
RLIMIT_NUMBERS = {
    "nproc": resource.RLIMIT_NPROC,
    "data": resource.RLIMIT_DATA,
    "fsize": resource.RLIMIT_FSIZE,
    "cpu": resource.RLIMIT_CPU,
}
ULONG_MAX = (1 << (8 * ctypes.sizeof(ctypes.c_ulong))) - 1
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


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _function(name: str, restype: type, argtypes: Sequence[type]) -> Callable[..., int]:
    fn = libc()[name]  # a fresh function object: its argtypes are ours alone
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn  # type: ignore[no-any-return]


def _write_whole_file(path: bytes, data: bytes) -> int:
    """open + write + close with libc only (user namespace id maps). -1 on failure."""
    c = libc()
    fd = c.open(path, os.O_WRONLY | os.O_CLOEXEC)
    if fd < 0:
        return -1
    written = c.write(fd, data, len(data))
    c.close(fd)
    return 0 if written == len(data) else -1


@dataclass
class ChildSteps:
    """An ordered list of syscalls for the child, and what keeps their memory alive."""

    steps: list[tuple[Callable[..., int], tuple, SandboxSetupError]] = field(default_factory=list)
    _keep: list[object] = field(default_factory=list)

    def add(self, fn: Callable[..., int], args: tuple, what: str) -> None:
        self.steps.append((fn, args, SandboxSetupError(f"sandbox: {what} failed")))
        self._keep.append(args)

    def preexec(self) -> None:
        for fn, args, failure in self.steps:
            if fn(*args) < 0:
                raise failure

    # ------------------------------------------------------------ building blocks

    def private_mounts(self, as_root: bool) -> None:
        """A mount namespace of its own (through a user namespace when not root)."""
        unshare = _function("unshare", ctypes.c_int, [ctypes.c_int])
        mount = _mount_function()
        if as_root:
            self.add(unshare, (CLONE_NEWNS,), "unshare(mount namespace)")
        else:
            uid, gid = os.getuid(), os.getgid()
            self.add(unshare, (CLONE_NEWUSER | CLONE_NEWNS,), "unshare(user namespace)")
            self.add(_write_whole_file, (b"/proc/self/setgroups", b"deny"), "setgroups")
            self.add(
                _write_whole_file,
                (b"/proc/self/uid_map", f"{uid} {uid} 1".encode()),
                "uid_map",
            )
            self.add(
                _write_whole_file,
                (b"/proc/self/gid_map", f"{gid} {gid} 1".encode()),
                "gid_map",
            )
        # Nothing mounted here may reach the rest of the system.
        self.add(mount, (None, b"/", None, MS_REC | MS_PRIVATE, None), "making mounts private")

    def bind(self, path: Path) -> None:
        """Mount `path` onto itself, so it can get flags of its own."""
        raw = os.fsencode(path)
        self.add(_mount_function(), (raw, raw, None, MS_BIND | MS_REC, None), f"bind {path}")

    def read_only(self, path: Path, read_only: bool = True) -> None:
        """Set (or clear) read-only on the mount at `path` and every mount below it."""
        syscall = _function(
            "syscall",
            ctypes.c_long,
            [
                ctypes.c_long,
                ctypes.c_int,
                ctypes.c_char_p,
                ctypes.c_uint,
                ctypes.c_void_p,
                ctypes.c_size_t,
            ],
        )
        attr = _MountAttr(
            MOUNT_ATTR_RDONLY if read_only else 0, 0 if read_only else MOUNT_ATTR_RDONLY
        )
        self._keep.append(attr)
        self.add(
            syscall,
            (
                SYS_MOUNT_SETATTR,
                AT_FDCWD,
                os.fsencode(path),
                AT_RECURSIVE,
                ctypes.addressof(attr),
                ctypes.sizeof(attr),
            ),
            f"{'read-only' if read_only else 'writable'} {path}",
        )

    def change_directory(self, cwd: Path) -> None:
        # After a bind mount the old working directory may still name the writable copy.
        chdir = _function("chdir", ctypes.c_int, [ctypes.c_char_p])
        self.add(chdir, (os.fsencode(cwd),), "chdir")

    def no_new_privileges(self) -> None:
        prctl = _prctl_function()
        self.add(prctl, (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")

    def drop_capabilities(self) -> None:
        """Empty capability sets; with no_new_privs even root regains none at exec."""
        capset = _function("capset", ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p])
        header = _CapHeader(_CAPABILITY_VERSION_3, 0)
        data = (_CapData * 2)()
        self._keep.extend([header, data])
        self.add(
            capset,
            (ctypes.addressof(header), ctypes.addressof(data)),
            "dropping capabilities",
        )

    def resource_limits(self, limits: dict[str, int]) -> None:
        setrlimit = _function("setrlimit", ctypes.c_int, [ctypes.c_int, ctypes.c_void_p])
        for name, value in limits.items():
            soft, hard = rlimit_pair(name, value)
            pair = _Rlimit(soft & ULONG_MAX, hard & ULONG_MAX)
            self._keep.append(pair)
            self.add(setrlimit, (RLIMIT_NUMBERS[name], ctypes.addressof(pair)), f"{name} limit")

    def landlock(self, ruleset_fd: int) -> None:
        syscall = _function("syscall", ctypes.c_long, [ctypes.c_long, ctypes.c_long, ctypes.c_long])
        self.add(syscall, (SYS_RESTRICT_SELF, ruleset_fd, 0), "landlock_restrict_self")

    def confined_mounts(
        self,
        writable: list[Path],
        protected: list[Path],
        cwd: Path,
        *,
        as_root: bool | None = None,
    ) -> None:
        """Everything read-only except `writable`; inside those, `protected` read-only again.

        chmod, chown, utimes and xattrs are not Landlock rights; a read-only
        mount refuses them (and every other change) outside the repo. Root
        unshares the mount namespace directly; anyone else (or `as_root=False`)
        goes through a user namespace that maps only their own ids.
        """
        self.private_mounts(as_root=os.geteuid() == 0 if as_root is None else as_root)
        for path in writable:
            self.bind(path)
        self.read_only(Path("/"))
        for path in writable:
            self.read_only(path, read_only=False)
        for path in protected:
            self.bind(path)
            self.read_only(path)
        self.change_directory(cwd)

    def seccomp(self, fprog_address: int, keep: object) -> None:
        """Install the filter; SPEC_ALLOW keeps the kernel from forcing its speculative-store
        mitigation on every filtered process, which slows each syscall several times over
        (the filter guards syscalls; it is no side-channel boundary)."""
        syscall = _function(
            "syscall", ctypes.c_long, [ctypes.c_long, ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p]
        )
        number = SYS_SECCOMP.get(platform.machine())
        self._keep.append(keep)
        if number is None:
            prctl = _prctl_function()
            self.add(prctl, (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fprog_address, 0, 0), "seccomp")
            return
        args = (number, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, fprog_address)
        self.add(syscall, args, "seccomp")


def _mount_function() -> Callable[..., int]:
    return _function(
        "mount",
        ctypes.c_int,
        [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p],
    )


def _prctl_function() -> Callable[..., int]:
    return _function(
        "prctl",
        ctypes.c_int,
        [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong],
    )
