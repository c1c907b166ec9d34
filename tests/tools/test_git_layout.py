"""One rule for "is this a repository, and whose", checked against git itself.

Each layout is built in a real repository; git (with the environment
commands get: no repository above the repo) says which git directory it
would use from the folder, and `foreign_repository` must agree: a folder
whose repository is not the repo's own `.git` is foreign. Where git fails
outright, or where the rule is deliberately stricter than git, the row says so.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from hello_tui.core.env_names import env_file_names, is_env_file
from hello_tui.core.git_layout import (
    config_files,
    foreign_repository,
    is_git_control_path,
)
from hello_tui.tools.env_files import reaches_env_file
from hello_tui.tools.paths import hidden_area, is_protected


def git(*args: str, cwd: Path, ceiling: Path | None = None) -> subprocess.CompletedProcess:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
    }
    if ceiling is not None:
        env["GIT_CEILING_DIRECTORIES"] = str(ceiling)
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def commondir_layout(repo: Path, target: str = "../y") -> Path:
    """`x/` with HEAD and commondir, `y/` with objects/, refs/ and config: a repository."""
    (repo / "x").mkdir()
    (repo / "x" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "x" / "commondir").write_text(target + "\n")
    for folder in ("objects", "refs"):
        (repo / "y" / folder).mkdir(parents=True)
    (repo / "y" / "config").write_text("[core]\n\trepositoryformatversion = 0\n")
    return repo / "x"


def plain(repo: Path) -> Path:
    (repo / "src").mkdir()
    return repo / "src"


def dotgit_folder(repo: Path) -> Path:
    git("init", "-q", "vendor", cwd=repo)
    return repo / "vendor"


def gitfile(repo: Path) -> Path:
    git("init", "-q", "--bare", "store.d", cwd=repo)
    (repo / "sub").mkdir()
    (repo / "sub" / ".git").write_text("gitdir: ../store.d\n")
    return repo / "sub"


def bare(repo: Path) -> Path:
    git("init", "-q", "--bare", "fixture", cwd=repo)
    return repo / "fixture"


def commondir_relative(repo: Path) -> Path:
    return commondir_layout(repo)


def commondir_absolute(repo: Path) -> Path:
    return commondir_layout(repo, str(repo / "y"))


def commondir_deep(repo: Path) -> Path:
    x = commondir_layout(repo)
    (x / "deeper" / "still").mkdir(parents=True)
    return x / "deeper" / "still"


def head_only(repo: Path) -> Path:
    (repo / "docs").mkdir()
    (repo / "docs" / "HEAD").write_text("ref: refs/heads/main\n")
    return repo / "docs"


def head_and_objects(repo: Path) -> Path:
    folder = head_only(repo)
    (folder / "objects").mkdir()
    return folder


def linked_worktree(repo: Path) -> Path:
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x",
        cwd=repo)  # fmt: skip
    git("worktree", "add", "-q", "wt", cwd=repo)
    return repo / "wt"


def empty_dotgit(repo: Path) -> Path:
    (repo / "pkg" / ".git").mkdir(parents=True)
    return repo / "pkg"


OWN, FOREIGN, STRICTER = "own", "foreign", "stricter"  # stricter: git goes on up, we stop
LAYOUTS: list[tuple[Callable[[Path], Path], str]] = [
    (plain, OWN),
    (dotgit_folder, FOREIGN),
    (gitfile, FOREIGN),
    (bare, FOREIGN),
    (commondir_relative, FOREIGN),
    (commondir_absolute, FOREIGN),
    (commondir_deep, FOREIGN),
    (head_only, OWN),
    (head_and_objects, OWN),
    (linked_worktree, FOREIGN),
    (empty_dotgit, STRICTER),
]


@pytest.mark.parametrize(("build", "expected"), LAYOUTS, ids=[b.__name__ for b, _ in LAYOUTS])
def test_the_layout_rule_agrees_with_git(tmp_path, build, expected):
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", ".", cwd=repo)
    repo = repo.resolve()
    folder = build(repo)
    seen = git("rev-parse", "--absolute-git-dir", cwd=folder, ceiling=repo.parent)
    gits_own = seen.returncode == 0 and Path(seen.stdout.strip()) == repo / ".git"
    ours = foreign_repository(folder, repo)
    if expected == OWN:
        assert gits_own and ours is None
    elif expected == FOREIGN:
        assert not gits_own and ours is not None
    else:
        assert gits_own and ours is not None


def test_the_repos_own_folders_and_outside(tmp_path):
    repo = tmp_path / "repo"
    (repo / "a" / "b").mkdir(parents=True)
    git("init", "-q", ".", cwd=repo)
    assert foreign_repository(repo, repo) is None
    assert foreign_repository(repo / "a" / "b", repo) is None
    assert foreign_repository(tmp_path, repo) == tmp_path.resolve()


def test_a_linked_worktree_reads_the_common_config(tmp_path):
    main = tmp_path / "main"
    main.mkdir()
    git("init", "-q", ".", cwd=main)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x",
        cwd=main)  # fmt: skip
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=main)
    files = config_files(tmp_path / "wt")
    assert (main / ".git" / "config").resolve() in [f.resolve() for f in files]


@pytest.mark.parametrize(
    ("rel", "control"),
    [
        (".git/config", True),
        ("vendor/.git/hooks/x", True),
        ("a/.GIT/x", True),
        ("a/.git./x", True),
        ("a/.git /x", True),
        ("GIT~1/config", True),
        ("git~1./config", True),
        ("a/.git:stream/x", True),
        ("a/.g\u200dit/config", True),
        ("a/.g\u200bit/config", False),  # not ignored by HFS+: another name
        ("src/.gitignore", False),
        ("src/.git-notes", False),
        ("src/git/config", False),
    ],
)
def test_one_dotgit_rule_for_every_tool(rel, control):
    assert is_git_control_path(rel) is control
    assert is_protected(rel, ".helloagents") is control
    assert (hidden_area(rel, ".helloagents") is not None) is control


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        (".env", True),
        (".env.local", True),
        (".envrc", True),
        ("config/prod.env", True),
        # A case-insensitive file system opens `.env` for `.ENV`.
        (".ENV", True),
        (".Env.Local", True),
        ("config/PROD.ENV", True),
        ("environment.py", False),
        (".envoy", False),
        ("env", False),
        # Copies beside it hold the same keys: backups, autosaves, swap files, spellings.
        (".env~", True),
        ("#.env#", True),
        ("..env.swp", True),
        ("config/prod.env.bak", True),
        ("prod.env~", True),
        (".env-local", True),
        (".env_production", True),
        ("my.environment.txt", False),
        ("x.envy", False),
    ],
)
def test_one_env_file_rule(name, secret):
    assert is_env_file(name) is secret


def test_env_file_names_is_the_same_rule_over_many_names():
    names = [
        ".env",
        ".env.local",
        ".envrc",
        "prod.env",
        "a.env.env",
        "environment.py",
        ".envoy",
        "env",
        ".env\nx",
        "x\n.env",
        "a\nb.env",
        "x.envy",
        ".env.",
        ".ENV",
        "Prod.Env",
        "ENVIRONMENT.PY",
        ".env~",
        "#.env#",
        "..env.swp",
    ]
    assert env_file_names(names) == {n for n in names if is_env_file(n)}
    visible = {n for n in names if is_env_file(n) and not n.startswith(".")}
    assert env_file_names(names, hidden=False) == visible  # as rg walks: no dotfiles
    clean = [n for n in names if "\n" not in n]  # the one-pass path, not the fallback
    assert env_file_names(clean, hidden=False) == visible - {"a\nb.env"}


def test_a_link_to_an_env_file_reaches_it(tmp_path):
    (tmp_path / ".env").write_text("KEY=1\n")
    (tmp_path / "notes.txt").symlink_to(".env")
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "prod.env").write_text("KEY=2\n")
    (tmp_path / "kept" / "plain").symlink_to("prod.env")
    (tmp_path / "shelf").symlink_to("kept")
    (tmp_path / "a.txt").write_text("x\n")
    (tmp_path / "to-a").symlink_to("a.txt")
    assert reaches_env_file(tmp_path / "notes.txt")
    assert reaches_env_file(tmp_path / "shelf" / "plain")  # a linked folder, then a link
    assert reaches_env_file(tmp_path / ".env") and reaches_env_file(tmp_path / "missing.env")
    assert not reaches_env_file(tmp_path / "to-a") and not reaches_env_file(tmp_path / "a.txt")
