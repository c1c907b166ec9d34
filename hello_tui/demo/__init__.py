"""`hello-tui demo`: the full app on a copy of the sample repo, driven by the built-in scripted model.

No API key and no network: the scripted OpenAI-compatible server (the same
one the tests use) runs on 127.0.0.1 inside this process, and the sample repo
is copied to a temporary folder, so nothing of the user's is touched; the copy is
removed on any exit (quit, an error, the terminal closed, SIGTERM) unless --keep.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from hello_tui.demo.script import DEMO_TASK, DemoModel

WELCOME = (
    "**Demo.** A copy of a small repository with a bug, and a scripted model "
    "(no API key needed). Press **Enter** to send the prepared task, then watch the "
    "trace and the todo board; you will be asked to allow a command and to review a patch "
    "(space toggles a hunk, `a` applies the hunks you kept, `r` rejects and asks why "
    "(Enter skips the reason), Esc asks before rejecting, `?` lists every key)."
)


def copy_demo_repo(target_parent: Path) -> Path:
    """Copy the packaged sample repo into `target_parent/stats-demo`; returns the copy."""
    source = resources.files("hello_tui.demo") / "repo"
    target = target_parent / "stats-demo"
    with resources.as_file(source) as src:
        shutil.copytree(
            src,
            target,
            ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".helloagents"),
        )
    return target


def build_demo_app(repo: Path, server: Any, *, delay: float = 0.0) -> Any:
    from hello_tui.app import HelloApp
    from hello_tui.demo.model import settings_for_server

    settings = settings_for_server(server, repo, max_steps=12)
    return HelloApp(settings, initial_prompt=DEMO_TASK, welcome=WELCOME)


# Signals that end the demo from outside: the terminal closed (SIGHUP), `kill` (SIGTERM).
END_SIGNALS = ("SIGHUP", "SIGTERM")


def _remove_on_signals(parent: Path) -> None:
    """The sample copy goes with the process however it ends, a closed terminal included.

    The default action of SIGHUP kills the process without running `finally`, so the
    handler removes the copy itself and then exits."""

    def end(signum: int, frame: Any) -> None:
        shutil.rmtree(parent, ignore_errors=True)
        os._exit(128 + signum)  # the terminal is gone: nothing left to restore or print

    for name in END_SIGNALS:
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, end)


def run_demo(args: Any) -> int:
    from hello_tui.demo.model import ScriptedModelServer

    keep = bool(getattr(args, "keep", False))
    parent = Path(tempfile.mkdtemp(prefix="hello-tui-demo-"))
    server = ScriptedModelServer(DemoModel(delay=0.01)).start()
    if not keep:
        _remove_on_signals(parent)
    try:
        from hello_tui.core import logs

        repo = copy_demo_repo(parent)
        app = build_demo_app(repo, server)
        logs.configure(app.settings)  # the demo's log stays in the sample repository
        app.run()
    finally:
        server.stop()
        if keep:
            print(f"The demo repository is kept at {repo}", file=sys.stderr)
        else:
            shutil.rmtree(parent, ignore_errors=True)
    return 0
