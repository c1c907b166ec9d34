"""git through the real terminal tool: nothing a repository's config names runs unasked.

Each driver prints a marker (so a run is seen even where the sandbox stops
its write) and tries to touch a canary outside the repo. The approver
declines whatever it is asked: a driver that ran shows its marker.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.core.tools import ToolContext
from hello_tui.tools.shell.environment import command_environment, read_only_path
from hello_tui.tools.shell.git_guard import with_drivers_off
from hello_tui.tools.terminal import TerminalArgs, TerminalTool

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
MARK = "PWNED-MARK"


class Declines:
    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    async def review_patch(self, plan):
        raise AssertionError("the terminal proposes no patches")

    async def approve_command(self, command: str, reason: str) -> str:
        self.asked.append((command, reason))
        return "deny"


def git(repo: Path, *args: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1"}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": "/dev/null"}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(root: Path) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", ".")
    (root / "f.txt").write_text("one\n")
    (root / ".gitattributes").write_text("*.txt diff=t filter=f\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "one")
    (root / "f.txt").write_text("one\ntwo\n")
    git(root, "commit", "-qam", "two")
    return root.resolve()


def driver(canary: Path) -> str:
    """A config value (quoted: `;` starts a comment in git's config) that runs a program."""
    return f'"echo {MARK}; touch {canary}; cat"'


async def terminal(repo: Path, command: str, environ: dict[str, str] | None = None):
    approver = Declines()
    ctx = ToolContext(settings=load_settings(repo, environ=environ or {}), approver=approver)
    result = await TerminalTool().run(TerminalArgs(command=command), ctx)
    return result, approver


def output(result) -> str:
    data = result.data or {}
    return result.text + str(data.get("stdout", "")) + str(data.get("stderr", ""))


# (config lines for .git/config, the command, whether the worktree must differ from HEAD)
DRIVERS = [
    ("[diff]\n\texternal = {driver}\n", "git diff", True),
    ('[diff "t"]\n\ttextconv = {driver}\n', "git log -p", False),
    ('[diff "t"]\n\ttextconv = {driver}\n', "git show", False),
    ('[diff "t"]\n\ttextconv = {driver}\n', "git blame f.txt", False),
    ('[diff "t"]\n\ttextconv = {driver}\n', "git diff", True),
    ('[diff "t"]\n\ttextconv = {driver}\n', "git grep -n one", False),
    ('[diff "t"]\n\tcommand = {driver}\n', "git diff", True),
    ('[diff "t"]\n\tcommand = {driver}\n', "git show", False),
    ('[filter "f"]\n\tclean = {driver}\n', "git diff", True),
    ('[filter "f"]\n\tprocess = {driver}\n', "git status", True),
    ("[include]\n\tpath = extra.cfg\n", "git log -p", False),
    ('[includeIf "gitdir:/"]\n\tpath = extra.cfg\n', "git show", False),
    ("[core]\n\tpager = {driver}\n", "git log", False),
    ("[pager]\n\tlog = {driver}\n", "git log", False),
    ("[alias]\n\tlg = !{driver}\n", "git log", False),
    ("[credential]\n\thelper = !{driver}\n", "git status", False),
    ("[gpg]\n\tprogram = {driver}\n", "git log --show-signature", False),
    ("[core]\n\tsshCommand = {driver}\n", "git status", False),
    # `git help` starts the viewer these choose, on the page these name.
    ("[help]\n\tformat = web\n\thtmlPath = https://example.org/docs\n", "git help log", False),
    ("[help]\n\tbrowser = {driver}\n", "git help -w log", False),
    ('[man]\n\tviewer = x\n[man "x"]\n\tcmd = {driver}\n', "git help log", False),
]


@pytest.mark.parametrize(("config", "command", "dirty"), DRIVERS)
async def test_a_repo_configured_driver_never_runs_unasked(tmp_path, config, command, dirty):
    repo = make_repo(tmp_path / "repo")
    canary = tmp_path / "canary"
    program = driver(canary)
    (repo / ".git" / "extra.cfg").write_text(f'[diff "t"]\n\ttextconv = {program}\n')
    with (repo / ".git" / "config").open("a") as handle:
        handle.write(config.format(driver=program))
    if dirty:
        (repo / "f.txt").write_text("one\ntwo\nthree\n")
    result, approver = await terminal(repo, command)
    assert MARK not in output(result)
    assert not canary.exists()
    assert approver.asked, f"{command} ran without asking"
    key = config.split("\n")[1].strip().split(" = ")[0].lower()
    assert key in approver.asked[0][1].lower()
    assert "git config sets" in approver.asked[0][1]


@pytest.mark.parametrize(
    "command",
    ["git log", "git status", "git diff", "git show", "git log -p", "git blame f.txt"],
)
async def test_a_clean_repo_keeps_its_read_only_git_unasked(tmp_path, command):
    repo = make_repo(tmp_path / "repo")
    (repo / "f.txt").write_text("one\ntwo\nthree\n")
    result, approver = await terminal(repo, command)
    assert approver.asked == []
    assert result.data["exit_code"] == 0, output(result)
    assert result.data["approval"] == "policy"


def commondir_repo(repo: Path, tmp_path: Path) -> Path:
    """`x/` (HEAD, commondir) and `y/` (objects, refs, config): a repository to git.

    The history comes from a real repository; `y/info/attributes` names a diff
    driver that `y/config` defines. All are ordinary files, as a clone brings them.
    """
    source = make_repo(tmp_path / "source")
    (repo / "x").mkdir()
    shutil.copy(source / ".git" / "HEAD", repo / "x" / "HEAD")
    (repo / "x" / "commondir").write_text("../y\n")
    (repo / "y").mkdir()
    for name in ("objects", "refs"):
        shutil.copytree(source / ".git" / name, repo / "y" / name)
    (repo / "y" / "info").mkdir()
    (repo / "y" / "info" / "attributes").write_text("*.txt diff=t\n")  # what a bare repo reads
    (repo / "y" / "config").write_text(
        f'[core]\n\tbare = true\n[diff "t"]\n\ttextconv = {driver(tmp_path / "canary")}\n'
    )
    return repo / "x"


def git_show(folder: Path, home: Path) -> str:
    env = {"PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(home)}
    done = subprocess.run(
        ["git", "show"], cwd=folder, env=env, capture_output=True, text=True, check=False
    )
    return done.stdout


@pytest.mark.parametrize("command", ["cd x && git show", "cd x && git log -p", "git -C x log -p"])
async def test_a_commondir_repository_inside_the_repo_is_refused(tmp_path, command):
    repo = make_repo(tmp_path / "repo")
    x = commondir_repo(repo, tmp_path)
    shown = git_show(x, tmp_path)
    assert MARK in shown  # git itself takes x/ for a repository and runs y's driver
    (tmp_path / "canary").unlink()
    result, _ = await terminal(repo, command)
    assert MARK not in output(result)
    assert not (tmp_path / "canary").exists()
    assert result.data["verdict"] == "refuse"
    assert "x" in result.data["reason"]


def bare_layout_at_the_top(repo: Path, canary: Path) -> None:
    """`HEAD`, `objects/` (borrowing `.git/objects`), `refs/`, `config` and
    `info/attributes` committed at the repo's top: ordinary files, which
    `git --bare` takes for the repository instead of `.git`."""
    (repo / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / "refs" / "heads").mkdir(parents=True)
    (repo / "refs" / "heads" / "main").write_text(git(repo, "rev-parse", "HEAD"))
    (repo / "objects" / "info").mkdir(parents=True)
    (repo / "objects" / "info" / "alternates").write_text("../.git/objects\n")
    (repo / "info").mkdir()
    (repo / "info" / "attributes").write_text("*.txt diff=t\n")
    (repo / "config").write_text(
        f'[core]\n\tbare = true\n[diff "t"]\n\ttextconv = {driver(canary)}\n'
    )


@pytest.mark.parametrize(
    "command", ["git --bare log -p | cat", "git --bare show | cat", "git -C . --bare log -p; true"]
)
async def test_git_bare_never_takes_the_working_folder_for_the_repository(tmp_path, command):
    repo = make_repo(tmp_path / "repo")
    bare_layout_at_the_top(repo, tmp_path / "canary")
    shown = git(repo, "--bare", "log", "-p")
    assert MARK in shown  # git itself runs the committed config's driver
    (tmp_path / "canary").unlink()
    result, _ = await terminal(repo, command)
    assert MARK not in output(result)
    assert not (tmp_path / "canary").exists()
    assert result.data["verdict"] == "refuse"
    assert "--bare" in result.data["reason"]


async def test_git_dash_c_into_a_plain_folder_of_the_repo_runs(tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / "src").mkdir()
    result, approver = await terminal(repo, "git -C src log --oneline")
    assert approver.asked == [] and result.data["exit_code"] == 0
    assert "two" in result.data["stdout"]


async def test_a_short_dummy_key_leaves_git_working(tmp_path):
    repo = make_repo(tmp_path / "repo")
    result, approver = await terminal(repo, "git log --oneline", {"LLM_API_KEY": "k"})
    assert approver.asked == []
    assert result.data["exit_code"] == 0, output(result)
    assert "missing config" not in output(result)
    assert "two" in result.data["stdout"]


def test_only_values_long_enough_to_be_secrets_are_scrubbed(tmp_path):
    source = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "USER": "sk-live-1234567890"}
    short = command_environment(source, tmp_path, tmp_path, secrets=("k", "C"))
    assert short["LANG"] == "C.UTF-8"
    assert short["GIT_CONFIG_KEY_0"] == "core.fsmonitor"
    long = command_environment(source, tmp_path, tmp_path, secrets=("sk-live-1234567890",))
    assert "USER" not in long and long["LANG"] == "C.UTF-8"


@pytest.mark.parametrize(
    "argv",
    [
        ["git", "show"],
        ["git", "log", "-p"],
        ["git", "-C", ".", "diff", "HEAD~1"],
        ["git", "blame", "f.txt"],
    ],
)
def test_read_only_git_runs_with_external_diff_and_textconv_off(tmp_path, argv):
    """Belt and braces under the config check: the flags a read-only git gets do stop them."""
    repo = make_repo(tmp_path / "repo")
    with (repo / ".git" / "config").open("a") as handle:
        handle.write(f'[diff "t"]\n\ttextconv = {driver(tmp_path / "c")}\n')
    env = {"PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path)}

    def run(args: list[str]) -> str:
        done = subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True, check=False)
        return done.stdout

    assert MARK in run(argv)
    assert MARK not in run(with_drivers_off(argv))


async def test_read_only_commands_get_gits_programs_switched_off(tmp_path):
    repo = make_repo(tmp_path / "repo")
    result, approver = await terminal(repo, "printenv")
    assert approver.asked == []
    env = dict(line.split("=", 1) for line in result.data["stdout"].splitlines() if "=" in line)
    assert env["GIT_SSH_COMMAND"] == "false" and env["GIT_ALLOW_PROTOCOL"] == ""
    forced = {
        env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"]
        for i in range(int(env["GIT_CONFIG_COUNT"]))
    }
    assert forced["credential.helper"] == "" and forced["core.fsmonitor"] == "false"
    assert forced["protocol.allow"] == "never" and forced["core.pager"] == "cat"


@pytest.mark.parametrize("entry", ["{repo}/bin", "bin", "", "."])
async def test_a_repo_folder_on_path_never_supplies_a_read_only_program(
    tmp_path, monkeypatch, entry
):
    """With the repo's `bin/` on the user's PATH (direnv's PATH_add, a scripts folder), or
    an empty or relative entry bash looks up from the repo, a committed `bin/ls` (or `gpg`,
    which git starts by name) would run in place of the system's."""
    repo = make_repo(tmp_path / "repo")
    for name in ("ls", "cat", "sort", "gpg"):
        program = repo / "bin" / name
        program.parent.mkdir(exist_ok=True)
        program.write_text(f"#!/bin/sh\necho {MARK}\n")
        program.chmod(0o755)
        if entry == ".":
            shutil.copy(program, repo / name)
    monkeypatch.setenv("PATH", entry.format(repo=repo) + os.pathsep + os.environ["PATH"])
    for command in ("ls", "cat f.txt", "ls | sort", "git log --show-signature -1"):
        result, approver = await terminal(repo, command)
        assert MARK not in output(result), command
        assert approver.asked == [] and result.data["exit_code"] == 0, output(result)


def test_a_virtual_environment_in_the_repo_stays_on_a_read_only_path(tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    path = os.pathsep.join([str(repo / ".venv" / "bin"), str(repo / "bin"), "bin", "", "/usr/bin"])
    assert read_only_path(path, repo) == os.pathsep.join([str(repo / ".venv" / "bin"), "/usr/bin"])


@pytest.mark.parametrize(
    ("venv", "committed"),
    [
        (".venv", ["pyvenv.cfg", "bin/ls"]),
        ("env", ["bin/cat"]),  # pyvenv.cfg made locally, the programs committed
        ("tools/venv", ["pyvenv.cfg"]),  # the marker committed, the programs made later
        (".", ["pyvenv.cfg", "bin/ls"]),  # the repo itself laid out as a venv
    ],
)
async def test_a_virtual_environment_that_came_with_the_repo_leaves_the_path(
    tmp_path, monkeypatch, venv, committed
):
    """A cloned repository can hold `pyvenv.cfg` and `bin/ls`; a user who put that `bin` on
    PATH (an activated venv, direnv) must still get the system's ls and cat."""
    repo = make_repo(tmp_path / "repo")
    folder = repo / venv
    (folder / "bin").mkdir(parents=True, exist_ok=True)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for name in ("ls", "cat", "sort"):
        program = folder / "bin" / name
        program.write_text(f"#!/bin/sh\necho {MARK}\n")
        program.chmod(0o755)
    git(repo, "add", "-f", *(str(Path(venv) / part) for part in committed))
    git(repo, "commit", "-qm", "venv")
    monkeypatch.setenv("PATH", str(folder / "bin") + os.pathsep + os.environ["PATH"])
    assert str(folder / "bin") not in read_only_path(os.environ["PATH"], repo).split(os.pathsep)
    for command in ("ls", "cat f.txt", "ls | sort"):
        result, approver = await terminal(repo, command)
        assert MARK not in output(result), command
        assert approver.asked == [] and result.data["exit_code"] == 0, output(result)


def test_a_path_entry_that_leads_into_the_repo_through_a_link_is_dropped(tmp_path):
    """As the kernel resolves it: a link outside to the repo's `bin/`, a link in a folder
    above the entry, and a missing folder of the repo (a later command may create it)."""
    repo = make_repo(tmp_path / "repo")
    (repo / "bin").mkdir()
    (tmp_path / "to-bin").symlink_to(repo / "bin")
    (tmp_path / "to-repo").symlink_to(repo)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "to-elsewhere").symlink_to(tmp_path / "elsewhere")
    entries = [
        str(tmp_path / "to-bin"),
        str(tmp_path / "to-repo" / "bin"),
        str(tmp_path / "to-repo" / "scripts"),  # missing
        str(tmp_path / "to-elsewhere"),
        "/usr/bin",
    ]
    kept = read_only_path(os.pathsep.join(entries), repo)
    assert kept == os.pathsep.join([str(tmp_path / "to-elsewhere"), "/usr/bin"])


# A token kept in the key itself: `[url "https://user:TOKEN@host/"] insteadOf = ...`, which
# rewrites every remote URL to carry it.
TOKEN_KEY = "url.https://x-access-token:ghs_planted00token@github.com/.insteadOf"


@pytest.mark.parametrize(
    "command",
    [
        "cat .git/config",
        "git config -l",
        "git remote -v",
        "git remote get-url origin",
        # git reads these from disk as `cat` would
        "git diff --no-index /dev/null .git/config",
        "git blame --contents .git/config f.txt",
    ],
)
async def test_a_token_in_a_config_key_is_never_printed_or_named_unasked(tmp_path, command):
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", TOKEN_KEY, "https://github.com/")
    git(repo, "remote", "add", "origin", "https://github.com/o/r.git")
    result, approver = await terminal(repo, command)
    assert approver.asked, f"{command} ran without asking"
    assert "ghs_planted" not in output(result)
    assert "ghs_planted" not in approver.asked[0][1]  # the reason names the key, not the token


@pytest.mark.parametrize(
    "command",
    [
        "git blame --contents notes.txt f.txt",
        "git blame --ignore-revs-file notes.txt f.txt",
        "git diff --no-index /dev/null notes.txt",
    ],
)
async def test_git_reading_a_committed_link_to_the_env_file_asks(tmp_path, command):
    repo = make_repo(tmp_path / "repo")
    (repo / ".env").write_text("SERVICE_TOKEN=sk-planted\n")
    (repo / "notes.txt").symlink_to(".env")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "notes")
    result, approver = await terminal(repo, command)
    assert approver.asked, f"{command} ran without asking"
    assert "sk-planted" not in output(result)
