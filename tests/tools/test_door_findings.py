"""The file tools against a hostile repository: what its files can make them show."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hello_tui.tools.grep import GrepTool, find_rg
from tests.tools.helpers import make_ctx, write

needs_rg = pytest.mark.skipif(find_rg() is None, reason="rg binary not installed")


def _git_repo(base: Path) -> Path:
    repo = base / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    url = "https://user:ghp_clone_token@example.com/x/y"
    subprocess.run(["git", "-C", str(repo), "config", "remote.origin.url", url], check=True)
    write(repo / "a.txt", "hello\n")
    return repo


@needs_rg
@pytest.mark.parametrize("force_python", [False, True])
async def test_gitignore_whitelist_does_not_open_git_or_state_to_grep(
    tmp_path: Path, force_python: bool
):
    # rg lets a whitelist in .gitignore un-hide hidden folders: .git/ and the state
    # folder must stay out all the same (the clone's config holds the remote's token).
    repo = _git_repo(tmp_path)
    write(repo / ".gitignore", "!.git\n!.git/**\n!.helloagents\n!.helloagents/**\n")
    write(repo / ".helloagents" / "notes" / "n.md", "ghp_state_secret\n")
    tool = GrepTool(force_python=force_python)
    for args in ({"pattern": "ghp_"}, {"pattern": "ghp_", "glob": "**"}):
        result = await tool.run(tool.Args.model_validate(args), make_ctx(repo))
        assert "ghp_clone_token" not in result.text
        assert "ghp_state_secret" not in result.text
        assert result.data["total_matches"] == 0
