"""Submodules through the real terminal tool: git entering a nested repository runs
nothing that repository's config names unless the user agreed.

A gitlink `sub/` holds its own repository whose config defines a clean filter
that `sub/.gitattributes` applies to every file. `git status` and `git diff`
in the top repo would run git inside `sub/`, and with it the filter (seen by
its marker and a canary it touches). The approver declines everything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from hello_tui.tools.shell.environment import command_environment, read_only_git_environment
from tests.tools.test_git_drivers import MARK, driver, git, output, terminal

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def top_with_gitlink(root: Path, canary: Path, gitmodules: str = "") -> Path:
    """A repo with `a.txt` and the gitlink `sub/`, whose own config names a filter."""
    repo = root / "repo"
    sub = repo / "sub"
    sub.mkdir(parents=True)
    git(repo, "init", "-q", ".")
    (repo / "a.txt").write_text("hello\n")
    git(sub, "init", "-q", ".")
    (sub / "f.txt").write_text("data\n")
    (sub / ".gitattributes").write_text("* filter=evil\n")
    git(sub, "add", ".")
    git(sub, "commit", "-qm", "sub")
    with (sub / ".git" / "config").open("a") as handle:
        handle.write(f'[filter "evil"]\n\tclean = {driver(canary)}\n')
    if gitmodules:
        (repo / ".gitmodules").write_text(gitmodules)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "top")
    time.sleep(1.1)  # same bytes, a newer mtime: git re-hashes the file through the filter
    os.utime(sub / "f.txt")
    return repo.resolve()


# `ignore = none` in a committed .gitmodules overrides diff.ignoreSubmodules=all.
IGNORE_NONE = '[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n\tignore = none\n'


@pytest.mark.parametrize("gitmodules", ["", IGNORE_NONE], ids=["gitlink", "ignore-none"])
@pytest.mark.parametrize(
    "command",
    ["git status", "git status --short", "git diff", "git diff --submodule=diff", "git show"],
)
async def test_a_submodules_own_filter_never_runs_unasked(tmp_path, gitmodules, command):
    canary = tmp_path / "canary"
    repo = top_with_gitlink(tmp_path, canary, gitmodules)
    result, approver = await terminal(repo, command)
    assert MARK not in output(result)
    assert not canary.exists()
    assert approver.asked, f"{command} ran without asking"
    assert "submodule sub's git config sets filter.evil.clean" in approver.asked[0][1]


def test_read_only_git_does_not_enter_submodules(tmp_path):
    """The environment alone keeps `git status` out of an unconfigured gitlink."""
    canary = tmp_path / "canary"
    repo = top_with_gitlink(tmp_path, canary)
    private = tmp_path / "private"
    private.mkdir()
    env = read_only_git_environment(command_environment(os.environ, repo, private))
    for command in (["status"], ["diff"], ["status", "--porcelain"]):
        done = subprocess.run(
            ["git", *command], cwd=repo, env=env, capture_output=True, text=True, check=True
        )
        assert MARK not in done.stdout + done.stderr
    assert not canary.exists()


def repo_with_submodule(root: Path) -> Path:
    """A repo with a real (absorbed) submodule `lib/`, as `git submodule add` makes it."""
    upstream = root / "upstream"
    upstream.mkdir(parents=True)
    git(upstream, "init", "-q", ".")
    (upstream / "u.txt").write_text("u\n")
    git(upstream, "add", ".")
    git(upstream, "commit", "-qm", "u")
    repo = root / "repo"
    repo.mkdir()
    git(repo, "init", "-q", ".")
    (repo / "a.txt").write_text("a\n")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "lib")
    git(repo, "commit", "-qm", "top")
    (repo / "a.txt").write_text("a\nb\n")
    (repo / "lib" / "u.txt").write_text("changed\n")
    return repo.resolve()


@pytest.mark.parametrize(
    "command", ["git status", "git diff", "git log -p", "git show", "git log --oneline"]
)
async def test_read_only_git_in_a_repo_with_a_submodule_runs_unasked(tmp_path, command):
    repo = repo_with_submodule(tmp_path)
    result, approver = await terminal(repo, command)
    assert approver.asked == []
    assert result.data["exit_code"] == 0, output(result)


@pytest.mark.parametrize(
    "command",
    [
        "git status --ignore-submodules=none",
        "git diff --ignore-submodules=dirty",
        "git diff --submodule=diff",
        "git diff --submodule",
        "git show --submod=log",
        "git grep --recurse-submodules u",
        "git ls-files --recurse-sub",
    ],
)
async def test_options_that_enter_submodules_ask(tmp_path, command):
    repo = repo_with_submodule(tmp_path)
    _, approver = await terminal(repo, command)
    assert approver.asked, f"{command} ran without asking"
    assert "submodule" in approver.asked[0][1]


async def test_ignoring_all_submodules_still_runs(tmp_path):
    repo = repo_with_submodule(tmp_path)
    result, approver = await terminal(repo, "git status --ignore-submodules=all")
    assert approver.asked == []
    assert result.data["exit_code"] == 0, output(result)
