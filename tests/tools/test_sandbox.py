"""The OS sandbox holds on its own: commands run through the runner directly, no policy asked.

Each test hands `run_command` something the policy would refuse (write
outside the repo, read /etc/hostname, open a socket, change .git/) and
checks on disk, on the wire and in /proc that it did not happen.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from hello_tui.tools.shell import housekeeping, sandbox
from hello_tui.tools.shell.landlock import (
    FS_IOCTL_DEV,
    FS_REFER,
    FS_TRUNCATE,
    FS_WRITE_FILE,
    handled_fs,
)
from hello_tui.tools.shell.runner import CommandScope, RunConfig, run_command
from hello_tui.tools.shell.sandbox import SandboxSpec, Support, grants_for

FOUND = sandbox.support()
needs_landlock = pytest.mark.skipif(
    not FOUND.available, reason="this kernel has no Landlock (Linux 5.13+ with landlock enabled)"
)
needs_namespace = pytest.mark.skipif(
    not FOUND.mount_namespace, reason="this system cannot make a private mount namespace"
)
needs_seccomp = pytest.mark.skipif(
    not FOUND.seccomp, reason="no seccomp filter for this architecture"
)


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("inside\n")
    (repo / ".helloagents").mkdir()
    (repo / ".helloagents" / "note.md").write_text("state\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside-secret\n")
    return {"repo": repo.resolve(), "outside": outside.resolve()}


def config_for(repo: Path, **changes) -> RunConfig:
    return replace(RunConfig(repo=repo, state_dir=repo / ".helloagents"), **changes)


async def run(world, command, mode="read-only", network=False, **changes):
    repo = world["repo"]
    return await run_command(
        command,
        cwd=repo,
        config=config_for(repo, **changes),
        mode=mode,
        network=network,
        timeout=60,
    )


def snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            st = path.stat()
            found[path.relative_to(root).as_posix()] = (
                path.read_bytes(),
                st.st_mode,
                st.st_mtime_ns,
            )
    return found


# ---------------------------------------------------------------- files


@needs_landlock
async def test_read_only_commands_write_nowhere(world):
    before_out, before_repo = snapshot(world["outside"]), snapshot(world["repo"])
    outcome = await run(
        world,
        f"echo x > {world['outside']}/new; echo x >> {world['outside']}/secret.txt; "
        f"echo x > {world['repo']}/b.txt; rm {world['repo']}/a.txt; mkdir {world['repo']}/d; "
        f"echo ok > $TMPDIR/scratch && cat $TMPDIR/scratch",
    )
    assert outcome.stdout.text() == "ok\n"  # only its private folder is writable
    assert outcome.stderr.text().count("Permission denied") >= 4
    assert snapshot(world["outside"]) == before_out
    assert snapshot(world["repo"]) == before_repo


@needs_landlock
async def test_reads_stop_at_the_repo_and_the_system_folders(world):
    outcome = await run(
        world,
        f"cat /etc/hostname; cat {world['outside']}/secret.txt; ls {Path.home()}; "
        "cat a.txt; head -c 3 /usr/bin/env >/dev/null && echo usr-ok",
    )
    assert "inside\nusr-ok\n" == outcome.stdout.text()
    err = outcome.stderr.text()
    assert "/etc/hostname: Permission denied" in err
    assert "secret.txt: Permission denied" in err
    assert "outside-secret" not in outcome.stdout.text()


@needs_landlock
async def test_an_argv_command_is_confined_too(world):
    outcome = await run(world, ["cat", "/etc/hostname"])
    assert outcome.exit_code != 0 and "Permission denied" in outcome.stderr.text()


@needs_landlock
@pytest.mark.parametrize("mode", ["read-only", "approved"])
async def test_a_program_that_cannot_start_is_a_start_error(world, mode):
    (world["repo"] / "plain.txt").write_text("not a program\n")
    missing = await run(world, [str(world["repo"] / "no-such-program")], mode=mode)
    assert missing.exit_code is None
    assert missing.start_error.endswith("no-such-program: No such file or directory")
    not_executable = await run(world, [str(world["repo"] / "plain.txt")], mode=mode)
    assert not_executable.exit_code is None
    assert not_executable.start_error.endswith("plain.txt: Permission denied")
    assert (await run(world, ["cat", "a.txt"], mode=mode)).stdout.text() == "inside\n"


def _program(folder: Path, name: str, says: str, executable: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text(f"#!/bin/sh\necho {says}\n")
    program.chmod(0o755 if executable else 0o644)
    return program


def _with_path(*folders: str) -> dict[str, str]:
    return {"PATH": os.pathsep.join(folders)}


@needs_landlock
async def test_a_name_is_found_on_path_as_execvp_finds_it(world, tmp_path):
    system = os.environ.get("PATH", "/usr/bin:/bin")
    first, second = tmp_path / "first", tmp_path / "second"
    _program(first, "tool", "first", executable=False)
    _program(second, "tool", "second")
    # An earlier candidate that exists but may not run does not stop the search.
    found = await run(world, ["tool"], environ=_with_path(str(first), str(second), system))
    assert found.stdout.text() == "second\n" and found.exit_code == 0
    # Nothing else found: its error is the one reported, not "no such file".
    refused = await run(world, ["tool"], environ=_with_path("/no/such/folder", str(first), system))
    assert refused.exit_code is None and refused.start_error.endswith("tool: Permission denied")
    missing = await run(world, ["no-such-tool"], environ=_with_path(str(first), system))
    assert missing.start_error.endswith("no-such-tool: No such file or directory")


@needs_landlock
async def test_an_empty_path_entry_is_the_current_folder(world):
    # Approved commands may run programs of the repo (read-only ones may not execute there).
    _program(world["repo"], "here", "from-cwd")
    system = os.environ.get("PATH", "/usr/bin:/bin")
    found = await run(world, ["here"], mode="approved", environ=_with_path("/no/such", "", system))
    assert found.stdout.text() == "from-cwd\n"
    unlisted = await run(world, ["here"], mode="approved", environ=_with_path(system))
    assert unlisted.start_error.endswith("here: No such file or directory")


@needs_landlock
async def test_a_name_with_a_slash_is_never_looked_up_on_path(world, tmp_path):
    _program(tmp_path / "bin" / "sub", "tool", "from-path")
    _program(world["repo"] / "sub", "tool", "from-cwd")
    system = os.environ.get("PATH", "/usr/bin:/bin")
    environ = _with_path(str(tmp_path / "bin"), system)
    found = await run(world, ["sub/tool"], mode="approved", environ=environ)
    assert found.stdout.text() == "from-cwd\n"
    (world["repo"] / "sub" / "tool").unlink()
    missing = await run(world, ["sub/tool"], mode="approved", environ=environ)
    assert missing.start_error.endswith("sub/tool: No such file or directory")


@needs_landlock
@needs_namespace
@pytest.mark.parametrize(
    "pid_namespace",
    [
        # The spawner's user, mount and PID namespaces (a user namespace even for root).
        pytest.param(FOUND.pid_namespace, id="as-probed"),
        # A mount namespace of the spawner's own (directly as root, else in a user namespace).
        pytest.param(False, id="without-pid-namespace"),
    ],
)
async def test_approved_commands_write_the_repo_but_not_git_state_or_outside(world, pid_namespace):
    repo = world["repo"]
    git_before = snapshot(repo / ".git")
    state_before = snapshot(repo / ".helloagents")
    outside_before = snapshot(world["outside"])
    outcome = await run(
        world,
        "echo new > b.txt && mkdir -p src/pkg && echo x > src/pkg/m.py && mv b.txt c.txt; "
        "echo hook > .git/hooks/pre-commit; echo x >> .git/config; rm -rf .git/objects; "
        "echo forged > .helloagents/note.md; "
        f"echo x > {world['outside']}/new; chmod 600 {world['outside']}/secret.txt; "
        f"touch -d 2001-01-01 {world['outside']}/secret.txt; echo done",
        mode="approved",
        confinement=replace(FOUND, pid_namespace=pid_namespace),
    )
    assert outcome.stdout.text().endswith("done\n")
    assert (repo / "c.txt").read_text() == "new\n" and (repo / "src/pkg/m.py").exists()
    assert snapshot(repo / ".git") == git_before
    assert snapshot(repo / ".helloagents") == state_before
    assert snapshot(world["outside"]) == outside_before
    assert "Read-only file system" in outcome.stderr.text()


@needs_landlock
@needs_seccomp
async def test_read_only_commands_cannot_change_metadata_anywhere(world):
    secret = world["outside"] / "secret.txt"
    before = secret.stat()
    outcome = await run(
        world,
        f"chmod 600 {secret}; chmod 600 a.txt; touch -d 2001-01-01 {secret}; "
        "chattr +A a.txt; echo end",
    )
    assert outcome.stdout.text() == "end\n"
    after = secret.stat()
    assert (after.st_mode, after.st_mtime_ns) == (before.st_mode, before.st_mtime_ns)
    assert (world["repo"] / "a.txt").stat().st_mode & 0o777 != 0o600


# ---------------------------------------------------------------- network


class _Listener:
    """A TCP and a UDP socket on 127.0.0.1 and a unix socket: did anything reach them?"""

    def __init__(self, folder: Path) -> None:
        self.tcp = socket.socket()
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.tcp.settimeout(0.2)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.settimeout(0.2)
        self.unix_path = folder / "agent.sock"
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind(str(self.unix_path))
        self.unix.listen(8)
        self.unix.settimeout(0.2)
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            for server in (self.tcp, self.unix):
                try:
                    conn, _ = server.accept()
                except OSError:
                    continue
                with conn:
                    conn.settimeout(2)
                    try:
                        self.received.append(conn.recv(100))
                    except OSError:
                        self.received.append(b"")
            try:
                self.received.append(self.udp.recv(100))
            except OSError:
                pass

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for s in (self.tcp, self.udp, self.unix):
            s.close()

    def client(self) -> str:
        tcp_port, udp_port = self.tcp.getsockname()[1], self.udp.getsockname()[1]
        return (
            "import socket\n"
            "def attempt(name, fn):\n"
            "    try:\n"
            "        fn(); print(name, 'sent')\n"
            "    except OSError as exc:\n"
            "        print(name, 'blocked', exc.errno)\n"
            f"def tcp():\n    s = socket.create_connection(('127.0.0.1', {tcp_port}), 2)\n"
            "    s.sendall(b'tcp-leak'); s.close()\n"
            "def udp():\n    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f"    s.sendto(b'udp-leak', ('127.0.0.1', {udp_port}))\n"
            "def unix():\n    s = socket.socket(socket.AF_UNIX)\n"
            f"    s.connect({str(self.unix_path)!r}); s.sendall(b'unix-leak'); s.close()\n"
            "attempt('tcp', tcp); attempt('udp', udp); attempt('unix', unix)\n"
        )


@pytest.fixture
def listener(world):
    found = _Listener(world["outside"])
    yield found
    found.close()


@needs_landlock
@pytest.mark.parametrize("mode", ["read-only", "approved"])
async def test_no_network_means_no_socket_of_any_kind(world, listener, mode):
    outcome = await run(world, [sys.executable, "-c", listener.client()], mode=mode)
    lines = outcome.stdout.text().splitlines()
    assert lines == ["tcp blocked 13", "udp blocked 13", "unix blocked 13"], outcome.stderr.text()
    listener.close()
    assert not any(b"leak" in r for r in listener.received)


@needs_landlock
async def test_allow_with_network_reaches_the_network(world, listener):
    outcome = await run(
        world, [sys.executable, "-c", listener.client()], mode="approved", network=True
    )
    assert "tcp sent" in outcome.stdout.text(), outcome.stderr.text()
    listener.close()
    assert b"tcp-leak" in listener.received


@needs_landlock
async def test_without_seccomp_landlock_still_stops_tcp(world, listener):
    tcp_only = Support(FOUND.landlock_abi, seccomp=False, mount_namespace=FOUND.mount_namespace)
    if FOUND.landlock_abi < 4:
        pytest.skip("Landlock's TCP rights need ABI 4")
    outcome = await run(world, [sys.executable, "-c", listener.client()], confinement=tcp_only)
    lines = outcome.stdout.text().splitlines()
    # What seccomp adds: without it only TCP is stopped, UDP and unix sockets pass.
    assert lines[0].startswith("tcp blocked")
    assert "udp sent" in lines and "unix sent" in lines


# ---------------------------------------------------------------- other processes


@needs_landlock
async def test_other_processes_environment_and_signals_are_out_of_reach(world, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-planted-in-the-parent")
    me = os.getpid()
    outcome = await run(
        world,
        f"cat /proc/{me}/environ; cat /proc/$PPID/environ; kill -0 {me} && echo signalled; "
        "grep CapEff /proc/self/status; printenv ANTHROPIC_API_KEY || echo no-key",
    )
    text = outcome.stdout.text()
    assert "sk-ant-planted" not in text
    assert "signalled" not in text
    assert "CapEff:\t0000000000000000" in text
    assert text.endswith("no-key\n")


@needs_landlock
async def test_commands_at_once_each_get_a_keeper_of_their_own(world):
    # One keeper and child are forked ahead; the others are forked for their request.
    outcomes = await asyncio.gather(
        *(run(world, ["sh", "-c", f"sleep 0.2; echo {i} $$"]) for i in range(4))
    )
    words = [outcome.stdout.text().split() for outcome in outcomes]
    assert [w[0] for w in words] == ["0", "1", "2", "3"]
    assert len({w[1] for w in words}) == 4  # four processes
    assert all(outcome.exit_code == 0 for outcome in outcomes)


@needs_landlock
async def test_the_private_folder_is_emptied_afterwards(world):
    outcome = await run(
        world, "echo $HOME; echo $TMPDIR; touch $HOME/.x $TMPDIR/y; mkdir $TMPDIR/d"
    )
    home, tmp = outcome.stdout.text().split()
    assert Path(home).name == "home" and Path(tmp).name == "tmp"
    housekeeping.settle()  # emptied in the background, after the result
    assert list(Path(home).iterdir()) == [] and list(Path(tmp).iterdir()) == []


@needs_landlock
async def test_what_a_command_left_is_gone_for_the_next_even_before_housekeeping(
    world, monkeypatch
):
    housekeeping.settle()
    put_off: list = []
    monkeypatch.setattr(housekeeping, "later", put_off.append)  # it never gets its turn
    first = await run(world, "touch $HOME/.x $TMPDIR/y; mkdir $TMPDIR/d; echo $PPID")
    assert first.exit_code == 0 and put_off  # the emptying (and the next keeper) waits
    second = await run(world, "ls -A $HOME $TMPDIR; echo $PPID")
    assert second.exit_code == 0
    assert ".x" not in second.stdout.text() and "y" not in second.stdout.text().split()
    # A keeper of its own, forked for it since none was forked ahead.
    assert first.stdout.text().split()[-1] != second.stdout.text().split()[-1]


@needs_landlock
@pytest.mark.skipif(FOUND.landlock_abi < 6, reason="signal scoping needs Landlock ABI 6")
async def test_the_next_command_cannot_reach_the_one_before_it(world):
    pids: list[str] = []
    cancel = asyncio.Event()
    repo = world["repo"]

    def heard(text: str, stream: str) -> None:
        pids.extend(text.split())

    first = asyncio.ensure_future(
        run_command(
            "echo $$ $PPID; sleep 30",
            cwd=repo,
            config=config_for(repo),
            timeout=60,
            on_output=heard,
            cancel=cancel,
        )
    )
    for _ in range(500):
        if len(pids) == 2:
            break
        await asyncio.sleep(0.01)
    command, keeper = pids
    try:
        second = await run(
            world,
            f"kill -0 {command} 2>/dev/null && echo reached-command; "
            f"kill -0 {keeper} 2>/dev/null && echo reached-keeper; echo $PPID",
        )
    finally:
        cancel.set()
        await first
    assert second.stdout.text().split() == [second.stdout.text().split()[-1]]
    assert second.stdout.text().split()[-1] != keeper  # a fresh keeper, a domain of its own


# ---------------------------------------------------------------- older kernels


@needs_landlock
@pytest.mark.parametrize("abi", range(1, FOUND.landlock_abi + 1))
async def test_every_abi_level_confines_reads_and_writes(world, abi):
    older = Support(abi, seccomp=FOUND.seccomp, mount_namespace=FOUND.mount_namespace)
    outcome = await run(
        world,
        f"cat /etc/hostname; echo x > {world['outside']}/new; cat a.txt",
        confinement=older,
    )
    assert outcome.stdout.text() == "inside\n"
    assert not (world["outside"] / "new").exists()
    assert outcome.sandbox.startswith(f"landlock v{abi}")


def test_rights_by_abi_level():
    assert handled_fs(1) == (1 << 13) - 1
    assert handled_fs(2) & FS_REFER and not handled_fs(2) & FS_TRUNCATE
    assert handled_fs(3) & FS_TRUNCATE and not handled_fs(4) & FS_IOCTL_DEV
    assert handled_fs(5) & FS_IOCTL_DEV and handled_fs(7) == handled_fs(5)


@needs_landlock
async def test_without_a_mount_namespace_git_stays_out_of_reach(world):
    no_namespace = Support(FOUND.landlock_abi, seccomp=FOUND.seccomp, mount_namespace=False)
    repo = world["repo"]
    git_before = snapshot(repo / ".git")
    outcome = await run(
        world,
        "echo x > src/new.py && echo y >> a.txt && echo ok; echo z > top.txt; "
        "echo h > .git/hooks/pre-commit",
        mode="approved",
        confinement=no_namespace,
    )
    assert outcome.stdout.text() == "ok\n"
    assert (repo / "src/new.py").exists() and (repo / "a.txt").read_text() == "inside\ny\n"
    assert not (repo / "top.txt").exists()  # the top level itself stays read-only
    assert snapshot(repo / ".git") == git_before


# ---------------------------------------------------------------- settings


def test_grants_leave_out_home_hostname_and_temp(world, tmp_path):
    spec = SandboxSpec(
        repo=world["repo"],
        mode="read-only",
        network=False,
        private_dir=tmp_path / "private",
        cwd=world["repo"],
    )
    paths = grants_for(spec, os.environ.get("PATH", ""), mount_namespace=True).rights
    home = sandbox.home_directory()
    for granted in paths:
        assert home is None or not home.is_relative_to(Path(granted)), granted
    assert "/etc/hostname" not in paths and "/etc" not in paths and "/tmp" not in paths
    assert paths[str(world["repo"])] & FS_WRITE_FILE == 0
    approved = grants_for(replace(spec, mode="approved"), "", mount_namespace=True).rights
    assert approved[str(world["repo"])] & FS_WRITE_FILE


async def test_off_runs_without_a_sandbox(world):
    outcome = await run(world, f"cat {world['outside']}/secret.txt", sandbox="off")
    assert outcome.stdout.text() == "outside-secret\n" and outcome.sandbox == "none"


async def test_require_refuses_when_there_is_no_sandbox(world):
    missing = Support(0, seccomp=False, mount_namespace=False)
    outcome = await run(world, "echo hi", sandbox="require", confinement=missing)
    assert outcome.exit_code is None and "CODE_AGENT_SANDBOX=require" in outcome.start_error
    fallback = await run(world, "echo hi", confinement=missing)
    assert fallback.stdout.text() == "hi\n" and fallback.sandbox == "none"


def test_status_words(monkeypatch):
    assert sandbox.sandbox_status("off") == "sandbox: off"
    monkeypatch.setattr(sandbox, "support", lambda: Support(0, False, False))
    assert sandbox.sandbox_status() == "sandbox: none"
    assert "commands run with the policy alone" in sandbox.describe()
    assert "refused" in sandbox.describe("require")
    assert sandbox.startup_notice() is not None
    monkeypatch.setattr(sandbox, "support", lambda: Support(7, True, True))
    assert sandbox.sandbox_status() == "sandbox: landlock v7"
    assert sandbox.startup_notice() is None
    assert "dangerous" in (sandbox.startup_notice("off") or "")


def test_the_private_folder_is_emptied_only_when_no_command_uses_it(world):
    config = config_for(world["repo"])
    with CommandScope(config) as first:
        (first.tmp / "mine").write_text("x")
        with CommandScope(config) as second:
            assert second.private_dir == first.private_dir
        assert (first.tmp / "mine").exists()  # the first command still runs
    housekeeping.settle()
    assert list(first.tmp.iterdir()) == []


def test_startup_notices_gather_trust_and_sandbox(tmp_path, monkeypatch):
    from hello_tui.config import load_settings

    (tmp_path / ".env").write_text("LLM_BASE_URL=https://collector.example/v1\n")
    settings = load_settings(tmp_path, environ={"LLM_API_KEY": "k", "CODE_AGENT_SANDBOX": "off"})
    notices = sandbox.startup_notices(settings)
    assert any("not sent to a server the repository chose" in n for n in notices)
    assert any("dangerous" in n for n in notices)
    monkeypatch.setattr(sandbox, "support", lambda: Support(7, True, True))
    settings = settings.with_changes(sandbox="auto")
    assert len(sandbox.startup_notices(settings)) == 1  # a working sandbox needs no notice


@needs_landlock
@needs_namespace
async def test_an_approved_command_cannot_plant_the_state_folder_as_a_link(world):
    repo = world["repo"]
    shutil.rmtree(repo / ".helloagents")
    outcome = await run(
        world, f"ln -s {world['outside']} .helloagents; echo tried", mode="approved"
    )
    assert outcome.stdout.text() == "tried\n"
    assert (repo / ".helloagents").is_dir() and not (repo / ".helloagents").is_symlink()
    os.rmdir(repo / ".helloagents")
    os.symlink(world["outside"], repo / ".helloagents")
    refused = await run(world, "echo never", mode="approved")
    assert refused.exit_code is None and "not a real folder" in refused.start_error


def test_a_pyenv_shims_folder_on_path_grants_its_root(tmp_path, monkeypatch):
    # `python` found as a pyenv shim runs `<root>/libexec/pyenv`, then `<root>/versions/...`:
    # granting only the shims folder made every `python -m unittest` exit 126.
    root = tmp_path / "home" / ".pyenv"
    (root / "shims").mkdir(parents=True)
    (root / "libexec").mkdir()
    (root / "libexec" / "pyenv").write_text("#!/bin/sh\n")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    found = sandbox.program_dirs(str(root / "shims"))
    assert root.resolve() in found and (root / "shims").resolve() in found


def test_a_run_config_is_made_once_per_settings_with_fresh_secrets(tmp_path, monkeypatch):
    from hello_tui.config import load_settings

    settings = load_settings(tmp_path, environ={"LLM_API_KEY": "key-of-the-session"})
    first = RunConfig.from_settings(settings)
    assert RunConfig.from_settings(settings) is first
    assert first.repo == tmp_path.resolve() and "key-of-the-session" in first.secrets
    monkeypatch.setenv("OPENAI_API_KEY", "sk-set-later-on")
    later = RunConfig.from_settings(settings)
    assert "sk-set-later-on" in later.secrets  # secrets are read for every command
    other = load_settings(tmp_path, environ={"LLM_API_KEY": "another-key"})
    assert RunConfig.from_settings(other).secrets != later.secrets


def test_housekeeping_runs_each_job_once_shortly_after_and_settle_runs_them_now():
    done: list[str] = []
    housekeeping.later(lambda: done.append("first"))
    housekeeping.later(lambda: done.append("second"))
    for _ in range(200):  # the timer's grace, then the thread
        if len(done) == 2:
            break
        time.sleep(0.005)
    assert done == ["first", "second"]
    housekeeping.later(lambda: done.append("third"))
    housekeeping.settle()
    assert done == ["first", "second", "third"]
    time.sleep(housekeeping.GRACE * 4)
    assert done == ["first", "second", "third"]  # never twice


@needs_landlock
async def test_wake_words_before_a_command_are_not_taken_for_it(world):
    from hello_tui.tools.shell import spawner

    assert (await run(world, ["echo", "one"])).stdout.text() == "one\n"
    housekeeping.settle()  # the next keeper and child are forked ahead
    spawner.wake_recent()
    spawner.wake_recent()
    await asyncio.sleep(0.01)  # the child is awake, watching for the request
    second = await run(world, ["echo", "two"])
    assert second.stdout.text() == "two\n" and second.exit_code == 0


def is_pipe(fd: str) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
    except OSError:  # the listing's own descriptor, closed by now
        return False


def test_the_keepers_rehearsal_of_a_commands_end_reaps_nothing_and_keeps_no_descriptor():
    from hello_tui.tools.shell import spawner_main

    pid = os.posix_spawn("/bin/sh", ["sh", "-c", "exit 3"], {})
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # it has ended, and is not reaped yet
    before = set(os.listdir("/proc/self/fd"))
    spawner_main._rehearse_end()
    # Only new pipes count: the test process's other threads may close what they held.
    assert [fd for fd in set(os.listdir("/proc/self/fd")) - before if is_pipe(fd)] == []
    assert os.waitpid(pid, 0) == (pid, 3 << 8)  # still there for the keeper's own wait


def test_a_program_found_on_path_before_is_looked_for_again_once_it_is_gone(tmp_path):
    from hello_tui.tools.shell.runner import runnable_without_shell

    folder = _program(tmp_path / "bin", "tool", "x").parent
    path = f"{folder}{os.pathsep}/usr/bin"
    assert runnable_without_shell(["tool"], tmp_path, path)
    assert runnable_without_shell(["tool"], tmp_path, path)  # the remembered one
    (folder / "tool").chmod(0o644)
    assert not runnable_without_shell(["tool"], tmp_path, path)
    (folder / "tool").unlink()
    assert not runnable_without_shell(["tool"], tmp_path, path)
    _program(tmp_path / "bin", "tool", "back")
    assert runnable_without_shell(["tool"], tmp_path, path)


# ---------------------------------------------------------------- a gitfile's folders


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.org", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _repo_with_worktree(repo: Path, worktree: Path) -> None:
    """A repository with one commit and a linked worktree of it."""
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "a.txt").write_text("a\n")
    _git("add", "a.txt", cwd=repo)
    _git("commit", "-qm", "first", cwd=repo)
    _git("worktree", "add", "-q", str(worktree), cwd=repo)


def test_a_linked_worktree_and_a_submodule_get_their_own_git_folders(tmp_path):
    from hello_tui.core.git_layout import linked_git_dirs

    main, sub = tmp_path / "main", tmp_path / "sub"
    _repo_with_worktree(main, tmp_path / "linked")
    _repo_with_worktree(sub, tmp_path / "sub-linked")
    _git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub", cwd=main)
    git_dir = (main / ".git").resolve()
    assert linked_git_dirs(tmp_path / "linked") == [
        str(git_dir / "worktrees" / "linked"),
        str(git_dir),
    ]
    assert linked_git_dirs(main / "sub") == [str(git_dir / "modules" / "sub")]
    assert linked_git_dirs(main) == []  # its `.git` is a folder inside it


@pytest.mark.parametrize(
    "target",
    ["/", "..", "{outside}", "{other}/.git", "{other}/.git/worktrees/w"],
    ids=["root", "parent", "a plain folder", "another repository", "another worktree"],
)
def test_a_gitfile_naming_what_is_not_its_own_opens_nothing(tmp_path, target):
    from hello_tui.core.git_layout import linked_git_dirs

    other = tmp_path / "other"
    _repo_with_worktree(other, tmp_path / "w")
    (tmp_path / "outside").mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    named = target.format(outside=tmp_path / "outside", other=other)
    (repo / ".git").write_text(f"gitdir: {named}\n")
    assert linked_git_dirs(repo) == []


@needs_landlock
async def test_a_gitfile_naming_the_root_keeps_reads_in_the_repo(world):
    shutil.rmtree(world["repo"] / ".git")
    (world["repo"] / ".git").write_text("gitdir: /\n")
    outcome = await run(world, f"cat {world['outside']}/secret.txt; cat a.txt")
    assert "outside-secret" not in outcome.stdout.text()
    assert outcome.stdout.text() == "inside\n"


@needs_landlock
async def test_git_reads_a_linked_worktrees_history_in_the_sandbox(tmp_path):
    _repo_with_worktree(tmp_path / "main", tmp_path / "linked")
    linked = (tmp_path / "linked").resolve()
    outcome = await run_command(
        "git log --oneline && git status --short",
        cwd=linked,
        config=config_for(linked),
        mode="read-only",
        network=False,
        timeout=60,
    )
    assert outcome.exit_code == 0, outcome.stderr.text()
    assert "first" in outcome.stdout.text()
