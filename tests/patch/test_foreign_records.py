"""Backup records a repository brought with it are never restored from.

A cloned repository can commit a state folder of its own: its records, if trusted, would
make `undo` (or the recovery every patch command starts with) write what their author
chose. Built here with real git and the real CLI: the author applies a patch, commits the
state folder with `git add -f`, and the clone refuses to act on those records.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.patch.test_cli import cli

GIT = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t", "-c", "init.defaultBranch=m"]
PATCH = "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-before\n+after\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True)


def tree(repo: Path) -> dict[str, bytes]:
    return {
        p.relative_to(repo).as_posix(): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(repo).parts
    }


def cloned_with_records(tmp_path: Path) -> Path:
    author = tmp_path / "author"
    author.mkdir()
    git(author, "init", "-q")
    (author / "f.txt").write_text("before\n")
    git(author, "add", ".")
    git(author, "commit", "-qm", "one")
    (tmp_path / "p.diff").write_text(PATCH)
    assert cli(author, "apply", "--yes", str(tmp_path / "p.diff")).returncode == 0
    # The author's records say "before" was the content: an undo in a clone would write
    # it. Any content could stand there.
    git(author, "add", "-f", ".helloagents", "f.txt")
    git(author, "commit", "-qm", "state")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(author), str(clone)], check=True)
    return clone


def test_undo_and_apply_refuse_records_that_came_with_the_clone(tmp_path):
    clone = cloned_with_records(tmp_path)
    before = tree(clone)
    undo = cli(clone, "undo", "--json")
    assert undo.returncode == 1, undo.stdout + undo.stderr
    assert "came with the repository" in json.loads(undo.stdout)["error"]
    assert tree(clone) == before  # nothing written, no record added
    other = tmp_path / "other.diff"
    other.write_text("--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-after\n+later\n")
    apply = cli(clone, "apply", "--yes", str(other))
    assert apply.returncode == 1 and "came with the repository" in apply.stderr
    assert tree(clone) == before


def test_once_the_records_are_gone_from_the_repository_patches_apply(tmp_path):
    clone = cloned_with_records(tmp_path)
    git(clone, "rm", "-rq", ".helloagents")
    git(clone, "commit", "-qm", "no state")
    other = tmp_path / "other.diff"
    other.write_text("--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-after\n+later\n")
    apply = cli(clone, "apply", "--yes", str(other))
    assert apply.returncode == 0, apply.stderr
    assert (clone / "f.txt").read_text() == "later\n"
    undo = cli(clone, "undo")
    assert undo.returncode == 0, undo.stderr
    assert (clone / "f.txt").read_text() == "after\n"  # its own record, not the author's
