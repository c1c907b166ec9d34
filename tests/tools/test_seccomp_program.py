"""The seccomp filter's verdict for every syscall number, read by running its BPF here."""

from __future__ import annotations

import errno
import platform
import struct

import pytest

from hello_tui.tools.shell import seccomp

ARCH = seccomp._ARCHES.get(platform.machine())
pytestmark = pytest.mark.skipif(ARCH is None, reason="no seccomp filter for this architecture")

ALLOW = seccomp.RET_ALLOW
NO_SOCKET = seccomp.RET_ERRNO | errno.EACCES
REFUSED = seccomp.RET_ERRNO | errno.EPERM


def verdict(program: bytes, nr: int, arch: int, arg1: int = 0) -> tuple[int, int]:
    """(return value, instructions run) of the classic BPF `program` on one seccomp_data."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, 0, arg1, 0, 0, 0, 0)
    code = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    acc, pc, steps = 0, 0, 0
    while True:
        op, jt, jf, k = code[pc]
        steps += 1
        if op == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif op in (0x15, 0x25, 0x35):  # jeq, jgt, jge
            hit = {0x15: acc == k, 0x25: acc > k, 0x35: acc >= k}[op]
            pc += 1 + (jt if hit else jf)
        elif op == 0x05:  # ja
            pc += 1 + k
        elif op == 0x06:  # ret
            return k, steps
        else:
            raise AssertionError(f"unknown opcode {op:#x}")


def expected(nr: int, arg1: int, *, sockets: bool, metadata: bool) -> int:
    if nr >= (ARCH.foreign_from or 1 << 32):
        return REFUSED
    if sockets and nr in ARCH.sockets:
        return NO_SOCKET
    if nr in ARCH.tracing:
        return REFUSED
    if metadata and nr in ARCH.metadata:
        return REFUSED
    requests = (*seccomp.FS_IOC_SETFLAGS, seccomp.FS_IOC_FSSETXATTR)
    if metadata and nr == ARCH.ioctl and arg1 in requests:
        return REFUSED
    return ALLOW


@pytest.mark.parametrize("sockets", [True, False])
@pytest.mark.parametrize("metadata", [True, False])
def test_every_syscall_gets_the_verdict_of_its_lists(sockets, metadata):
    program = seccomp.build_program(deny_sockets=sockets, deny_metadata=metadata, deny_tracing=True)
    assert program is not None
    for nr in [*range(600), 0x40000000, 0x40000001]:
        for arg1 in (0, *seccomp.FS_IOC_SETFLAGS, seccomp.FS_IOC_FSSETXATTR):
            got, _ = verdict(program, nr, ARCH.audit_arch, arg1)
            assert got == expected(nr, arg1, sockets=sockets, metadata=metadata), (nr, arg1)
    assert verdict(program, 0, ARCH.audit_arch ^ 1)[0] == REFUSED  # another ABI


def test_allowed_syscalls_leave_the_filter_in_a_few_instructions():
    # The filter runs on every syscall a command makes: a search on the number, not a list.
    program = seccomp.build_program(deny_sockets=True, deny_metadata=True, deny_tracing=True)
    assert program is not None
    listed = {*ARCH.sockets, *ARCH.tracing, *ARCH.metadata, ARCH.ioctl}
    steps = [verdict(program, nr, ARCH.audit_arch)[1] for nr in range(600) if nr not in listed]
    assert max(steps) <= 12, max(steps)
