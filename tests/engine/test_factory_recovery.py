"""Starting the agent recovers a patch commit that was killed midway."""

from __future__ import annotations

import signal
import subprocess
import sys

from hello_tui.agent.factory import build_agent
from hello_tui.config import load_settings
from hello_tui.core.approval import PolicyApprover
from tests.patch.conftest import snapshot
from tests.patch.test_crash import CHILD, PATCH, make_repo


def test_build_agent_rolls_back_an_interrupted_commit(tmp_path):
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
    agent = build_agent(settings, PolicyApprover(yes=False))
    assert snapshot(repo) == before
    assert not (settings.state.journal / "open.json").exists()
    assert any("interrupted patch was recovered" in n for n in agent.notices)
