"""The state folder keeps `git status` clean: it is created with its own `.gitignore`."""

from __future__ import annotations

import asyncio
import subprocess

from tests.engine.agent_kit import collect, open_engine
from tests.support.scripted_model import text


def _git(repo, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


def test_a_session_leaves_git_status_clean(tmp_path, scripted_server, model_settings):
    _git(tmp_path, "init", "-q")
    server = scripted_server([text("hello")])

    async def session() -> None:
        engine = await open_engine(model_settings(tmp_path, server))
        await collect(engine, "hi")
        await engine.aclose()

    asyncio.run(session())
    assert (tmp_path / ".helloagents" / "sessions").is_dir()
    assert _git(tmp_path, "status", "--porcelain", "--untracked-files=all") == ""


def test_an_existing_gitignore_is_left_alone(tmp_path):
    from hello_tui.config import StatePaths

    root = tmp_path / ".helloagents"
    root.mkdir()
    (root / ".gitignore").write_text("notes/\n")
    StatePaths(root).ensure()
    assert (root / ".gitignore").read_text() == "notes/\n"
