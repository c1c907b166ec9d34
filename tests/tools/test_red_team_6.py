"""Reads of an env file the policy let run unasked, each judged and then proven with the
real program in a copy of the world: gawk's SYMTAB, which reaches ARGV by name, and
`git diff A B`, which compares files on disk as `--no-index` does without being told to
when a path lies outside the work tree, or when git finds no repository: a folder git
does not track, or a `.git` it rejects (no HEAD, a HEAD or format version it does not
know), as an archive may bring. Only git can tell the last, so two paths on disk are
judged as folders on disk whatever the layout."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.tools.helpers import policy_world, run_in_copy, verdict_in

RUN, ASK, REFUSE = "run", "ask", "refuse"
KEY = "sk-repo-key"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    world = policy_world(tmp_path_factory.mktemp("findings6"))
    return world | {"repo": world["repo"].resolve()}


CONTROLS = [
    "cat a.txt",
    "grep -n hello a.txt",
    "ls | sort",
    "git status",
    "git log",
    "git diff",
    "git diff a.txt /dev/null",
    "git diff --no-index /dev/null a.txt",
    'git diff "$TMPDIR" src',
    "awk '{print $1}' a.txt",
    'awk \'BEGIN{x = "SYM" "TAB"} {print}\' a.txt',
]


@pytest.mark.parametrize("command", CONTROLS)
def test_controls_still_run(world, command):
    assert verdict_in(world, command).action == RUN


# ------------------------------------------------------------------ gawk's SYMTAB

SYMTAB_ROWS = [
    'awk \'BEGIN{SYMTAB["ARGV"][1] = ".env"} {print}\' a.txt',
    'gawk \'BEGIN{n = "ARGV"; SYMTAB[n][1] = ".env"} {print}\' a.txt',
    'awk \'BEGIN{SYMTAB["ARGC"] = 2; SYMTAB["ARGV"][1] = ".env"} {print}\'',
    'awk \'function f(t) { t["ARGV"][1] = ".env" } BEGIN{f(SYMTAB)} {print}\' a.txt',
    'awk \'BEGIN{awk::SYMTAB["ARGV"][1] = ".env"} {print}\' a.txt',
]


@pytest.mark.parametrize("command", SYMTAB_ROWS)
def test_gawks_symtab_asks(world, command):
    verdict = verdict_in(world, command)
    assert verdict.action == ASK, verdict


@pytest.mark.skipif(not shutil.which("gawk"), reason="needs gawk")
def test_gawk_reads_the_file_symtab_puts_in_argv(world, tmp_path):
    shown = run_in_copy(world, tmp_path, "gawk " + SYMTAB_ROWS[0].removeprefix("awk "))
    assert KEY in shown


# ------------------------------------------------------------ git diff outside the tree

OUTSIDE_ROWS = [
    'git diff "$TMPDIR" .',
    "git diff $HOME .",
    'git diff . "$TMPDIR"',
    'git diff --stat "$TMPDIR" .',
    'git --no-pager diff "$TMPDIR" .',
]


@pytest.mark.parametrize("command", OUTSIDE_ROWS)
def test_git_diff_of_a_folder_outside_the_work_tree_asks(world, command):
    verdict = verdict_in(world, command)
    assert verdict.action == ASK, verdict
    assert ".env" in verdict.reason


def test_git_compares_the_whole_tree_with_a_folder_outside_it(world, tmp_path):
    shown = run_in_copy(world, tmp_path, 'git diff "$TMPDIR" .')
    assert KEY in shown


LAYOUTS = {
    "no .git": lambda git: shutil.rmtree(git),
    ".git without HEAD": lambda git: (git / "HEAD").unlink(),
    "a HEAD git rejects": lambda git: (git / "HEAD").write_text("garbage\n"),
    "a format version git does not know": lambda git: subprocess.run(
        ["git", "config", "--file", str(git / "config"), "core.repositoryformatversion", "99"],
        check=True,
    ),
}


@pytest.fixture(params=sorted(LAYOUTS))
def untracked_world(request, tmp_path) -> dict[str, Path]:
    world = policy_world(tmp_path)
    LAYOUTS[request.param](world["repo"] / ".git")
    return world | {"repo": world["repo"].resolve()}


NO_REPOSITORY_ROWS = ["git diff src .", "git diff . src", "git diff --stat a.txt ."]


@pytest.mark.parametrize("command", NO_REPOSITORY_ROWS)
def test_git_diff_where_git_finds_no_repository_asks(untracked_world, command):
    verdict = verdict_in(untracked_world, command)
    assert verdict.action == ASK, verdict
    assert ".env" in verdict.reason


def test_git_diff_without_a_repository_still_runs_for_plain_files(untracked_world):
    assert verdict_in(untracked_world, "git diff a.txt src/main.py").action == RUN


def test_git_diff_of_two_folders_asks_in_a_repository_too(world):
    assert verdict_in(world, "git diff src .").action == ASK


def test_git_diff_without_a_repository_compares_the_folders(untracked_world, tmp_path):
    ceiling = {"GIT_CEILING_DIRECTORIES": str(untracked_world["repo"].parent)}
    done = subprocess.run(
        ["git", "diff", "src", "."],
        cwd=untracked_world["repo"],
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)} | ceiling,
        capture_output=True,
        text=True,
        check=False,
    )
    assert KEY in done.stdout, done.stderr
