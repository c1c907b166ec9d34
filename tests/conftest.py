"""Shared fixtures: the scripted model server and settings pointed at it.

Kept free of textual so engine tests never load the UI.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hello_tui.config import SECRET_ENV_VARS, Settings
from tests.support.scripted_model import ScriptedModelServer, settings_for_server

# The suite starts hundreds of Python processes (the xdist workers, `hello-tui exec`, ACP
# agents, MCP servers); with PYTHONDONTWRITEBYTECODE set each one would compile hello_tui
# from source again. Loaded before the workers start, so they and their children inherit it.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# Textual repaints up to 60 times a second; a test reads the screen after it settles, never
# between frames, so fewer frames change no outcome and spare the CPU a fifth of the UI
# tests' time (2 cores run the suite). Set before textual is imported; a test may override.
os.environ.setdefault("TEXTUAL_FPS", "15")

# Variables that would change which model a test talks to.
MODEL_ENV_VARS = (
    *SECRET_ENV_VARS,
    "LLM_BASE_URL",
    "LLM_MODEL_ID",
    "LLM_MODEL",
    "LLM_TIMEOUT",
    "TEMPERATURE",
    "LOG_LEVEL",
    "CODE_AGENT_MAX_STEPS",
    "CODE_AGENT_PROTOCOL",
    "HELLOAGENTS_DIR",
    "CODE_AGENT_STATE_DIR",
    "LLM_PRICE_INPUT",
    "LLM_PRICE_OUTPUT",
    "CODE_AGENT_MODE",
)


@pytest.fixture(autouse=True)
def _isolate_model_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The developer's own keys and endpoints never leak into a test (or its subprocesses),
    and no test reads or writes the real user config: XDG_CONFIG_HOME is a fresh folder."""
    for name in MODEL_ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))


@pytest.fixture(autouse=True)
def _isolate_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """The user's own config (MCP servers) and state (approvals) never reach a test."""
    base = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(base / "state"))


@pytest.fixture
def scripted_server() -> Any:
    """Factory: `scripted_server(script, **options)` -> a started ScriptedModelServer.

    Every server it made is stopped at teardown.
    """
    started: list[ScriptedModelServer] = []

    def make(script: Any = (), **options: Any) -> ScriptedModelServer:
        server = ScriptedModelServer(script, **options).start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


@pytest.fixture
def model_settings() -> Callable[..., Settings]:
    """`model_settings(repo, server, **load_settings_kwargs)` -> Settings pointed at the server.

    `repo` is usually `tmp_path`; the environment is isolated (pass `environ=`
    to add variables).
    """

    def make(repo: Path, server: ScriptedModelServer, **kwargs: Any) -> Settings:
        return settings_for_server(server, repo, **kwargs)

    return make


class WriteLockHolder:
    """Another process holding the repository's write lock until `release()` (or `seconds`)."""

    CHILD = (
        "import sys, time, filelock, select\n"
        "lock = filelock.FileLock(sys.argv[1])\n"
        "lock.acquire()\n"
        "print('locked', flush=True)\n"
        "select.select([sys.stdin], [], [], float(sys.argv[2]))\n"
        "lock.release()\n"
        "print('released', flush=True)\n"
    )

    def __init__(self, lock_file: Path, seconds: float = 60.0) -> None:
        import subprocess
        import sys

        lock_file.parent.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", self.CHILD, str(lock_file), str(seconds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "locked"

    def release(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.write("go\n")
            self.proc.stdin.flush()
        self.proc.wait(timeout=30)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def hold_write_lock() -> Any:
    """`hold_write_lock(settings, seconds=60)` -> a WriteLockHolder; killed at teardown."""
    holders: list[WriteLockHolder] = []

    def make(settings: Settings, seconds: float = 60.0) -> WriteLockHolder:
        holder = WriteLockHolder(settings.state.lock_file, seconds)
        holders.append(holder)
        return holder

    yield make
    for holder in holders:
        holder.kill()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection built (the test items, every imported module's objects):
    the collector's full passes during the run then skip them, and so does the final one
    of pytest's unraisable-exception check (about 0.8 s a process). Objects made by the
    tests are collected as usual."""
    import gc

    gc.collect()
    gc.freeze()
