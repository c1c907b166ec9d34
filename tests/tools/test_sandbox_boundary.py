"""Attacks on the boundary between a read-only command and the app that started it.

The "app" here is a real process (`APP`, run with `python -c`) with a secret
in its environment from the start and in its memory: it runs one command
through the runner to warm it up, then the attack as a read-only command
(the policy is not asked: the OS boundary must hold on its own), then the
read-only controls through the real terminal tool, and prints what it saw.
Every attack is a real process using ctypes for ptrace, process_vm_readv and
kill; every test checks that the outside canary is untouched, that the
secret never reached the output, that the app was never signalled and that
the controls still run unasked.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import hello_tui
from hello_tui.tools.shell import sandbox

FOUND = sandbox.support()
SECRET = "sk-boundary-7Hq2vN9xLmP4tR8w"
SOURCE_ROOT = Path(hello_tui.__file__).resolve().parent.parent
CONTROLS = (
    "cat a.txt",
    "grep -rn inside .",
    "git log --oneline",
    "git status --short",
    "ls | sort",
)

pytestmark = pytest.mark.skipif(
    not FOUND.available or FOUND.landlock_abi < 6,
    reason="needs Landlock with signal scoping (ABI 6, Linux 6.12+)",
)

APP = textwrap.dedent(
    """
    import asyncio, ctypes, dataclasses, json, os, signal, sys
    from pathlib import Path
    from hello_tui.config import load_settings
    from hello_tui.core.tools import ToolContext
    from hello_tui.tools.shell import sandbox
    from hello_tui.tools.shell.runner import RunConfig, run_command
    from hello_tui.tools.terminal import TerminalArgs, TerminalTool

    request = json.loads(sys.argv[1])
    repo = Path(request["repo"])
    secret = ctypes.create_string_buffer(os.environ["BOUNDARY_SECRET"].encode())
    signals = []
    signal.signal(signal.SIGUSR1, lambda *_: signals.append("USR1"))
    changes = {}
    if request["no_pid_namespace"]:
        changes["confinement"] = dataclasses.replace(sandbox.support(), pid_namespace=False)
    if request["limits"]:
        from hello_tui.tools.shell.limits import CommandLimits
        changes["limits"] = CommandLimits(**request["limits"])
    config = RunConfig(repo=repo, state_dir=repo / ".helloagents", **changes)

    def marked(marker):  # live processes (host pids) whose command line holds `marker`
        found = []
        for entry in os.listdir("/proc") if marker else ():
            try:
                cmdline = Path("/proc", entry, "cmdline").read_bytes()
                state = Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if entry.isdigit() and marker.encode() in cmdline and state != "Z":
                found.append(int(entry))
        return found

    def chain(pid):  # `pid`'s ancestors up to the first process, by PPid in the host's /proc
        found = []
        while pid > 1:
            try:
                status = Path("/proc", str(pid), "status").read_text()
            except OSError:
                break
            pid = int(status.split("PPid:")[1].split()[0])
            found.append(pid)
        return found

    async def main():
        await run_command("true", cwd=repo, config=config, timeout=60)
        tids = sorted(int(t) for t in os.listdir("/proc/self/task"))
        values = {
            "{pid}": str(os.getpid()),
            "{tids}": " ".join(map(str, tids)),
            "{addr}": str(ctypes.addressof(secret)),
            "{size}": str(len(secret.value)),
        }
        argv = []
        for arg in request["argv"]:
            for key, value in values.items():
                arg = arg.replace(key, value)
            argv.append(arg)
        running = asyncio.ensure_future(run_command(
            argv, cwd=repo, config=config, mode=request["mode"], timeout=120
        ))
        ancestors = []
        if request["watch"]:  # the host's view of the command's child: its PPid chain
            for _ in range(2400):
                found = [e for e in marked(request["watch"]) if e != os.getpid()]
                if found:
                    ancestors = chain(int(found[0]))
                    break
                await asyncio.sleep(0.05)
            (repo / "go").write_text("")  # lets the command end
        outcome = await running
        if request["release"]:  # what a survivor waits for before it touches the canary
            (repo / request["release"]).write_text("")
            await asyncio.sleep(1)
        # The app's own command line holds the marker too.
        survivors = [e for e in marked(request["marker"]) if e != os.getpid()]
        ctx = ToolContext(settings=load_settings(repo, environ={}))
        controls = {}
        for command in request["controls"]:
            result = await TerminalTool().run(TerminalArgs(command=command), ctx)
            controls[command] = [
                result.data.get("verdict"), result.data.get("exit_code"), result.text
            ]
        print(json.dumps({
            "stdout": outcome.stdout.text(),
            "stderr": outcome.stderr.text(),
            "exit_code": outcome.exit_code,
            "signals": signals,
            "survivors": survivors,
            "ancestors": ancestors,
            "app": os.getpid(),
            "controls": controls,
        }))

    asyncio.run(main())
    """
)

# ptrace, /proc reads, process_vm_readv and kill against the app (every thread
# of it) and against the command's own parent; each success prints a word.
ATTACK = textwrap.dedent(
    """
    import ctypes, glob, os, signal, sys
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    app, tids, addr, size = int(sys.argv[1]), [int(t) for t in sys.argv[2].split()], int(sys.argv[3]), int(sys.argv[4])
    parent = os.getppid()
    targets = sorted({app, *tids})
    for pid in [*targets, parent]:
        if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
            print("ATTACHED", pid)
            os.waitpid(pid, 0x40000000)  # __WALL: the stop, then let it go again
            libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
        elif libc.ptrace(0x4206, pid, None, None) == 0:  # PTRACE_SEIZE
            print("SEIZED", pid)
            libc.ptrace(17, pid, None, None)
    paths = [f"/proc/{app}/environ", f"/proc/{parent}/environ", "/proc/1/environ"]
    paths += glob.glob(f"/proc/{app}/task/*/environ") + [f"/proc/{t}/environ" for t in tids]
    for path in paths:
        try:
            with open(path, "rb") as handle:
                print("ENVIRON", path, handle.read().replace(b"\\0", b" ").decode(errors="replace"))
        except OSError:
            pass
    for pid in [*targets, parent]:
        try:
            with open(f"/proc/{pid}/mem", "rb") as handle:
                handle.seek(addr)
                print("MEM", pid, handle.read(size))
        except (OSError, OverflowError, ValueError):
            pass
    class iovec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
    buffer = ctypes.create_string_buffer(size)
    local, remote = iovec(ctypes.addressof(buffer), size), iovec(addr, size)
    libc.process_vm_readv.restype = ctypes.c_ssize_t
    for pid in targets:
        if libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) > 0:
            print("VMREAD", pid, buffer.raw)
    for pid in [*targets, parent]:
        try:
            os.kill(pid, signal.SIGUSR1)
            print("SIGNALLED", pid)
        except OSError:
            pass
    try:
        open(sys.argv[5], "w").write("overwritten")
        print("WROTE canary")
    except OSError:
        pass
    print("attack done")
    """
)


NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"  # what `nobody` can run when root's own Python is private


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    return make_world(tmp_path)


@pytest.fixture
def user_world(tmp_path: Path) -> Iterator[dict[str, Path]]:
    """A world for an app that runs as an ordinary user (as `nobody` when the tests run as root).

    Root's processes are never held to RLIMIT_NPROC, so the process limit is
    tested the way users meet it.
    """
    if os.geteuid() != 0:
        yield make_world(tmp_path)
        return
    if shutil.which("setpriv") is None or not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip("running as root without setpriv or a system python3")
    base = Path(tempfile.mkdtemp(prefix="boundary-"))
    os.chmod(base, 0o755)
    try:
        found = make_world(base)
        for path in [base, *base.rglob("*")]:
            os.lchown(path, NOBODY, NOBODY)
        yield {**found, "user": Path(str(NOBODY))}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def make_world(tmp_path: Path) -> dict[str, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("inside\n")
    (repo / "b.txt").write_text("more inside\n")
    (repo / ".helloagents").mkdir()
    git = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "a.txt", "b.txt"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "first"], cwd=repo, check=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary.txt").write_text("canary\n")
    return {"repo": repo.resolve(), "canary": (outside / "canary.txt").resolve()}


def run_app(
    world: dict[str, Path],
    argv: list[str],
    *,
    no_pid_namespace: bool = False,
    limits: dict[str, int] | None = None,
    marker: str = "",
    mode: str = "read-only",
    watch: str = "",
    release: str = "",
) -> dict:
    """Run `argv` from the app; `watch`: the marker of a process whose ancestors to record
    while the command runs (the command waits for a file `go`); `release`: a file made in
    the repo after the command, which a survivor would wait for."""
    request = {
        "mode": mode,
        "watch": watch,
        "release": release,
        "repo": str(world["repo"]),
        "argv": argv,
        "no_pid_namespace": no_pid_namespace,
        "limits": limits or {},
        "marker": marker,
        "controls": CONTROLS,
    }
    user = int(world["user"].name) if "user" in world else None
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(world["repo"].parent) if user is not None else os.environ.get("HOME", "/"),
        "PYTHONPATH": str(SOURCE_ROOT),
        "BOUNDARY_SECRET": SECRET,
        "OPENAI_API_KEY": SECRET,
    }
    # An ordinary user who may still read this Python's install (under root's home here).
    as_user = [
        "setpriv",
        f"--reuid={user}",
        f"--regid={user}",
        "--clear-groups",
        "--inh-caps=+dac_read_search",
        "--ambient-caps=+dac_read_search",
    ]
    done = subprocess.run(
        [*(as_user if user is not None else []), sys.executable, "-c", APP, json.dumps(request)],
        env=env,
        cwd=world["repo"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def assert_contained(world: dict[str, Path], seen: dict) -> None:
    """Nothing leaked, nothing outside changed, the app was left alone, controls still run."""
    output = seen["stdout"] + seen["stderr"]
    assert SECRET not in output
    assert SECRET[:12] not in output
    assert world["canary"].read_text() == "canary\n"
    assert seen["signals"] == []
    for command, (verdict, code, text) in seen["controls"].items():
        assert verdict == "run", (command, text)
        assert code == 0, (command, text)
        assert SECRET not in text
    assert "inside" in seen["controls"]["cat a.txt"][2]
    assert "first" in seen["controls"]["git log --oneline"][2]
    assert "a.txt" in seen["controls"]["ls | sort"][2]


@pytest.mark.parametrize(
    ("no_pid_namespace", "mode"),
    [
        pytest.param(False, "read-only", id="as-probed"),
        pytest.param(True, "read-only", id="without-pid-namespace"),
        pytest.param(False, "approved", id="approved"),
        pytest.param(True, "approved", id="approved-without-pid-namespace"),
    ],
)
def test_a_command_cannot_trace_read_or_signal_the_app(world, no_pid_namespace, mode):
    seen = run_app(
        world,
        [sys.executable, "-c", ATTACK, "{pid}", "{tids}", "{addr}", "{size}", str(world["canary"])],
        no_pid_namespace=no_pid_namespace,
        mode=mode,
    )
    assert seen["stdout"].endswith("attack done\n"), seen
    for word in ("ATTACHED", "SEIZED", "ENVIRON", "MEM", "VMREAD", "SIGNALLED", "WROTE"):
        assert word not in seen["stdout"], seen["stdout"]
    assert_contained(world, seen)


DAEMON = textwrap.dedent(
    """
    import os, subprocess, sys
    marker = sys.argv[1]
    subprocess.Popen(["setsid", "sleep", marker], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.close(1); os.close(2)
            os.execvp("sleep", ["sleep", marker + "1"])
        os._exit(0)
    os.wait()
    print("left behind")
    """
)


ROUTES = [
    pytest.param(False, "read-only", id="as-probed"),
    pytest.param(True, "read-only", id="without-pid-namespace"),
    pytest.param(False, "approved", id="approved"),
    pytest.param(True, "approved", id="approved-without-pid-namespace"),
]
APPROVED_ROUTES = ROUTES[2:]


def unique_marker() -> str:
    return f"86399.{os.getpid()}{time.monotonic_ns() % 100_000}"  # a day; no one else's


@pytest.mark.parametrize(("no_pid_namespace", "mode"), ROUTES)
def test_a_setsid_grandchild_and_a_daemon_end_with_the_command(world, no_pid_namespace, mode):
    marker = unique_marker()
    seen = run_app(
        world,
        [sys.executable, "-c", DAEMON, marker],
        no_pid_namespace=no_pid_namespace,
        marker=marker,
        mode=mode,
    )
    assert seen["stdout"] == "left behind\n" and seen["exit_code"] == 0, seen
    assert seen["survivors"] == []
    assert_contained(world, seen)


# A session of its own that waits for the app's word, then writes in the repo; the
# command ends only once it runs.
LATE_WRITER = (
    "setsid sh -c 'touch up; until [ -e released ]; do sleep 0.05; done; touch canary # {marker}'"
    " </dev/null >/dev/null 2>&1 & until [ -e up ]; do sleep 0.05; done; echo started"
)


@pytest.mark.parametrize(("no_pid_namespace", "mode"), APPROVED_ROUTES)
def test_an_approved_commands_setsid_child_never_writes_after_it(world, no_pid_namespace, mode):
    marker = unique_marker()
    seen = run_app(
        world,
        ["bash", "-c", LATE_WRITER.format(marker=marker)],
        no_pid_namespace=no_pid_namespace,
        marker=marker,
        mode=mode,
        release="released",
    )
    assert seen["stdout"] == "started\n" and seen["exit_code"] == 0, seen
    assert seen["survivors"] == []
    assert not (world["repo"] / "canary").exists()
    assert_contained(world, seen)


# A child that runs until the app has looked at it.
WAITER = textwrap.dedent(
    """
    import os, subprocess, sys, time
    child = subprocess.Popen(["sleep", sys.argv[1]])
    while not os.path.exists("go"):
        time.sleep(0.05)
    child.kill()
    child.wait()
    print("looked at")
    """
)


@pytest.mark.parametrize(("no_pid_namespace", "mode"), ROUTES)
def test_no_command_is_a_descendant_of_the_app(world, no_pid_namespace, mode):
    marker = unique_marker()
    seen = run_app(
        world,
        [sys.executable, "-c", WAITER, marker],
        no_pid_namespace=no_pid_namespace,
        mode=mode,
        watch=marker,
    )
    assert seen["stdout"] == "looked at\n", seen
    assert seen["ancestors"], "the command's child was never seen"
    assert seen["app"] not in seen["ancestors"]
    assert_contained(world, seen)


# What approved work does: files from a script, a build script run from the repo, git reads.
APPROVED_WORK = textwrap.dedent(
    """
    set -e
    python3 -c "open('generated.txt', 'w').write('made by python')"
    mkdir -p build
    printf '#!/bin/sh\\nset -e\\ncat a.txt b.txt > build/all.txt\\necho built\\n' > make.sh
    chmod +x make.sh
    ./make.sh
    git status --short > build/status.txt
    git -c user.email=t@example.org -c user.name=t commit -qam second 2>&1 || echo "no commit"
    """
)


@pytest.mark.parametrize(("no_pid_namespace", "mode"), APPROVED_ROUTES)
def test_approved_commands_keep_their_grants(world, no_pid_namespace, mode):
    repo = world["repo"]
    head = (repo / ".git" / "HEAD").read_text()
    seen = run_app(
        world, ["bash", "-c", APPROVED_WORK], no_pid_namespace=no_pid_namespace, mode=mode
    )
    assert seen["exit_code"] == 0, seen
    assert (repo / "generated.txt").read_text() == "made by python"
    assert (repo / "build" / "all.txt").read_text() == "inside\nmore inside\n"
    assert "?? generated.txt" in (repo / "build" / "status.txt").read_text()
    # `.git/` stays read-only for approved commands, as it always was: commits go through the app.
    assert "Read-only file system" in seen["stdout"] and "no commit" in seen["stdout"]
    assert (repo / ".git" / "HEAD").read_text() == head
    assert_contained(world, seen)


FORK_STORM = textwrap.dedent(
    """
    import os, sys, time
    started = 0
    while started < 1000:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        started += 1
    print("started", started)
    """
)


@pytest.mark.skipif(not FOUND.pid_namespace, reason="the process limit needs a user namespace")
@pytest.mark.parametrize("mode", ["read-only", "approved"])
def test_a_fork_storm_meets_the_process_limit_with_one_line(user_world, mode):
    world = user_world
    python = SYSTEM_PYTHON if "user" in world else sys.executable
    marker = f"storm-{os.getpid()}-{time.monotonic_ns()}"
    seen = run_app(
        world,
        [python, "-c", FORK_STORM, marker],
        limits={"processes": 40},
        marker=marker,
        mode=mode,
    )
    assert seen["exit_code"] == 1
    assert "started 1000" not in seen["stdout"]
    lines = [line for line in seen["stderr"].splitlines() if line.startswith("stopped:")]
    assert lines == ["stopped: the command hit the process limit (40 processes)"]
    assert seen["survivors"] == []
    assert_contained(world, seen)


# What a command would do to lift its spawner's process limit, then the storm.
RAISE_PID_MAX = (
    "for f in /proc/sys/kernel/pid_max /proc/1/root/proc/sys/kernel/pid_max; do"
    ' echo 4000000 > "$f" && echo "raised $f"; done;'
    ' cat /proc/sys/kernel/pid_max; exec "$0" -c "$1" "$2"'
)


@pytest.mark.skipif(not FOUND.process_limit, reason="pid_max per PID namespace needs Linux 6.14")
@pytest.mark.parametrize("mode", ["read-only", "approved"])
def test_the_process_limit_binds_the_app_s_own_user_and_cannot_be_raised(world, mode):
    """As the user the tests run as (root included, whom RLIMIT_NPROC never holds): the
    spawner's PID namespace holds the storm, and no command can write its pid_max."""
    marker = f"storm-{os.getpid()}-{time.monotonic_ns()}"
    seen = run_app(
        world,
        ["bash", "-c", RAISE_PID_MAX, sys.executable, FORK_STORM, marker],
        limits={"processes": 400},
        marker=marker,
        mode=mode,
    )
    assert "raised" not in seen["stdout"]
    assert seen["stdout"].splitlines()[0] == "401"
    assert "started 1000" not in seen["stdout"]
    assert seen["exit_code"] == 1
    lines = [line for line in seen["stderr"].splitlines() if line.startswith("stopped:")]
    assert lines == ["stopped: the command hit the process limit (400 processes)"]
    assert seen["survivors"] == []
    assert_contained(world, seen)


def test_pid_max_is_asked_only_of_kernels_that_keep_it_per_namespace():
    from hello_tui.tools.shell.spawner import kernel_keeps_pid_max_per_namespace as per_namespace

    assert per_namespace("6.14.0") and per_namespace("6.18.44-fc") and per_namespace("7.0")
    assert not per_namespace("6.13.12") and not per_namespace("5.15.0-91-generic")
    assert not per_namespace("weird")


MEMORY_HOG = "x = []\nwhile len(x) < 256: x.append(bytearray(16 << 20))\nprint('allocated')"


def test_a_memory_hog_meets_the_memory_limit_with_one_line(world):
    seen = run_app(world, [sys.executable, "-c", MEMORY_HOG], limits={"memory": 256 << 20})
    assert "allocated" not in seen["stdout"]
    assert "MemoryError" in seen["stderr"]
    lines = [line for line in seen["stderr"].splitlines() if line.startswith("stopped:")]
    assert lines == ["stopped: the command hit the memory limit (256 MiB per process)"]
    assert_contained(world, seen)


def test_a_huge_file_meets_the_file_size_limit_with_one_line(world):
    seen = run_app(
        world,
        ["bash", "-c", 'head -c 4194304 /dev/zero > "$TMPDIR/big"; echo after'],
        limits={"file_size": 1 << 20},
    )
    lines = [line for line in seen["stderr"].splitlines() if line.startswith("stopped:")]
    assert lines == ["stopped: the command hit the file-size limit (1 MiB per file)"]
    assert_contained(world, seen)


def test_the_app_makes_itself_undumpable_at_start():
    probe = (
        "import ctypes\n"
        "from hello_tui import cli\n"
        "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('dumpable', ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(SOURCE_ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.splitlines()[-1] == "dumpable 0"


# Within its own tree Landlock lets a command trace its child; the filter does not.
OWN_TREE = textwrap.dedent(
    """
    import ctypes, os, platform, time
    libc = ctypes.CDLL(None, use_errno=True)
    numbers = {
        "x86_64": {"ptrace": 101, "process_vm_readv": 310, "kcmp": 312, "perf_event_open": 298,
                   "bpf": 321, "userfaultfd": 323, "keyctl": 250, "pidfd_getfd": 438},
        "aarch64": {"ptrace": 117, "process_vm_readv": 270, "kcmp": 272, "perf_event_open": 241,
                    "bpf": 280, "userfaultfd": 282, "keyctl": 219, "pidfd_getfd": 438},
    }[platform.machine()]
    child = os.fork()
    if child == 0:
        time.sleep(30)
        os._exit(0)
    args = {"ptrace": (16, child, 0, 0), "process_vm_readv": (child, 0, 0, 0, 0, 0),
            "kcmp": (os.getpid(), child, 0, 0, 0), "perf_event_open": (0, 0, -1, -1, 0),
            "bpf": (0, 0, 0), "userfaultfd": (0,), "keyctl": (0, -3, 0), "pidfd_getfd": (0, 0, 0)}
    for name, number in numbers.items():
        result = libc.syscall(number, *[ctypes.c_long(a) for a in args[name]])
        print(name, "refused" if result == -1 and ctypes.get_errno() == 1 else f"ran {result}")
    os.kill(child, 9)
    """
)


@pytest.mark.skipif(not FOUND.seccomp, reason="no seccomp filter for this architecture")
def test_the_filter_refuses_tracing_even_of_the_commands_own_child(world):
    seen = run_app(world, [sys.executable, "-c", OWN_TREE])
    lines = seen["stdout"].splitlines()
    assert len(lines) == 8, seen
    assert all(line.endswith(" refused") for line in lines), lines
    assert_contained(world, seen)


def test_doctor_says_where_commands_start(monkeypatch):
    found = sandbox.Support(7, seccomp=True, mount_namespace=True, pid_namespace=True)
    monkeypatch.setattr(sandbox, "support", lambda: found)
    assert "separate spawner in a PID namespace with its own /proc" in sandbox.describe()
    monkeypatch.setattr(sandbox, "support", lambda: sandbox.Support(5, True, True, False))
    words = sandbox.describe()
    assert "no PID namespace" in words and "no signal scoping before Landlock v6" in words
