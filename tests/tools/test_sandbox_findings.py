"""Holes found in the OS boundary, each attacked from inside a sandboxed command.

Each test runs a real attack through the real spawner, as
`test_sandbox_boundary.py` does (an app process with a secret, the command
run without asking the policy), and checks what the kernel let it do.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.tools.test_sandbox_boundary import (
    FOUND,
    ROUTES,
    SECRET,
    SOURCE_ROOT,
    assert_contained,
    make_world,
    run_app,
)

pytestmark = pytest.mark.skipif(
    not FOUND.available or FOUND.landlock_abi < 6,
    reason="needs Landlock with signal scoping (ABI 6, Linux 6.12+)",
)

IPC_CREAT, IPC_RMID = 0o1000, 0


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    return make_world(tmp_path)


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    return libc


# The user's own segment (owner-only) and a key for one the command makes: the command
# looks for the first, reads and overwrites it, and makes the second and a message queue.
SYSV_ATTACK = textwrap.dedent(
    """
    import ctypes, sys
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    theirs, mine = int(sys.argv[1]), int(sys.argv[2])
    found = libc.shmget(theirs, 0, 0)
    if found >= 0:
        addr = libc.shmat(found, None, 0)
        if addr not in (None, ctypes.c_void_p(-1).value):
            print("READ", ctypes.string_at(addr, 16))
            ctypes.memmove(addr, b"overwritten-shm!", 16)
    if libc.shmget(mine, 1 << 20, 0o1666) >= 0:
        print("MADE segment")
    if libc.msgget(mine, 0o1666) >= 0:
        print("MADE queue")
    print("attack done")
    """
)


@pytest.mark.parametrize(("no_pid_namespace", "mode"), ROUTES)
def test_a_command_cannot_reach_or_leave_system_v_ipc_objects(world, no_pid_namespace, mode):
    libc = _libc()
    theirs, mine = 0x5EED0000 + (id(world) & 0xFFF), 0x5EEE0000 + (id(world) & 0xFFF)
    segment = libc.shmget(theirs, 4096, IPC_CREAT | 0o600)
    if segment < 0:
        pytest.skip("no System V shared memory here")
    addr = libc.shmat(segment, None, 0)
    ctypes.memmove(addr, b"user-shm-secret!", 16)
    try:
        seen = run_app(
            world,
            [sys.executable, "-c", SYSV_ATTACK, str(theirs), str(mine)],
            no_pid_namespace=no_pid_namespace,
            mode=mode,
        )
        assert seen["stdout"].endswith("attack done\n"), seen
        assert "READ" not in seen["stdout"]
        assert ctypes.string_at(addr, 16) == b"user-shm-secret!"
        # Whatever a command made is not the user's to find afterwards.
        assert libc.shmget(mine, 0, 0) < 0 and libc.msgget(mine, 0) < 0
        if mode == "read-only":  # refused outright, not only kept apart
            assert "MADE" not in seen["stdout"], seen["stdout"]
        assert_contained(world, seen)
    finally:
        libc.shmdt(ctypes.c_void_p(addr))
        libc.shmctl(segment, IPC_RMID, None)
        for cleanup in (libc.shmget(mine, 0, 0),):
            if cleanup >= 0:
                libc.shmctl(cleanup, IPC_RMID, None)
        queue = libc.msgget(mine, 0)
        if queue >= 0:
            libc.msgctl(queue, IPC_RMID, None)


# Memory no rlimit counts: a shared anonymous mapping and a memfd's pages, each written
# past the command's memory limit; then what must keep working (a private allocation
# below the limit, a shared read-only mapping of a repo file, as rg and git make).
SHARED_MEMORY_HOG = textwrap.dedent(
    """
    import mmap, os
    size = 512 << 20
    try:
        shared = mmap.mmap(-1, size)
        for i in range(0, size, 4096):
            shared[i] = 1
        print("SHARED", size)
    except OSError as exc:
        print("shared refused", exc.errno)
    try:
        fd = os.memfd_create("hog")
        chunk = b"x" * (1 << 20)
        for _ in range(size >> 20):
            os.write(fd, chunk)
        print("MEMFD", size)
    except OSError as exc:
        print("memfd refused", exc.errno)
    small = bytearray(16 << 20)
    with open("a.txt", "rb") as handle:
        view = mmap.mmap(handle.fileno(), 0, prot=mmap.PROT_READ)
        print("file map", view[:6].decode())
    print("attack done")
    """
)


@pytest.mark.parametrize(
    "no_pid_namespace",
    [pytest.param(False, id="as-probed"), pytest.param(True, id="without-pid-namespace")],
)
def test_a_read_only_command_cannot_take_memory_past_its_limit(world, no_pid_namespace):
    seen = run_app(
        world,
        [sys.executable, "-c", SHARED_MEMORY_HOG],
        no_pid_namespace=no_pid_namespace,
        limits={"memory": 256 << 20},
    )
    assert seen["stdout"].endswith("file map inside\nattack done\n"), seen
    assert "SHARED" not in seen["stdout"] and "MEMFD" not in seen["stdout"], seen["stdout"]
    assert_contained(world, seen)


# A read-only command leaves a file beside HOME and TMPDIR, and swaps HOME for a link
# to a folder of its own holding a user site-packages `.pth`; the next command (an
# approved one, of the same repo) says what it finds there.
PLANTER = textwrap.dedent(
    """
    import os, sys
    home = os.environ["HOME"]
    root = os.path.dirname(home)
    keep = os.path.join(root, "keep")
    site = os.path.join(keep, ".local", "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
    os.makedirs(site)
    with open(os.path.join(site, "planted.pth"), "w") as handle:
        handle.write("import sys; print('PLANTED', file=sys.stderr)\\n")
    with open(os.path.join(root, "beside"), "w") as handle:
        handle.write("left")
    os.rename(home, os.path.join(root, "old-home"))
    os.symlink("keep", home)
    print("planted")
    """
)
NEXT = (
    "import os; home = os.environ['HOME']; root = os.path.dirname(home);"
    " print(sorted(os.listdir(root)), os.path.islink(home), os.listdir(home))"
)
TWO_COMMANDS = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from hello_tui.tools.shell.runner import RunConfig, run_command

    repo = Path(sys.argv[1])
    config = RunConfig(repo=repo, state_dir=repo / ".helloagents")

    async def main():
        first = await run_command(json.loads(sys.argv[2]), cwd=repo, config=config, timeout=60)
        second = await run_command(
            json.loads(sys.argv[3]), cwd=repo, config=config, mode="approved", timeout=60
        )
        print(json.dumps([first.stdout.text(), second.stdout.text(), second.stderr.text()]))

    asyncio.run(main())
    """
)


def test_a_read_only_command_leaves_nothing_for_the_next_command(world):
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            TWO_COMMANDS,
            str(world["repo"]),
            json.dumps([sys.executable, "-c", PLANTER]),
            json.dumps([sys.executable, "-c", NEXT]),
        ],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(SOURCE_ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    first, second, errors = json.loads(done.stdout.splitlines()[-1])
    assert first == "planted\n"
    assert second == "['home', 'tmp'] False []\n", second
    assert "PLANTED" not in errors


# After its pipeline's status line is written, the command swaps the status file (in its
# TMPDIR) for a FIFO, or for a link to a file outside that reads like a status line.
SWAP_STATUS = (
    'echo hi | sh -c "cat; f=\\$(ls \\$TMPDIR/status-*); (sleep 0.2; rm \\$f; {make} \\$f) & "'
)
ONE_COMMAND = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from hello_tui.tools.shell.runner import RunConfig, run_command

    repo = Path(sys.argv[1])
    config = RunConfig(repo=repo, state_dir=repo / ".helloagents")

    async def main():
        outcome = await run_command(sys.argv[2], cwd=repo, config=config, timeout=60)
        codes = [[stage.code for stage in pipeline] for pipeline in outcome.pipelines]
        print(json.dumps([outcome.stdout.text(), codes]))

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("make", ["mkfifo", "ln -s {outside}"], ids=["fifo", "link"])
def test_a_command_cannot_make_the_app_block_on_or_read_through_its_status_file(world, make):
    outside = world["canary"].with_name("status-lookalike")
    outside.write_text("0:7 7\n")
    command = SWAP_STATUS.format(make=make.format(outside=outside))
    try:
        done = subprocess.run(
            [sys.executable, "-c", ONE_COMMAND, str(world["repo"]), command],
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(SOURCE_ROOT)},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the app blocked on the status file the command left")
    assert done.returncode == 0, done.stderr
    stdout, codes = json.loads(done.stdout.splitlines()[-1])
    assert stdout == "hi\n"
    assert [7, 7] not in codes, codes


# An app started with the key on its command line (`--api-key`), and a command that
# looks for it in every command line it can see.
KEYED_APP = textwrap.dedent(
    """
    import asyncio, dataclasses, json, sys
    from pathlib import Path
    from hello_tui.tools.shell import sandbox
    from hello_tui.tools.shell.runner import RunConfig, run_command

    repo, key = Path(sys.argv[1]), sys.argv[3].split("=", 1)[1]
    found = sandbox.support()
    if sys.argv[2] == "no-pid-namespace":
        found = dataclasses.replace(found, pid_namespace=False)
    config = RunConfig(repo=repo, secrets=(key,), confinement=found)

    async def main():
        outcome = await run_command(
            json.loads(sys.argv[4]), cwd=repo, config=config, timeout=60
        )
        print(json.dumps([outcome.stdout.text(), outcome.stderr.text(), sys.argv[3] == "--api-key=" + key]))

    asyncio.run(main())
    """
)
READ_COMMAND_LINES = textwrap.dedent(
    """
    import os, sys
    wanted = sys.argv[1][::-1].encode()  # never in this command's own command line
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if wanted in handle.read():
                    print("FOUND in", pid)
        except OSError:
            pass
    print("looked")
    """
)


@pytest.mark.parametrize("route", ["as-probed", "no-pid-namespace"])
def test_a_command_cannot_read_the_key_from_the_app_s_command_line(world, route):
    attack = [sys.executable, "-c", READ_COMMAND_LINES, SECRET[::-1]]
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            KEYED_APP,
            str(world["repo"]),
            route,
            f"--api-key={SECRET}",
            json.dumps(attack),
        ],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(SOURCE_ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    stdout, stderr, argv_kept = json.loads(done.stdout.splitlines()[-1])
    assert stdout.endswith("looked\n"), (stdout, stderr)
    assert "FOUND" not in stdout, stdout
    assert argv_kept  # the app's own sys.argv still holds what it was given


# prlimit, the scheduler and I/O priorities check only the user id: a command aims them
# at its keeper, the app and (in its PID namespace) the spawner, then at itself, which
# must keep working. Every call it aims at another process sets what that process has
# already (its core-file limit is the command's, inherited), so a failing run changes
# no one; the machine's init is never aimed at.
OTHERS_LIMITS = textwrap.dedent(
    """
    import ctypes, os, platform, resource, sys
    libc = ctypes.CDLL(None, use_errno=True)
    class Limit(ctypes.Structure):
        _fields_ = [("cur", ctypes.c_ulong), ("max", ctypes.c_ulong)]
    ioprio_get, ioprio_set = {"x86_64": (252, 251), "aarch64": (31, 30)}[platform.machine()]

    targets = {"keeper": os.getppid()}
    if sys.argv[2] == "own-namespace":
        targets["spawner"] = 1  # the app is not in its namespace
    else:
        targets["app"] = int(sys.argv[1])
    for name, pid in targets.items():
        same = Limit(*resource.getrlimit(resource.RLIMIT_CORE))  # forked from them: theirs
        if libc.prlimit(pid, resource.RLIMIT_CORE, ctypes.byref(same), None) == 0:
            print("LIMITED", name)
        try:
            os.sched_setaffinity(pid, os.sched_getaffinity(pid))
            print("PINNED", name)
        except OSError:
            pass
        try:
            os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, pid))
            print("RENICED", name)
        except OSError:
            pass
        try:
            os.sched_setscheduler(pid, os.sched_getscheduler(pid), os.sched_getparam(pid))
            print("SCHEDULED", name)
        except OSError:
            pass
        now = libc.syscall(ioprio_get, 1, pid)  # IOPRIO_WHO_PROCESS
        if now >= 0 and libc.syscall(ioprio_set, 1, pid, now) == 0:
            print("IO-PRIORITISED", name)
    resource.setrlimit(resource.RLIMIT_NOFILE, (512, 512))
    os.sched_setaffinity(0, os.sched_getaffinity(0))
    os.setpriority(os.PRIO_PROCESS, 0, 1)
    print("own", resource.prlimit(0, resource.RLIMIT_NOFILE), os.getpriority(os.PRIO_PROCESS, 0))
    print("attack done")
    """
)


@pytest.mark.skipif(not FOUND.seccomp, reason="no seccomp filter for this architecture")
@pytest.mark.parametrize(
    "no_pid_namespace",
    [pytest.param(False, id="as-probed"), pytest.param(True, id="without-pid-namespace")],
)
def test_a_command_cannot_change_other_processes_limits_or_scheduling(world, no_pid_namespace):
    where = "host" if no_pid_namespace or not FOUND.pid_namespace else "own-namespace"
    seen = run_app(
        world,
        [sys.executable, "-c", OTHERS_LIMITS, "{pid}", where],
        no_pid_namespace=no_pid_namespace,
    )
    assert seen["stdout"].endswith("own (512, 512) 1\nattack done\n"), seen
    for word in ("LIMITED", "PINNED", "RENICED", "SCHEDULED", "PRIORITISED"):
        assert word not in seen["stdout"], seen["stdout"]
    assert_contained(world, seen)


# The same no-op prlimit from an approved command, at its keeper and its spawner.
APPROVED_PRLIMIT = textwrap.dedent(
    """
    import ctypes, os, resource
    libc = ctypes.CDLL(None)
    class Limit(ctypes.Structure):
        _fields_ = [("cur", ctypes.c_ulong), ("max", ctypes.c_ulong)]
    mine = resource.getrlimit(resource.RLIMIT_CORE)  # forked from them: theirs too
    for pid in (os.getppid(), 1):
        if libc.prlimit(pid, resource.RLIMIT_CORE, ctypes.byref(Limit(*mine)), None) == 0:
            print("LIMITED", pid)
    print("attack done")
    """
)


@pytest.mark.skipif(
    not FOUND.seccomp or not FOUND.pid_namespace,
    reason="needs the seccomp filter, and a PID namespace (PID 1 must be the spawner)",
)
def test_an_approved_command_cannot_limit_its_keeper_or_spawner(world):
    seen = run_app(world, [sys.executable, "-c", APPROVED_PRLIMIT], mode="approved")
    assert seen["stdout"] == "attack done\n", seen
    assert_contained(world, seen)


# The app's own lock file in the state folder, which a read-only command may read.
HOLD_LOCK = textwrap.dedent(
    """
    import fcntl, os
    fd = os.open(".helloagents/write.lock", os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print("LOCKED")
    except OSError as exc:
        print("refused", exc.errno)
    print(open("a.txt").read().strip())
    """
)


@pytest.mark.skipif(not FOUND.seccomp, reason="no seccomp filter for this architecture")
def test_a_read_only_command_cannot_hold_the_app_s_locks(world):
    (world["repo"] / ".helloagents" / "write.lock").write_text("")
    seen = run_app(world, [sys.executable, "-c", HOLD_LOCK])
    assert seen["stdout"].endswith("inside\n"), seen
    assert "LOCKED" not in seen["stdout"]
    assert_contained(world, seen)
