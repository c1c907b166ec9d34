"""Landlock through ctypes: the kernel's ABI level and rulesets built in the parent process.

Landlock (Linux 5.13+) lets an unprivileged process give up access rights for
itself and everything it starts. Rights are listed per file hierarchy ("read
beneath /usr", "write beneath the repo"); whatever a ruleset handles and no
rule grants is denied. Each ABI level adds rights: 2 renames and links across
folders (REFER), 3 truncation, 4 TCP bind/connect, 5 ioctl on devices, 6
scoping of abstract unix sockets and signals, 7 audit-log control. A ruleset
only handles the rights its kernel knows, so one program works from ABI 1 up.

The ruleset is created and filled here, in the app; the spawner process
(`spawner_main.py`) gets its file descriptor and restricts itself, each
keeper and each command with it.
"""

from __future__ import annotations

import ctypes
import os
import stat
from functools import lru_cache

# Landlock's syscalls have the same numbers on every architecture (the unified table).
SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2

# Filesystem rights (ABI 1 unless noted).
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

# Rights that make sense on a file (not a folder); a rule on a file may hold only these.
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV

READ = FS_READ_FILE | FS_READ_DIR
READ_EXECUTE = READ | FS_EXECUTE
# Everything a build or a test run does in a folder it may change. Never device
# nodes: a root process that can mknod a disk could read it around every rule.
WRITE = (
    READ
    | FS_WRITE_FILE
    | FS_TRUNCATE
    | FS_REMOVE_DIR
    | FS_REMOVE_FILE
    | FS_MAKE_DIR
    | FS_MAKE_REG
    | FS_MAKE_SYM
    | FS_MAKE_FIFO
    | FS_MAKE_SOCK
    | FS_REFER
)


class LandlockError(OSError):
    """The kernel refused to build the ruleset."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@lru_cache(maxsize=1)
def libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _syscall(*args: int | ctypes.c_void_p) -> int:
    fn = libc()["syscall"]
    fn.restype = ctypes.c_long
    converted = [a if isinstance(a, ctypes.c_void_p) else ctypes.c_long(a) for a in args]
    return int(fn(*converted))


@lru_cache(maxsize=1)
def abi_version() -> int:
    """The Landlock ABI the running kernel offers; 0 when it has none (or not Linux)."""
    if os.uname().sysname != "Linux":
        return 0
    try:
        version = _syscall(SYS_CREATE_RULESET, ctypes.c_void_p(None), 0, CREATE_RULESET_VERSION)
    except (OSError, AttributeError):
        return 0
    return max(0, version)


def handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


class Ruleset:
    """A Landlock ruleset under construction; `fd` is what the spawner restricts itself with."""

    def __init__(self, abi: int, *, restrict_network: bool) -> None:
        self.abi = abi
        self.fs_mask = handled_fs(abi)
        net = (NET_BIND_TCP | NET_CONNECT_TCP) if (restrict_network and abi >= 4) else 0
        scoped = (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0
        attr = _RulesetAttr(self.fs_mask, net, scoped)
        # Older kernels know a shorter struct; pass only the fields they know.
        size = 8 if abi < 4 else (16 if abi < 6 else ctypes.sizeof(_RulesetAttr))
        fd = _syscall(SYS_CREATE_RULESET, ctypes.c_void_p(ctypes.addressof(attr)), size, 0)
        if fd < 0:
            raise LandlockError(ctypes.get_errno(), "landlock_create_ruleset failed")
        self.fd = fd
        self.granted: list[tuple[str, int]] = []  # for doctor and tests

    def allow(self, path: str | os.PathLike[str], rights: int) -> bool:
        """Grant `rights` beneath `path` (only file rights when it is a file).

        Returns False when the path does not exist: a folder this system lacks
        (/lib32, /etc/terminfo) simply gets no rule.
        """
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
            allowed = rights & self.fs_mask
            if not is_dir:
                allowed &= FILE_RIGHTS
            if not allowed:
                return False
            attr = _PathBeneathAttr(allowed, fd)
            result = _syscall(
                SYS_ADD_RULE,
                self.fd,
                RULE_PATH_BENEATH,
                ctypes.c_void_p(ctypes.addressof(attr)),
                0,
            )
            if result < 0:
                raise LandlockError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
            self.granted.append((os.fspath(path), allowed))
            return True
        finally:
            os.close(fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:  # a forgotten ruleset must not leak its descriptor
        try:
            self.close()
        except OSError:
            pass
