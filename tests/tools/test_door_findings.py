"""The file tools against a hostile repository: what its files can make them show."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from hello_tui.tools.context_fetch import ContextFetchTool
from hello_tui.tools.files import GlobTool, LsTool, ReadTool
from hello_tui.tools.grep import GrepTool, find_rg
from hello_tui.tools.writes import ApplyPatchTool
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


UNIFIED = "--- a/{0}\n+++ b/{0}\n@@ -1,3 +1,3 @@\n A=1\n-LLM_API_KEY=guess\n+X=1\n B=2\n"
CODEX = "*** Begin Patch\n*** Update File: {0}\n@@\n A=1\n-LLM_API_KEY=guess\n+X=1\n B=2\n*** End Patch\n"


@pytest.mark.parametrize("form", [UNIFIED, CODEX], ids=["unified", "codex"])
@pytest.mark.parametrize("name", [".env", "notes.txt"])
async def test_a_patch_that_does_not_apply_never_quotes_an_unread_env_file(
    tmp_path: Path, form: str, name: str
):
    # Why a patch does not apply shows the closest lines of the file: for an env file the
    # model was never let read, that would be its keys, with nobody asked.
    repo = _git_repo(tmp_path)
    write(repo / ".env", "A=1\nLLM_API_KEY=sk-repo-secret-123\nB=2\n")
    if name != ".env":
        (repo / name).symlink_to(".env")
    ctx = make_ctx(repo)
    tool = ApplyPatchTool()
    result = await tool.run(tool.Args.model_validate({"patch": form.format(name)}), ctx)
    assert result.status == "error"
    assert "sk-repo" not in result.text and "sk-repo" not in str(result.data)
    assert name in result.text and "Read it first" in result.text


async def test_a_patch_to_an_env_file_that_was_read_says_why_it_does_not_apply(tmp_path: Path):
    repo = _git_repo(tmp_path)
    write(repo / ".env", "A=1\nLLM_API_KEY=sk-repo-secret-123\nB=2\n")
    write(repo / "a.txt", "A=1\nB=2\nC=3\n")
    ctx = make_ctx(repo)
    ctx.allowed_commands.add("read .env")
    read = await ReadTool().run(ReadTool.Args.model_validate({"path": ".env"}), ctx)
    assert "sk-repo-secret-123" in read.text
    tool = ApplyPatchTool()
    result = await tool.run(tool.Args.model_validate({"patch": UNIFIED.format(".env")}), ctx)
    assert "Closest region" in result.text  # the user let it be read: the usual help
    plain = await tool.run(tool.Args.model_validate({"patch": UNIFIED.format("a.txt")}), ctx)
    assert "Closest region" in plain.text


@needs_rg
@pytest.mark.parametrize("force_python", [False, True], ids=["rg", "python"])
async def test_a_link_to_an_env_folder_searched_by_name_is_searched_as_one(
    tmp_path: Path, force_python: bool
):
    # `read cfg/keys` asks (the link leads into an env folder); a search of `cfg` must
    # not read the same file unasked.
    repo = _git_repo(tmp_path)
    write(repo / "prod.env.d" / "keys", "API_KEY=sk-folder-secret\n")
    write(repo / "envs" / ".envs" / ".production" / "django", "API_KEY=sk-cookie-secret\n")
    (repo / "cfg").symlink_to("prod.env.d")
    (repo / "cc").symlink_to("envs/.envs")
    ctx = make_ctx(repo)
    for path in ("cfg", "cc/.production"):
        grep = GrepTool(force_python=force_python)
        found = await grep.run(grep.Args.model_validate({"pattern": "sk-", "path": path}), ctx)
        assert "secret" not in found.text and found.data["total_matches"] == 0
        fetch = ContextFetchTool(force_python=force_python)
        args = {"query": "sk-", "sources": ["files"], "paths": [path]}
        fetched = await fetch.run(fetch.Args.model_validate(args), ctx)
        assert "secret" not in fetched.text


async def test_a_glob_of_many_stars_on_a_long_name_answers_at_once(tmp_path: Path):
    # With `re` this pattern backtracks for hours on a 60-letter name: the tool's thread
    # (which a cancelled turn cannot stop) would spin for good.
    repo = _git_repo(tmp_path)
    write(repo / ("a" * 200), "x\n")
    tool = GlobTool()
    args = tool.Args.model_validate({"pattern": "*a" * 12 + "*b"})
    result = await asyncio.wait_for(tool.run(args, make_ctx(repo)), 10)
    assert result.status == "success" and result.data["matches"] == []


async def test_a_gitignore_of_many_stars_does_not_hang_the_walks(tmp_path: Path):
    # pathspec compiles patterns with `re`: this line against a 60-letter name backtracks
    # for hours, in every walk the tools make. The repository writes both.
    repo = _git_repo(tmp_path)
    write(repo / ".gitignore", "*a" * 12 + "*b\n")
    write(repo / ("a" * 60), "hello\n")
    ctx = make_ctx(repo)
    for tool, args in (
        (LsTool(), {"path": "."}),
        (GlobTool(), {"pattern": "**"}),
        (GrepTool(force_python=True), {"pattern": "hello"}),
    ):
        result = await asyncio.wait_for(tool.run(tool.Args.model_validate(args), ctx), 10)
        assert "a" * 60 in result.text
