"""`hello-tui demo`: the sample repo is copied (its test really fails), the app opens on it
against the built-in scripted model, and the copy is removed afterwards unless --keep."""

from __future__ import annotations

import subprocess
import sys
from argparse import Namespace

from hello_tui.app import HelloApp
from hello_tui.demo import copy_demo_repo, run_demo
from hello_tui.demo.script import DEMO_TASK


def test_the_sample_repo_has_the_mean_bug(tmp_path):
    repo = copy_demo_repo(tmp_path)
    assert repo.name == "stats-demo"
    assert "/ (count - 1)" in (repo / "stats.py").read_text()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_stats.py"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "1 failed, 1 passed" in proc.stdout


def _run_headless(monkeypatch, seen: dict, keep: bool) -> int:
    original_run = HelloApp.run

    async def pilot_script(pilot) -> None:
        app = pilot.app
        while app.engine is None:
            await pilot.pause(0.05)
        seen["repo"] = app.settings.repo
        seen["prompt"] = app.prompt.text
        seen["files"] = sorted(p.name for p in app.settings.repo.iterdir())
        seen["preflight_url"] = app.settings.base_url
        app.exit()

    def run_headless(self, *args, **kwargs):
        return original_run(self, headless=True, size=(120, 40), auto_pilot=pilot_script)

    monkeypatch.setattr(HelloApp, "run", run_headless)
    return run_demo(Namespace(keep=keep))


def test_demo_opens_the_app_on_a_temporary_copy_and_cleans_up(monkeypatch):
    seen: dict = {}
    assert _run_headless(monkeypatch, seen, keep=False) == 0
    assert seen["prompt"] == DEMO_TASK
    assert {"stats.py", "test_stats.py"} <= set(seen["files"])
    assert seen["preflight_url"].startswith("http://127.0.0.1:")
    assert not seen["repo"].exists()


def test_demo_keep_leaves_the_copy(monkeypatch, capsys):
    seen: dict = {}
    assert _run_headless(monkeypatch, seen, keep=True) == 0
    try:
        assert (seen["repo"] / "stats.py").exists()
        assert str(seen["repo"]) in capsys.readouterr().err
    finally:
        import shutil

        shutil.rmtree(seen["repo"].parent, ignore_errors=True)


def test_demo_removes_its_copy_when_the_terminal_closes(tmp_path):
    """A real terminal (a pty) running `hello-tui demo`, then SIGHUP as a closed window sends."""
    import os
    import pty
    import select
    import signal
    import sys
    import time

    env = {**os.environ, "TMPDIR": str(tmp_path), "TERM": "xterm-256color"}
    pid, fd = pty.fork()
    if pid == 0:  # the child: the demo in the pty
        os.execvpe(sys.executable, [sys.executable, "-m", "hello_tui", "demo"], env)
    try:
        deadline = time.monotonic() + 60
        copies: list = []
        while time.monotonic() < deadline and not copies:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    os.read(fd, 65536)  # keep the terminal drained
                except OSError:
                    break
            copies = [p for p in tmp_path.glob("hello-tui-demo-*") if (p / "stats-demo").is_dir()]
        assert copies, "the demo did not start"
        time.sleep(0.5)
        os.kill(pid, signal.SIGHUP)
        # Keep draining: the app restores the terminal on its way out, and a full pty
        # would hold it there (a closed terminal fails those writes instead).
        status = None
        deadline = time.monotonic() + 60
        while status is None and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    os.read(fd, 65536)
                except OSError:
                    pass
            done, code = os.waitpid(pid, os.WNOHANG)
            if done:
                status = code
        assert status is not None, "the demo did not end on SIGHUP"
        assert os.WIFEXITED(status) or os.WIFSIGNALED(status)
        assert not any(tmp_path.glob("hello-tui-demo-*"))
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(fd)
