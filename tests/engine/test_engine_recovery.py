"""Opening the engine recovers a patch commit that was killed midway, and says so."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys

from hello_tui.config import load_settings
from hello_tui.core.approval import PolicyApprover
from hello_tui.engine.facade import Engine
from tests.patch.conftest import snapshot
from tests.patch.test_crash import CHILD, PATCH, make_repo


def test_opening_the_engine_rolls_back_an_interrupted_commit(tmp_path):
    repo = make_repo(tmp_path / "repo")
    before = snapshot(repo)
    # killed after the backups and the journal, in the middle of the writes
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(repo), "5"],
        input=PATCH,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL
    assert snapshot(repo) != before
    settings = load_settings(repo, environ={"LLM_API_KEY": "k"})

    async def open_and_check() -> None:
        engine = await Engine.open(settings, PolicyApprover(yes=False))
        try:
            assert snapshot(repo) == before
            assert not (settings.state.journal / "open.json").exists()
            assert any("interrupted patch was recovered" in n for n in engine.take_notices())
            assert engine.take_notices() == []  # taken once
        finally:
            await engine.aclose()

    asyncio.run(open_and_check())
