"""git commands the policy once let run unasked, each shown harmful with real git first.

Every row builds its world with real git, runs the command as git itself would (outside
the sandbox, with the pager off) to show the secret really comes out, then checks that
the policy no longer lets it run without the user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hello_tui.tools.shell.policy import classify
from tests.tools.helpers import policy_world

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
KEY = "sk-repo-key"


def git(repo: Path, *args: str, check: bool = True) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo.parent / "private" / "home"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "PAGER": "cat",
        "MANPAGER": "cat",
        "GIT_PAGER": "cat",
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=check
    )
    return done.stdout + done.stderr


def committed(base: Path) -> Path:
    """policy_world's repo with two commits; `.env` (the key) untracked and ignored."""
    repo = policy_world(base)["repo"]
    (repo / ".gitignore").write_text(".env\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    (repo / "a.txt").write_text("hello\nworld\n")
    git(repo, "commit", "-qam", "two")
    return repo


def not_unasked(command: str, repo: Path, cwd: Path | None = None) -> None:
    verdict = classify(command, repo, cwd or repo)
    assert verdict.action != "run", f"{command} runs unasked: {verdict.reason}"


def run_unasked(command: str, repo: Path) -> None:
    verdict = classify(command, repo, repo)
    assert verdict.action == "run", f"{command}: {verdict.reason}"


CONTROLS = [
    "git log",
    "git log -p",
    "git status",
    "git show",
    "git diff",
    "git blame a.txt",
    "git grep foo",
    "git branch -a",
    "git help log",
]


@pytest.mark.parametrize("command", CONTROLS)
def test_the_everyday_read_only_git_commands_still_run_unasked(tmp_path, command):
    run_unasked(command, committed(tmp_path))


# ---------------------------------------------------------------- git help and man


@pytest.mark.skipif(shutil.which("man") is None, reason="needs man")
@pytest.mark.parametrize(
    "command",
    [
        "git help gitx/../.env",
        "git --help gitx/../.env",
        "git help -m gitx/../../outside/secret.txt",
    ],
)
def test_git_help_never_hands_man_a_file(tmp_path, command):
    """`git help NAME` runs `man git<NAME>` (a NAME starting with `git` as it is), and man
    formats and prints a name holding a `/` as a file: any folder `git*` in the repo
    (a clone brings one) then leads to `.env` or out of the repo."""
    repo = committed(tmp_path)
    (repo / "gitx").mkdir()
    shown = git(repo, *command.split()[1:], check=False)
    if "can't open the manpath" not in shown:
        assert KEY in shown or "outside-secret" in shown
    not_unasked(command, repo)


# ---------------------------------------------------------------- revisions git reads


def env_in_history(base: Path) -> Path:
    """A `.env` committed once ("feat: add env") and removed from the index after."""
    repo = committed(base)
    git(repo, "add", "-f", ".env")
    git(repo, "commit", "-qm", "feat: add env")
    git(repo, "rm", "-q", "--cached", ".env")
    git(repo, "commit", "-qm", "chore: drop env")
    return repo


@pytest.mark.parametrize(
    "command",
    [
        "git show HEAD^{/feat:}",  # a commit by its message, the colon inside the braces
        "git show HEAD^{/feat:}~0",
        "git show main^{/add}^{/feat:}",
    ],
)
def test_a_colon_inside_braces_is_no_tree_path(tmp_path, command):
    """`git show REV:path` prints one file, which the policy judges by its name; a colon
    inside `^{/...}` or `@{...}` is part of the revision, and git shows that commit's
    whole patch."""
    repo = env_in_history(tmp_path)
    git(repo, "branch", "-M", "main")
    assert KEY in git(repo, *command.split()[1:])
    not_unasked(command, repo)


def test_a_file_after_a_braced_colon_is_still_one_file(tmp_path):
    repo = env_in_history(tmp_path)
    run_unasked("git show HEAD^{/feat:}:a.txt", repo)
    run_unasked("git show HEAD:a.txt", repo)


def dropped_stash(base: Path) -> tuple[Path, str]:
    """`git stash -u` of a `.env`, then `git stash drop`: a commit no ref or reflog
    reaches, whose third parent holds the key (git printed its id when dropping it)."""
    repo = committed(base)
    (repo / ".gitignore").write_text("")
    git(repo, "stash", "-u")
    stash = git(repo, "rev-parse", "stash@{0}").strip()
    git(repo, "stash", "drop")
    (repo / ".env").write_text(f"LLM_API_KEY={KEY}\n")
    return repo, stash


@pytest.mark.parametrize(
    "revision",
    [
        "x-0-g{short}^3",  # describe output: only the id after -g is looked up
        "v9.9-12-g{full}^3",
        "--end-of-options -x-1-g{short}^3",  # after --end-of-options, a revision
    ],
)
def test_a_commit_named_by_its_id_in_any_spelling_is_checked(tmp_path, revision):
    repo, stash = dropped_stash(tmp_path)
    command = "git show " + revision.format(short=stash[:10], full=stash)
    assert KEY in git(repo, *command.split()[1:])
    not_unasked(command, repo)


def test_a_pseudo_ref_of_any_name_is_checked(tmp_path):
    """git looks any name of capitals and `_` up as `$GIT_DIR/<name>`: `MERGE_AUTOSTASH`
    (what `git merge --autostash` leaves) as much as `ORIG_HEAD`."""
    repo, stash = dropped_stash(tmp_path)
    (repo / ".git" / "MERGE_AUTOSTASH").write_text(stash + "\n")
    assert KEY in git(repo, "show", "MERGE_AUTOSTASH^3")
    not_unasked("git show MERGE_AUTOSTASH^3", repo)
    not_unasked("git log -p -1 MERGE_AUTOSTASH^3", repo)


# ---------------------------------------------------------------- option values


@pytest.mark.parametrize(
    "command",
    [
        "git log -p --exclude a.txt",  # the revision parser's `--exclude <glob>`
        "git show --line-prefix src HEAD~1",  # diff options with a required value
        "git show --src-prefix src HEAD~1",
        "git log -p --word-diff-regex src",
        "git log -p --decorate-refs src",  # log's own
        "git log -pO a.txt",  # a cluster of short options ending in one with a value
        "git log -pI a.txt",
        "git show -sI a.txt -p HEAD~1",
    ],
)
def test_an_options_value_is_no_pathspec(tmp_path, command):
    """Without `--`, a word naming a file limits the patch to it; after an option that
    takes the next word as its value, git reads it as that value, and the patch is whole."""
    repo = env_in_history(tmp_path)
    assert KEY in git(repo, *command.split()[1:])
    not_unasked(command, repo)


@pytest.mark.parametrize("command", ["git grep -e KEY --max-dep 1", "git grep -e KEY --th 1"])
def test_git_grep_takes_its_options_abbreviated(tmp_path, command):
    """git grep's parser takes a unique abbreviation of a long option, with its value."""
    repo = committed(tmp_path)
    git(repo, "add", "-f", ".env")
    git(repo, "commit", "-qm", "env")
    (repo / "1").write_text("")
    assert KEY in git(repo, *command.split()[1:], check=False)
    not_unasked(command, repo)


@pytest.mark.parametrize(
    "command", ["git log -p src", "git log -p -S x src", "git log -pS x src", "git log -p -3 src"]
)
def test_a_pathspec_after_option_values_still_limits_the_patch(tmp_path, command):
    run_unasked(command, env_in_history(tmp_path))


# ---------------------------------------------------------------- secrets in config

TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


@pytest.mark.parametrize(
    ("setup", "command"),
    [
        (["remote", "add", "origin", f"https://{TOKEN}@github.com/o/r.git"], "git remote -v"),
        (["remote", "add", "origin", f"https://{TOKEN}@github.com/o/r.git"], "git config -l"),
        (
            ["config", f"url.https://{TOKEN}@github.com/.insteadOf", "https://github.com/"],
            "git config --get-regexp url",
        ),
    ],
)
def test_a_token_as_an_http_urls_user_is_a_credential(tmp_path, setup, command):
    """`https://<token>@github.com/o/r` is how GitHub's docs clone with a token: git sends
    the user as the Basic-auth login, with no password in the URL."""
    repo = committed(tmp_path)
    git(repo, *setup)
    assert TOKEN in git(repo, *command.split()[1:])
    verdict = classify(command, repo, repo)
    assert verdict.action != "run"
    assert TOKEN not in verdict.reason


def test_an_ssh_login_name_is_no_credential(tmp_path):
    repo = committed(tmp_path)
    git(repo, "remote", "add", "origin", "ssh://git@github.com/o/r.git")
    git(repo, "remote", "add", "other", "git@github.com:o/r.git")
    run_unasked("git remote -v", repo)


@pytest.mark.parametrize(
    "command", ["git --no-replace-objects log -p", "git --no-replace-objects show"]
)
def test_a_commit_hidden_behind_a_replace_ref_is_still_history(tmp_path, command):
    """`git replace X Y` shows Y wherever X is read; `--no-replace-objects` shows X again,
    with the `.env` it added."""
    repo = committed(tmp_path)
    git(repo, "add", "-f", ".env")
    git(repo, "commit", "-qm", "add env")
    original = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "rm", "-q", "--cached", ".env")
    tree = git(repo, "write-tree").strip()
    clean = git(repo, "commit-tree", tree, "-p", "HEAD~1", "-m", "add env").strip()
    git(repo, "replace", original, clean)
    assert KEY in git(repo, "--no-replace-objects", "log", "-p")
    assert KEY not in git(repo, "log", "-p")
    not_unasked(command, repo)


@pytest.mark.parametrize("options", ["-s", "--stat", "--name-only", "--quiet", "--no-patch"])
def test_git_show_prints_a_blob_whatever_its_diff_options_say(tmp_path, options):
    """`git add .env` then `git reset` leaves the key in a loose blob; the options that
    quiet a commit's patch leave a blob's contents alone."""
    repo = committed(tmp_path)
    git(repo, "add", "-f", ".env")
    git(repo, "reset", "-q")
    blob = git(repo, "hash-object", ".env").strip()
    assert KEY in git(repo, "show", options, blob)
    not_unasked(f"git show {options} {blob}", repo)
    not_unasked(f"git show {options} {blob[:8]}", repo)
    run_unasked(f"git show {options} HEAD", repo)


@pytest.mark.parametrize("command", ["git status", "git diff", "git log -p"])
@pytest.mark.parametrize("target", [".env", "../outside/secret.txt"])
def test_an_attributes_file_git_would_echo_asks(tmp_path, command, target):
    """Every command reading attributes warns "<word> is not a valid attribute name" for
    each word of core.attributesFile after a line's pattern that is none."""
    repo = committed(tmp_path)
    line = "KEY sk-repo-key+1\nSECRET outside-secret!\n"
    (repo / ".env").write_text(line)
    (repo.parent / "outside" / "secret.txt").write_text(line)
    (repo / "a.txt").write_text("changed\n")
    git(repo, "config", "core.attributesFile", target)
    # git status reads attributes only for the files whose contents it must hash.
    assert KEY in git(repo, "diff")
    verdict = classify(command, repo, repo)
    assert verdict.action != "run"
    assert "core.attributesfile" in verdict.reason


def test_an_attributes_file_of_the_repos_own_runs_unasked(tmp_path):
    repo = committed(tmp_path)
    (repo / "attrs").write_text("*.txt text\n")
    git(repo, "config", "core.attributesFile", "attrs")
    run_unasked("git diff", repo)


@pytest.mark.parametrize(
    "value",
    [
        f"push https://u:{TOKEN}@github.com/o/r",
        f"push https://{TOKEN}@github.com/o/r",
        f'-c "http.extraHeader=Authorization: Bearer {TOKEN}" fetch',
    ],
)
@pytest.mark.parametrize("command", ["git help pp", "git --help pp", "git help -m PP"])
def test_git_help_of_an_alias_holding_a_credential_asks(tmp_path, value, command):
    """`git help <alias>` prints "'pp' is aliased to '<value>'"."""
    repo = committed(tmp_path)
    git(repo, "config", "alias.pp", value)
    assert TOKEN in git(repo, "help", "pp")
    verdict = classify(command, repo, repo)
    assert verdict.action != "run"
    assert TOKEN not in verdict.reason


def test_git_help_runs_unasked_beside_an_alias_with_a_credential(tmp_path):
    repo = committed(tmp_path)
    git(repo, "config", "alias.pp", f"push https://u:{TOKEN}@github.com/o/r")
    git(repo, "config", "alias.st", "status")
    run_unasked("git help log", repo)
    run_unasked("git help st", repo)


@pytest.mark.parametrize(
    "command",
    [
        "git log -p --full-diff -- a.txt",
        "git log -p --full-diff a.txt",
        "git show --full-diff HEAD~1 -- a.txt",
        "git log -p --full-diff -- a.txt :!.env",
    ],
)
def test_full_diff_shows_every_file_of_the_commits_a_pathspec_chose(tmp_path, command):
    """`--full-diff`: the pathspecs pick the commits that touch them, and git shows those
    commits' whole diffs, an env file committed beside them too."""
    repo = committed(tmp_path)
    (repo / "a.txt").write_text("x\n")
    git(repo, "add", "-f", ".env", "a.txt")
    git(repo, "commit", "-qm", "env beside a")
    git(repo, "rm", "-q", "--cached", ".env")
    git(repo, "commit", "-qm", "drop env")
    assert KEY in git(repo, *command.split()[1:])
    not_unasked(command, repo)


@pytest.mark.parametrize(
    ("folder", "text"),
    [
        ("remotes", f"URL: https://u:{TOKEN}@github.com/o/r.git\nPull: refs/heads/main:refs/x\n"),
        ("branches", f"https://{TOKEN}@github.com/o/r.git#main\n"),
    ],
)
def test_a_legacy_remote_files_url_is_a_credential(tmp_path, folder, text):
    """git still reads remotes from `.git/remotes/<name>` and `.git/branches/<name>`, and
    `git remote get-url <name>` prints their URL."""
    repo = committed(tmp_path)
    (repo / ".git" / folder).mkdir(exist_ok=True)
    (repo / ".git" / folder / "old").write_text(text)
    assert TOKEN in git(repo, "remote", "get-url", "old")
    verdict = classify("git remote get-url old", repo, repo)
    assert verdict.action != "run"
    assert TOKEN not in verdict.reason


@pytest.mark.parametrize("spec", [":!.env", ":^.env", ":(exclude).env", ":!*.txt"])
def test_a_pathspec_with_magic_is_no_index_path(tmp_path, spec):
    """`:path` names a file in the index, but a word git can't resolve so is a pathspec:
    `git show ':!.env'` is HEAD's whole patch without `.env`, with `.env.local` in it."""
    repo = committed(tmp_path)
    (repo / ".env.local").write_text(f"LOCAL={KEY}\n")
    git(repo, "add", "-f", ".env.local")
    git(repo, "commit", "-qm", "local")
    command = f"git show '{spec}'"
    assert KEY in git(repo, "show", spec)
    not_unasked(command, repo)


@pytest.mark.parametrize("options", ["-s", "--stat", "--dirstat", "--name-only"])
def test_git_show_indexed_objects_prints_every_blob_of_the_index(tmp_path, options):
    repo = committed(tmp_path)
    (repo / ".env.local").write_text(f"LOCAL={KEY}\n")
    git(repo, "add", "-f", ".env.local")
    command = f"git show --indexed-objects {options}"
    assert KEY in git(repo, *command.split()[1:])
    not_unasked(command, repo)


@pytest.mark.parametrize(
    "command",
    [
        "git show --skip-to --raw",  # --raw is the value of --skip-to, not a format
        "git show --line-prefix --stat",
        "git show -I -m --since 1,1:a.txt",  # 1,1:a.txt is --since's value, not a file
    ],
)
def test_an_options_value_is_no_option_and_no_file(tmp_path, command):
    repo = committed(tmp_path)
    (repo / "a.txt").write_text("x\n")
    (repo / ".env.local").write_text(f"LOCAL={KEY}\n")
    git(repo, "add", "-f", ".env.local", "a.txt")
    git(repo, "commit", "-qm", "local")
    assert KEY in git(repo, *command.split()[1:])
    not_unasked(command, repo)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("deploy.apikey", "abc123-not-a-known-shape"),
        ("service.api-key", "abc123-not-a-known-shape"),
        ("ci.login", "ghp_" + "a1B2" * 9),
        ("notify.hook", "https://hooks.example/xoxb-" + "1234567890-abcdef"),
        ("cloud.id", "AKIA" + "ABCDEFGHIJKLMNOP"),
    ],
)
def test_a_token_under_any_key_is_not_printed_unasked(tmp_path, key, value):
    repo = committed(tmp_path)
    git(repo, "config", key, value)
    assert value in git(repo, "config", "-l")  # git prints it
    not_unasked("git config -l", repo)
    not_unasked(f"git config --get {key}", repo)
    git(repo, "config", "--unset", key)
    run_unasked("git config -l", repo)
