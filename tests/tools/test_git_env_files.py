"""Env files through read-only git in the real terminal tool: a command whose output could
hold one asks, unless its own pathspecs leave the env files out.

`cat .env` and `git diff -- .env` name the file; `git diff`, `git show`,
`git log -p` and `git grep` print tracked files without naming them, and
`git grep --no-index` / `--untracked` walk the tree. The approver declines
everything, so a command that printed the key ran unasked.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.tools.test_git_drivers import git, output, terminal

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
TEMPLATE = "API_KEY=replace-me"
REAL = "API_KEY=real-user-key-8888"


def plain_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", ".")
    (root / "a.txt").write_text("one API_KEY mention\n")
    (root / "src").mkdir()
    (root / "src" / "m.py").write_text("x = 1\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "one")
    (root / "a.txt").write_text("one API_KEY mention\ntwo\n")
    git(root, "commit", "-qam", "two")
    (root / "a.txt").write_text("one API_KEY mention\ntwo\nthree\n")
    return root.resolve()


async def asks_hiding_the_env_file(repo: Path, command: str) -> None:
    result, approver = await terminal(repo, command)
    assert approver.asked, f"{command} ran without asking"
    assert REAL not in output(result) and "replace-me" not in output(result)


def tracked_env_repo(root: Path, name: str = ".env") -> Path:
    """A committed env template, with the user's real key in the work tree only."""
    repo = plain_repo(root)
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(TEMPLATE + "\n")
    git(repo, "add", name)
    git(repo, "commit", "-qm", "template")
    (repo / name).write_text(REAL + "\n")
    return repo


@pytest.mark.parametrize("name", [".env", "config/prod.env"])
@pytest.mark.parametrize(
    "command",
    [
        "git diff",
        "git diff HEAD",
        "git show",
        "git show HEAD",
        "git show ':/template'",
        "git log -p",
        "git log --patch -1",
        "git log -S API_KEY --oneline",
        "git grep API_KEY",
        "git grep -c API_KEY",
        "git diff | cat",
        "git diff -- ':(exclude)a.txt'",
    ],
)
async def test_git_that_may_show_a_tracked_env_file_asks(tmp_path, name, command):
    repo = tracked_env_repo(tmp_path / "repo", name)
    result, approver = await terminal(repo, command)
    assert REAL not in output(result) and "replace-me" not in output(result)
    assert approver.asked, f"{command} ran without asking"
    assert name in approver.asked[0][1]


@pytest.mark.parametrize(
    "command",
    [
        "git diff -- a.txt",
        "git diff src",
        "git grep API_KEY -- a.txt",
        "git grep API_KEY -- ':!.env'",
        "git grep API_KEY -- ':(exclude,glob)**/.env'",
        "git log -p -- a.txt",
        "git diff --stat",
        "git show --stat",
        "git show HEAD:a.txt",
        "git log --oneline",
        "git status",
    ],
)
async def test_git_that_leaves_the_env_file_out_runs(tmp_path, command):
    repo = tracked_env_repo(tmp_path / "repo")
    result, approver = await terminal(repo, command)
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 0, output(result)
    assert REAL not in output(result) and "replace-me" not in output(result)


@pytest.mark.parametrize(
    "command",
    [
        "git grep --no-index API_KEY",
        "git grep --untracked --no-exclude-standard API_KEY",
        "git grep --no-ind API_KEY",
        "git grep --untr --no-exclude-st API_KEY",
    ],
)
@pytest.mark.parametrize("name", [".env", "config.env"])
async def test_git_grep_over_the_tree_asks_for_an_untracked_env_file(tmp_path, command, name):
    repo = plain_repo(tmp_path / "repo")
    (repo / ".gitignore").write_text(".env\n")
    (repo / name).write_text(REAL + "\n")
    result, approver = await terminal(repo, command)
    assert REAL not in output(result)
    assert approver.asked, f"{command} ran without asking"


async def test_git_grep_untracked_asks_for_an_env_file_not_ignored(tmp_path):
    repo = plain_repo(tmp_path / "repo")
    (repo / "config.env").write_text(REAL + "\n")
    result, approver = await terminal(repo, "git grep --untracked API_KEY")
    assert REAL not in output(result)
    assert approver.asked and "config.env" in approver.asked[0][1]


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git log",
        "git diff",
        "git log -p",
        "git show",
        "git grep API_KEY",
        "git grep --no-index API_KEY",
        "cat a.txt",
        "ls | sort",
    ],
)
async def test_a_repo_without_env_files_keeps_its_read_only_commands_unasked(tmp_path, command):
    repo = plain_repo(tmp_path / "repo")
    result, approver = await terminal(repo, command)
    assert approver.asked == []
    assert result.data["exit_code"] == 0, output(result)


def removed_env_repo(root: Path, how: str) -> Path:
    """The user's real key committed once, then taken out: `rm` deletes it in a commit,
    `untrack` only drops it from the index (the file stays, ignored), `branch` keeps it
    on another branch, `reset` leaves it in the reflog only."""
    repo = plain_repo(root)
    (repo / ".env").write_text(REAL + "\n")
    git(repo, "add", ".env", "a.txt")
    git(repo, "commit", "-qm", "with the key")
    if how == "rm":
        git(repo, "rm", "-q", ".env")
        git(repo, "commit", "-qm", "drop the key")
    elif how == "untrack":
        git(repo, "rm", "-q", "--cached", ".env")
        (repo / ".gitignore").write_text(".env\n")
        git(repo, "add", ".gitignore")
        git(repo, "commit", "-qm", "stop tracking the key")
    elif how == "branch":
        git(repo, "branch", "keyed")
        git(repo, "reset", "-q", "--hard", "HEAD~1")
        git(repo, "reflog", "expire", "--expire=now", "--all")
    elif how == "reset":
        git(repo, "reset", "-q", "--hard", "HEAD~1")
    return repo


@pytest.mark.parametrize("how", ["rm", "untrack", "branch", "reset"])
@pytest.mark.parametrize(
    "command",
    [
        "git log -p",
        "git log -p --all",
        "git log -p -g",
        "git show HEAD@{1}",
        "git show keyed",
        "git diff HEAD~1 HEAD",
        "git diff HEAD@{1}",
        "git grep API_KEY HEAD@{1}",
        "git log -S real-user-key --oneline -p",
    ],
)
async def test_git_that_may_show_an_env_file_from_the_history_asks(tmp_path, how, command):
    repo = removed_env_repo(tmp_path / "repo", how)
    if "keyed" in command and how != "branch":
        git(repo, "branch", "keyed", "HEAD@{1}")
    result, approver = await terminal(repo, command)
    assert REAL not in output(result), f"{command} printed the key"
    assert approver.asked, f"{command} ran without asking"
    assert ".env" in approver.asked[0][1] and "history" in approver.asked[0][1]


@pytest.mark.parametrize(
    "command",
    [
        "git log -p -- a.txt",
        "git log -p -- . ':!.env'",
        "git log --stat",
        "git show --stat HEAD~1",
        "git diff",
        "git grep API_KEY",
        "git log --oneline",
        "git status",
        "cat a.txt",
        "ls | sort",
    ],
)
async def test_commands_that_leave_a_removed_env_file_out_run(tmp_path, command):
    repo = removed_env_repo(tmp_path / "repo", "rm")
    result, approver = await terminal(repo, command)
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 0, output(result)
    assert REAL not in output(result)


async def test_an_env_file_in_capitals_in_the_history_counts(tmp_path):
    repo = plain_repo(tmp_path / "repo")
    (repo / "deploy").mkdir()
    (repo / "deploy" / "PROD.ENV").write_text(REAL + "\n")
    git(repo, "add", "deploy")
    git(repo, "commit", "-qm", "key")
    git(repo, "rm", "-q", "-r", "deploy")
    git(repo, "commit", "-qm", "no key")
    result, approver = await terminal(repo, "git log -p")
    assert REAL not in output(result)
    assert approver.asked and "PROD.ENV" in approver.asked[0][1]


async def test_the_history_is_walked_again_when_a_commit_brings_an_env_file(tmp_path):
    repo = plain_repo(tmp_path / "repo")
    result, approver = await terminal(repo, "git log -p")
    assert approver.asked == [] and result.data["exit_code"] == 0
    removed = removed_env_repo(tmp_path / "other", "rm")
    # The same repo, after a commit that added and one that removed the key.
    git(repo, "fetch", "-q", str(removed), "HEAD")
    git(repo, "reset", "-q", "--hard", "FETCH_HEAD")
    result, approver = await terminal(repo, "git log -p")
    assert REAL not in output(result)
    assert approver.asked and "history" in approver.asked[0][1]


async def test_a_history_too_long_to_walk_asks(tmp_path, monkeypatch):
    from hello_tui.tools.shell import git_history

    repo = removed_env_repo(tmp_path / "repo", "rm")
    monkeypatch.setattr(git_history, "_WALK_SECONDS", 0.0)
    result, approver = await terminal(repo, "git log -p")
    assert REAL not in output(result)
    assert approver.asked and "too long" in approver.asked[0][1]
    result, approver = await terminal(repo, "git log --oneline")
    assert approver.asked == [] and result.data["exit_code"] == 0  # shows no contents


async def test_an_env_file_added_while_resolving_a_merge_counts(tmp_path):
    """A merge's own change is in neither parent: the walk lists merges' files too."""
    repo = plain_repo(tmp_path / "repo")
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-qm", "side")
    git(repo, "checkout", "-q", "-")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side")
    (repo / ".env").write_text(REAL + "\n")
    git(repo, "add", ".env")
    git(repo, "commit", "-qm", "merge")
    git(repo, "rm", "-q", ".env")
    git(repo, "commit", "-qm", "drop the key")
    result, approver = await terminal(repo, "git show HEAD~1")
    assert REAL not in output(result)
    assert approver.asked and "history" in approver.asked[0][1]


@pytest.mark.parametrize("command", ["git stash show -p", "git stash show", "git stash list -p"])
async def test_a_stash_that_holds_an_untracked_env_file_asks(tmp_path, command):
    repo = plain_repo(tmp_path / "repo")
    (repo / ".env").write_text(REAL + "\n")
    git(repo, "stash", "-q", "-u")
    git(repo, "config", "stash.showIncludeUntracked", "true")
    git(repo, "config", "stash.showPatch", "true")
    assert REAL in git(repo, "stash", "show", "-p")  # git itself prints the key
    result, approver = await terminal(repo, command)
    assert REAL not in output(result)
    assert approver.asked and ".env" in approver.asked[0][1]


async def test_a_merged_branch_that_added_and_removed_an_env_file_counts(tmp_path):
    """The merge equals the main line for `.env`: git log's history simplification would
    skip the branch; the walk must not."""
    repo = plain_repo(tmp_path / "repo")
    git(repo, "commit", "-qam", "three")
    git(repo, "checkout", "-q", "-b", "side")
    (repo / ".env").write_text(REAL + "\n")
    git(repo, "add", ".env")
    git(repo, "commit", "-qm", "key")
    git(repo, "rm", "-q", ".env")
    git(repo, "commit", "-qm", "no key")
    git(repo, "checkout", "-q", "-")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge", "side")
    git(repo, "branch", "-D", "side")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    result, approver = await terminal(repo, "git log -p")
    assert REAL not in output(result)
    assert approver.asked and "history" in approver.asked[0][1]


def test_the_history_walk_never_fetches_what_a_partial_clone_lacks(tmp_path):
    """A partial clone without trees (`--filter=tree:0`) fetches them lazily, through its
    remote, whose URL the repository's config names: an `ext::` URL is a command. The
    policy's own walk must fail instead of running it."""
    from hello_tui.tools.shell.git_history import env_files_in_history

    origin = removed_env_repo(tmp_path / "origin", "rm")
    git(origin, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    git(
        tmp_path,
        "clone",
        "-q",
        "--no-local",
        "--filter=tree:0",
        "--no-checkout",
        f"file://{origin}",
        str(clone),
    )
    canary = tmp_path / "canary"
    script = tmp_path / "fetch.sh"
    script.write_text(f"#!/bin/sh\ntouch {canary}\nexit 1\n")
    script.chmod(0o755)
    git(clone, "config", "remote.origin.url", f"ext::{script}")
    git(clone, "config", "protocol.ext.allow", "always")
    git(clone, "config", "core.sshCommand", str(script))
    try:
        env_files_in_history(clone)
    except (OSError, ValueError, subprocess.SubprocessError):
        pass  # history that can't be read: the command asks
    assert not canary.exists()


def staged_once_repo(root: Path) -> tuple[Path, str]:
    """The key staged by a `git add -A` and unstaged by `git reset`, the file then deleted:
    no commit, ref or reflog holds it, but its blob stays in `.git/objects`, whose file
    names (`find .git/objects`) are the object ids. Returns the repo and the blob's id."""
    repo = plain_repo(root)
    (repo / ".env").write_text(REAL + "\n")
    git(repo, "add", "-A")
    git(repo, "reset", "-q")
    blob = git(repo, "hash-object", ".env").strip()
    (repo / ".env").unlink()
    return repo, blob


@pytest.mark.parametrize(
    "command",
    [
        "git show {id}",
        "git show {short} | cat",
        "git log -p {id}",
        "git diff {id} HEAD:a.txt",
        "git grep API_KEY {id}",
        "cat .git/objects/{path}",
        "head -c 100 < .git/objects/{path}",
        "grep -ra real .git",
        "grep -r --text real .",
        "rg --hidden -a real",
    ],
)
async def test_an_env_file_left_only_in_gits_objects_is_not_read_unasked(tmp_path, command):
    repo, blob = staged_once_repo(tmp_path / "repo")
    assert REAL in git(repo, "cat-file", "-p", blob)  # git still has it
    command = command.format(id=blob, short=blob[:8], path=f"{blob[:2]}/{blob[2:]}")
    result, approver = await terminal(repo, command)
    assert approver.asked, f"{command} ran without asking"
    assert "real-user-key" not in output(result)


async def test_a_dropped_stash_is_not_shown_by_its_id(tmp_path):
    repo = plain_repo(tmp_path / "repo")
    (repo / ".env").write_text(REAL + "\n")
    git(repo, "stash", "push", "-q", "--include-untracked")
    untracked = git(repo, "rev-parse", "stash@{0}^3").strip()
    git(repo, "stash", "drop", "-q")
    for command in (f"git show {untracked}", f"git log -p {untracked[:10]}"):
        result, approver = await terminal(repo, command)
        assert approver.asked, f"{command} ran without asking"
        assert REAL not in output(result)


@pytest.mark.parametrize(
    "command",
    ["git show {head}", "git log -p {short}", "git diff {short}~1 {head}", "git show {head}:a.txt"],
)
async def test_commits_a_branch_reaches_are_shown_by_id_unasked(tmp_path, command):
    repo, _ = staged_once_repo(tmp_path / "repo")
    head = git(repo, "rev-parse", "HEAD").strip()
    result, approver = await terminal(repo, command.format(head=head, short=head[:7]))
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 0, output(result)


@pytest.mark.parametrize("command", ["ls .git/objects", "find .git -name HEAD", "grep -r two ."])
async def test_listing_gits_folder_and_plain_recursive_greps_run(tmp_path, command):
    repo, _ = staged_once_repo(tmp_path / "repo")
    result, approver = await terminal(repo, command)
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 0, output(result)


@pytest.mark.parametrize(
    "command",
    [
        "git blame -S.env a.txt",  # "bad graft data: <the first line>"
        "git blame -wS.env a.txt",
        "git diff -O.env",
        "git grep -f.env -- a.txt",
        "git ls-files -oi -X.env",
    ],
)
async def test_a_file_named_in_the_same_word_as_gits_short_option_is_judged(tmp_path, command):
    repo = plain_repo(tmp_path / "repo")
    (repo / ".gitignore").write_text(".env\n")
    (repo / ".env").write_text(REAL + "\n")
    result, approver = await terminal(repo, command)
    assert approver.asked and ".env" in approver.asked[0][1], f"{command} ran without asking"
    assert "real-user-key" not in output(result)


@pytest.mark.parametrize(
    "command", ["git blame -S../secret.txt a.txt", "git log -p -O../secret.txt"]
)
async def test_gits_attached_file_options_stay_in_the_repo(tmp_path, command):
    repo = plain_repo(tmp_path / "repo")
    (tmp_path / "secret.txt").write_text("outside-secret\n")
    result, _ = await terminal(repo, command)
    assert result.data["verdict"] == "refuse"
    assert "outside-secret" not in output(result)


@pytest.mark.parametrize(
    "command", ["git log -Sone --oneline", "git blame -L1,1 a.txt", "git grep -nC1 two"]
)
async def test_gits_short_options_with_values_still_run(tmp_path, command):
    repo = plain_repo(tmp_path / "repo")
    result, approver = await terminal(repo, command)
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 0, output(result)


@pytest.mark.parametrize("value", [".env", "../secret.txt", "notes.txt"])
async def test_a_configured_blame_ignore_revs_file_that_shows_a_secret_asks(tmp_path, value):
    """`git blame` prints each line of blame.ignoreRevsFile that is no object name."""
    repo = plain_repo(tmp_path / "repo")
    (repo / ".env").write_text(REAL + "\n")
    (repo / "notes.txt").symlink_to(".env")
    (tmp_path / "secret.txt").write_text(REAL + "\n")
    with (repo / ".git" / "config").open("a") as handle:
        handle.write(f"[blame]\n\tignoreRevsFile = {value}\n")
    result, approver = await terminal(repo, "git blame a.txt")
    assert approver.asked and "blame.ignorerevsfile" in approver.asked[0][1]
    assert "real-user-key" not in output(result)


@pytest.mark.parametrize(
    ("key", "command"),
    [
        ("mailmap.file", "git log --use-mailmap --format=%aN%aE"),
        ("mailmap.file", "git shortlog -s HEAD"),
        ("core.excludesFile", "git status --ignored --short"),
        ("core.attributesFile", "git check-attr -a a.txt"),
        ("format.signatureFile", "git format-patch -1 --stdout"),  # asks: not read-only
    ],
)
async def test_config_keys_naming_an_env_file_never_print_it(tmp_path, key, command):
    """Of the keys naming a file git reads, only blame.ignoreRevsFile echoes its lines in a
    read-only command; the others ignore lines they can't use, or their command asks."""
    repo = plain_repo(tmp_path / "repo")
    (repo / ".env").write_text(REAL + "\n")
    git(repo, "config", key, ".env")
    result, _ = await terminal(repo, command)
    assert "real-user-key" not in output(result)


async def test_a_blame_ignore_revs_file_of_the_repos_own_runs(tmp_path):
    repo = plain_repo(tmp_path / "repo")
    (repo / ".git-blame-ignore-revs").write_text("# formatting\n")
    git(repo, "config", "blame.ignoreRevsFile", ".git-blame-ignore-revs")
    result, approver = await terminal(repo, "git blame a.txt")
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 0, output(result)


@pytest.mark.parametrize(
    "command",
    [
        "git diff --no-index -a a.txt .git/objects/{path}",
        "git diff --no-index --binary a.txt .git/objects/{path}",  # base85 of the bytes
        "git diff --no-index --binary .git src",
    ],
)
async def test_git_diff_no_index_does_not_print_gits_objects_unasked(tmp_path, command):
    repo, blob = staged_once_repo(tmp_path / "repo")
    result, approver = await terminal(repo, command.format(path=f"{blob[:2]}/{blob[2:]}"))
    assert approver.asked, f"{command} ran without asking"
    assert "GIT binary patch" not in output(result) and "+x\x01" not in output(result)


@pytest.mark.parametrize(
    "command",
    [
        "git status -v",
        "git status --verb",  # abbreviated, as git's option parser allows
        "git status -vv",
        "git status -v -- a.txt",  # the pathspec limits the list, not the diff
        "git status -s --long -v",  # the last format given wins
        "git status --porcelain --long -v",
        "git status --porcelain=v2 --lon -v",
        "git status -sv --long",
        "git status -s --no-short -v",
        "git status -z --no-null -v",
        "git log --binary -1",  # --binary implies --patch
        "git diff HEAD --stat --binary",
        "git show --no-patch --binary HEAD",  # the last of them wins
    ],
)
async def test_options_that_print_the_staged_patch_ask_when_an_env_file_is_staged(
    tmp_path, command
):
    repo = plain_repo(tmp_path / "repo")
    (repo / ".env").write_text(REAL + "\n")
    git(repo, "add", "-f", ".env")
    if "log" in command or "show" in command:
        git(repo, "commit", "-qm", "env")
    result, approver = await terminal(repo, command)
    assert approver.asked, f"{command} ran without asking"
    assert "real-user-key" not in output(result)


@pytest.mark.parametrize(
    "command",
    [
        "git status -sv",
        "git status --porcelain -v",
        "git status -v --no-verbose",
        "git status --long --porcelain=v2 -v",
        "git status --long -s -v",
        "git status -vz",
    ],
)
async def test_status_formats_that_print_no_patch_run_with_an_env_file_staged(tmp_path, command):
    repo = plain_repo(tmp_path / "repo")
    (repo / ".env").write_text(REAL + "\n")
    git(repo, "add", "-f", ".env")
    result, approver = await terminal(repo, command)
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 0 and "real-user-key" not in output(result)


@pytest.mark.parametrize("command", ["git status -v", "git status -vv", "git log --binary -1"])
async def test_verbose_status_and_binary_patches_run_without_env_files(tmp_path, command):
    repo = plain_repo(tmp_path / "repo")
    git(repo, "add", "a.txt")
    result, approver = await terminal(repo, command)
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 0, output(result)
    assert "+two" in output(result) if "log" in command else "+three" in output(result)


TOKEN_URL = "https://ci:ghp_planted0000token@example.org/r.git"


@pytest.mark.parametrize(
    "command",
    [
        "cat .git/config",
        "grep -r ghp_ .",
        "grep -rh url .",
        "git remote -v",
        "git remote get-url origin",
        "git config --get remote.origin.url",
        "git config --list",
    ],
)
async def test_a_token_in_the_repos_git_config_is_not_printed_unasked(tmp_path, command):
    """A clone made with a token keeps it in the remote's URL in `.git/config`."""
    repo = plain_repo(tmp_path / "repo")
    git(repo, "remote", "add", "origin", TOKEN_URL)
    result, approver = await terminal(repo, command)
    assert approver.asked, f"{command} ran without asking"
    assert "ghp_planted" not in output(result)


def repo_with_a_tokened_submodule(tmp_path: Path) -> Path:
    """A real submodule whose remote URL (in `.git/modules/lib/config`) holds a token."""
    plain_repo(tmp_path / "lib")
    repo = plain_repo(tmp_path / "repo")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "../lib", "lib")
    git(repo, "commit", "-qm", "lib")
    git(repo / "lib", "remote", "set-url", "origin", TOKEN_URL)
    return repo


@pytest.mark.parametrize(
    "command",
    [
        "cat .git/modules/lib/config",
        "tail -n3 .git/modules/*/config",
        "sed -n p .git/mod*/lib/conf*",
        "grep -r ghp_ .",
        "rg -uu ghp_",
        "git -C lib remote -v",  # refused: git inside the submodule is another repository
    ],
)
async def test_a_token_in_a_submodules_git_config_is_not_printed_unasked(tmp_path, command):
    repo = repo_with_a_tokened_submodule(tmp_path)
    result, approver = await terminal(repo, command)
    assert approver.asked or result.data["verdict"] == "refuse", f"{command} ran unasked"
    assert "ghp_planted" not in output(result)


@pytest.mark.parametrize(
    "command", ["cat .git/modules/lib/HEAD", "git status", "git log --oneline", "cat lib/.git"]
)
async def test_a_repo_with_a_tokened_submodule_still_reads_the_rest_unasked(tmp_path, command):
    repo = repo_with_a_tokened_submodule(tmp_path)
    result, approver = await terminal(repo, command)
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 0, output(result)


@pytest.mark.parametrize("command", ["cat .git/config", "git remote -v", "grep -r two ."])
async def test_a_git_config_without_credentials_is_read_unasked(tmp_path, command):
    repo = plain_repo(tmp_path / "repo")
    git(repo, "remote", "add", "origin", "https://example.org/r.git")
    result, approver = await terminal(repo, command)
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 0, output(result)


@pytest.mark.parametrize(
    "command", ["git diff --no-index src deploy", "git diff --no-ind -- deploy src"]
)
async def test_git_diff_no_index_of_folders_judges_the_files_below(tmp_path, command):
    """`git diff --no-index A B` compares every file below two folders, dotfiles included."""
    repo = plain_repo(tmp_path / "repo")
    (repo / "deploy").mkdir()
    (repo / "deploy" / ".env").write_text(REAL + "\n")
    result, approver = await terminal(repo, command)
    assert approver.asked and "deploy/.env" in approver.asked[0][1]
    assert "real-user-key" not in output(result)


async def test_git_diff_no_index_of_the_top_does_not_print_the_config_token(tmp_path):
    repo = plain_repo(tmp_path / "repo")
    git(repo, "remote", "add", "origin", TOKEN_URL)
    result, approver = await terminal(repo, "git diff --no-index src .")
    assert approver.asked
    assert "ghp_planted" not in output(result)


async def test_git_diff_no_index_of_two_files_runs(tmp_path):
    repo = plain_repo(tmp_path / "repo")
    (repo / "deploy").mkdir()
    (repo / "deploy" / ".env").write_text(REAL + "\n")
    result, approver = await terminal(repo, "git diff --no-index a.txt src/m.py")
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 1, output(result)  # they differ


@pytest.mark.parametrize(
    "command",
    [
        "git grep API_KEY -- '.e[n]v'",
        "git diff -- '[.]env'",
        "git log -p -- '.en[v]'",
        "git show HEAD -- '.e[!x]v'",
        "git diff -- '.en\\v'",
        "git grep API_KEY -- ':(glob)[.]env'",
    ],
)
async def test_a_pathspec_with_a_set_or_an_escape_that_selects_the_env_file_asks(tmp_path, command):
    """git's pathspecs are wildmatch patterns: `[.]env` and `.en\\v` select `.env`."""
    await asks_hiding_the_env_file(tracked_env_repo(tmp_path / "repo"), command)


@pytest.mark.parametrize(
    "command", ["git grep API_KEY -- 'a.tx[t]'", "git grep API_KEY -- ':!.e[n]v'"]
)
async def test_a_pathspec_set_that_leaves_the_env_file_out_runs(tmp_path, command):
    repo = tracked_env_repo(tmp_path / "repo")
    result, approver = await terminal(repo, command)
    assert approver.asked == [], approver.asked
    assert REAL not in output(result) and "replace-me" not in output(result)


@pytest.mark.parametrize(
    "command",
    [
        "git --icase-pathspecs log -p -- '.E*'",
        "git diff -- ':(icase).E*'",
        "git grep API -- ':(icase)[.]E*'",
    ],
)
async def test_a_case_blind_pathspec_that_selects_the_env_file_asks(tmp_path, command):
    await asks_hiding_the_env_file(tracked_env_repo(tmp_path / "repo"), command)


SETTINGS = "".join(f"OPTION_{n}=value {n}\n" for n in range(20))


def renamed_env_repo(root: Path) -> Path:
    """`.env` with the real key, then renamed to `settings.txt` with the key scrubbed:
    git follows the file back through the rename into `.env`'s history."""
    repo = plain_repo(root)
    (repo / ".env").write_text(SETTINGS + REAL + "\n")
    git(repo, "add", ".env")
    git(repo, "commit", "-qm", "key")
    git(repo, "mv", ".env", "settings.txt")
    (repo / "settings.txt").write_text(SETTINGS + "API_KEY=\n")
    git(repo, "commit", "-qam", "scrubbed, renamed")
    assert REAL in git(repo, "log", "-p", "--follow", "--", "settings.txt")
    return repo


async def test_git_log_follow_through_a_rename_from_an_env_file_asks(tmp_path):
    repo = renamed_env_repo(tmp_path / "repo")
    result, approver = await terminal(repo, "git log -p --follow -- settings.txt")
    assert approver.asked, "git log --follow ran without asking"
    assert REAL not in output(result)


async def test_log_follow_in_the_config_counts_as_the_option(tmp_path):
    repo = renamed_env_repo(tmp_path / "repo")
    git(repo, "config", "log.follow", "true")
    result, approver = await terminal(repo, "git log -p -- settings.txt")
    assert approver.asked and REAL not in output(result)


async def test_log_follow_in_the_config_leaves_the_history_walk_working(tmp_path):
    """The history walk's single pathspec would be followed (git: "unsupported magic")."""
    repo = removed_env_repo(tmp_path / "repo", "rm")
    git(repo, "config", "log.follow", "true")
    _, approver = await terminal(repo, "git log -p -1 -- src")
    assert approver.asked and "can't be read" not in approver.asked[0][1]
    assert "(from the history)" in approver.asked[0][1]


def branch_env_repo(root: Path, name: str = ".env.prod", line: str = REAL) -> Path:
    """`name` holding `line` committed on a branch `leak` only; the checkout stays on the
    main line, whose index and tree hold no env file."""
    repo = plain_repo(root)
    git(repo, "checkout", "-q", "-b", "leak")
    (repo / name).write_text(line + "\n")
    git(repo, "add", name)
    git(repo, "commit", "-qm", "key")
    git(repo, "checkout", "-q", "-")
    return repo


@pytest.mark.parametrize(
    "command",
    [
        "git show --all HEAD:a.txt",
        "git show --branches HEAD:a.txt",
        "git show --branches=le* HEAD:a.txt",
        "git show --glob=refs/heads/* HEAD:a.txt",
        "git show HEAD:a.txt leak",
        "printf leak | git show --stdin HEAD:a.txt",
    ],
)
async def test_git_show_of_a_file_and_other_revisions_judges_the_revisions(tmp_path, command):
    repo = branch_env_repo(tmp_path / "repo")
    result, approver = await terminal(repo, command)
    assert REAL not in output(result), f"{command} printed the key"
    assert approver.asked, f"{command} ran without asking"


async def test_git_show_of_a_file_and_the_index_objects_asks(tmp_path):
    repo = plain_repo(tmp_path / "repo")
    (repo / ".env").write_text(REAL + "\n")
    git(repo, "add", "-f", ".env")
    result, approver = await terminal(repo, "git show --indexed-objects HEAD:a.txt")
    assert REAL not in output(result)
    assert approver.asked, "git show --indexed-objects ran without asking"


@pytest.mark.parametrize(
    "command",
    [
        "git grep -ieapi_key leak",
        "git grep -ie api_key leak",
        "git grep -vie nothing-matches leak",
        "git grep -nC1 -eAPI leak",
        "git grep -if patterns.txt leak",
        "git grep --regexp=API_KEY leak",
        "git grep --reg API_KEY leak",
        "git grep -e -- -e API_KEY leak",  # `--` is -e's value, not the end of revisions
        "git grep -ie -- --or -e api_key leak",
    ],
)
async def test_git_grep_with_the_pattern_in_a_short_option_cluster_judges_the_revision(
    tmp_path, command
):
    repo = branch_env_repo(tmp_path / "repo")
    (repo / "patterns.txt").write_text("api_key\n")
    result, approver = await terminal(repo, command)
    assert REAL not in output(result), f"{command} printed the key"
    assert approver.asked, f"{command} ran without asking"


@pytest.mark.parametrize(
    "command",
    ["git grep -ie two", "git grep -nC1 -e two -- a.txt", "git grep -vie nothing -- a.txt"],
)
async def test_git_grep_with_a_short_option_cluster_runs_without_env_files(tmp_path, command):
    repo = branch_env_repo(tmp_path / "repo")
    result, approver = await terminal(repo, command)
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 0, output(result)


@pytest.mark.parametrize(
    "command",
    [
        "git diff --abbrev leak",
        "git log -p --abbrev leak",
        "git diff --color leak",
        "git diff --word-diff leak",
        "git diff --relative leak",
        "git diff -M leak",
        "git diff --find-renames leak",
        "git diff --submodule leak",
        "git diff --ignore-submodules leak",
        "git log -p --decorate leak",
        "git log -p --notes leak",
        "git log -p --pretty leak",
        "git diff --stat --dirstat -U leak",
    ],
)
async def test_a_revision_after_an_option_with_an_optional_value_is_judged(tmp_path, command):
    """git takes an optional value only stuck (`--abbrev=7`): the next word is a revision."""
    repo = branch_env_repo(tmp_path / "repo")
    result, approver = await terminal(repo, command)
    assert REAL not in output(result), f"{command} printed the key"
    assert approver.asked, f"{command} ran without asking"


@pytest.mark.parametrize(
    "command",
    [
        "git log --check leak",
        "git show --stat --check leak",
        "git diff --stat --check HEAD leak",
        "git diff --name-only --check HEAD leak",
    ],
)
async def test_git_check_prints_the_added_lines_with_whitespace_errors(tmp_path, command):
    repo = branch_env_repo(tmp_path / "repo", ".env.local", REAL + " ")
    result, approver = await terminal(repo, command)
    assert REAL not in output(result), f"{command} printed the key"
    assert approver.asked, f"{command} ran without asking"


@pytest.mark.parametrize(
    "command",
    [
        "git diff -- . ':!.env/'",
        "git diff -- . ':!.env/.'",
        "git diff -- . ':!.env//'",
        "git log -p -- . ':(exclude).env/'",
        "git show -- . ':^.env/'",
        "git grep API_KEY -- . ':!.env/'",
    ],
)
async def test_an_exclusion_ending_in_a_slash_leaves_only_a_folder_out(tmp_path, command):
    """In git a pathspec ending in `/` selects a folder (and what is in it), not a file."""
    await asks_hiding_the_env_file(tracked_env_repo(tmp_path / "repo"), command)


@pytest.mark.parametrize(
    "command",
    [
        "git diff -- ':'",
        "git diff -- '::'",
        "git log -p -- ':'",
        "git grep API_KEY -- ':'",
        "git diff -- ':/!:a.txt'",
        "git diff -- ':!/:a.txt'",
        "cd src && git diff -- ':/'",
    ],
)
async def test_a_pathspec_of_magic_with_an_empty_pattern_selects_the_whole_folder(
    tmp_path, command
):
    """`:` is a pathspec with no magic and an empty pattern: the current folder; `:/` the
    whole tree. Short magic may end with a colon (`:/!:a.txt` is top and exclude)."""
    await asks_hiding_the_env_file(tracked_env_repo(tmp_path / "repo"), command)


@pytest.mark.parametrize(
    "command",
    [
        "git grep --no-index API_KEY -- . ':!.env/'",
        "git grep --untracked --no-exclude-standard API_KEY -- . ':!.env/.'",
        "git grep --no-index API_KEY -- ':'",
        "git grep --no-index API_KEY -- '::'",
    ],
)
async def test_git_grep_over_the_tree_with_such_pathspecs_asks(tmp_path, command):
    repo = plain_repo(tmp_path / "repo")
    (repo / ".gitignore").write_text(".env\n")
    (repo / ".env").write_text(REAL + "\n")
    result, approver = await terminal(repo, command)
    assert REAL not in output(result)
    assert approver.asked, f"{command} ran without asking"


@pytest.mark.parametrize(
    "command",
    [
        "git diff -- ':!:.env'",
        "git grep API_KEY -- ':/!.env'",
        "git log -p -- ':^/.env' ':!src/'",
        "git -C src diff -- ':'",
        "git -C src grep x -- ':'",
    ],
)
async def test_pathspecs_that_leave_the_env_file_out_in_gits_reading_run(tmp_path, command):
    repo = tracked_env_repo(tmp_path / "repo")
    result, approver = await terminal(repo, command)
    assert approver.asked == [], approver.asked
    assert result.data["exit_code"] == 0, output(result)
    assert REAL not in output(result) and "replace-me" not in output(result)
