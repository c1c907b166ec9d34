"""Read-only programs judged the way they really read their arguments: pagers that stop
reading options at their first file (less) or take none where less takes one (more), and
env files reached through another name (a hard link). Where the harm needs the real tool,
the command is also run with bash in a copy of the world, to show it is real."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.tools.helpers import judging_environment, policy_world, run_in_copy, verdict_in

RUN, ASK, REFUSE = "run", "ask", "refuse"
KEY = "sk-repo-key"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    world = policy_world(tmp_path_factory.mktemp("findings2"))
    repo = world["repo"]
    (repo / "b.txt").write_text("world\n")
    (repo / "-.env").write_text("LLM_API_KEY=sk-repo-key\n")  # an env file named like an option
    (repo / "sub").mkdir()
    (repo / "sub" / "c.txt").write_text("c\n")
    # Another name of the .env: a hard link is the file itself. (A name inside the repo
    # for a file outside it cannot be made in the sandbox: tests/tools/test_env_hard_links.)
    (repo / "linked").mkdir()
    (repo / "linked" / "notes.txt").write_text("plain\n")
    os.link(repo / ".env", repo / "linked" / "settings.txt")
    os.symlink(world["outside"] / "secret.txt", repo / "outlink")
    (repo / "deploy" / ".env").mkdir(parents=True)  # env files in a folder named like one
    (repo / "deploy" / ".env" / "production").write_text("LLM_API_KEY=sk-repo-key\n")
    (repo / "deploy" / "prod.env.d").mkdir()
    (repo / "deploy" / "prod.env.d" / "keys").write_text("LLM_API_KEY=sk-repo-key\n")
    (repo / ".hidden").mkdir()
    os.link(repo / ".env", repo / ".hidden" / "notes.txt")
    return world | {"repo": repo.resolve()}


CONTROLS = [
    "cat a.txt",
    "grep -n foo a.txt",
    "ls | sort",
    "cat {a,b}.txt",
    "wc -l [ab].txt",
    "find . -name '*.py'",
    "sed -n 1,5p a.txt",
    "awk '{print $1}' a.txt",
    "head -n 3 a.txt | tail -n 1",
]


@pytest.mark.parametrize("command", CONTROLS)
def test_controls_still_run(world, command):
    assert verdict_in(world, command).action == RUN


# ---------------------------------------------------------------- pagers

PAGER_ROWS: list[tuple[str, str]] = [
    # less reads options only up to its first file: after it `-p` and `.env` are files.
    ("less a.txt -p .env | cat", ASK),
    ("less a.txt -x .env | cat", ASK),
    ("less a.txt -p .env", ASK),
    ("less -- -p .env | cat", ASK),
    # util-linux more: `-p` is a flag, `-n` takes a value, options anywhere (getopt).
    ("more -p .env | cat", ASK),
    ("more -p .env", ASK),
    ("more a.txt -n 2 .env | cat", ASK),
    ("more -n +3 .env", ASK),
    ("cat a.txt | more -p .env", ASK),
    # A pager reading a pipe still shows the files it is given (`--` then a dash name).
    ("cat a.txt | less -- -.env", ASK),
    # A word after an abbreviated long option is a file when less can't resolve it (an
    # ambiguous abbreviation): judged as a file either way.
    ("less --ta .env | cat", ASK),
    ("less --pat .env | cat", ASK),
    ("less --pattern .env a.txt | cat", RUN),
    ("less -p .env", RUN),  # a pattern: cat shows no file
    ("less -p hello a.txt", RUN),
    ("less -N a.txt b.txt", RUN),
    ("more -n 3 a.txt", RUN),
    ("less +G a.txt", RUN),
    ("cat a.txt | less", RUN),
    ("cat a.txt | less -N", RUN),
]


@pytest.mark.parametrize(("command", "expected"), PAGER_ROWS, ids=[c for c, _ in PAGER_ROWS])
def test_pager_rows(world, command, expected):
    assert verdict_in(world, command).action == expected


@pytest.mark.parametrize(
    "command",
    [
        "less a.txt -p .env | cat",
        "more -p .env | cat",
        "cat a.txt | less -- -.env",
        "less --ta .env | cat",
    ],
)
def test_the_real_pagers_show_the_env_file(world, tmp_path, command):
    if not (shutil.which("less") and shutil.which("more")):
        pytest.skip("less and more are needed")
    if command.startswith("more") and "util-linux" not in run_in_copy(
        world, tmp_path / "v", ["more", "--version"]
    ):
        pytest.skip("this more is not util-linux's")
    assert KEY in run_in_copy(world, tmp_path, command)


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        # `-p` takes a pattern: the word after it is no file, and cat must not show it.
        ("less -p .env", ["cat", "--"]),
        ("less -p /usr a.txt", ["cat", "--", "a.txt"]),
        ("less -p hello a.txt", ["cat", "--", "a.txt"]),
        ("less -x4 -p hello a.txt b.txt", ["cat", "--", "a.txt", "b.txt"]),
        ("more -n 3 a.txt", ["cat", "--", "a.txt"]),
    ],
)
def test_a_pager_runs_as_cat_of_the_files_it_would_show(world, command, shown):
    verdict = verdict_in(world, command)
    assert verdict.action == RUN and verdict.argv == shown


# ---------------------------------------------------------------- hard links

LINK_ROWS: list[tuple[str, str]] = [
    ("cat linked/settings.txt", ASK),
    ("head -n 1 linked/settings.txt", ASK),
    ("grep -n . linked/settings.txt", ASK),
    ("cat < linked/settings.txt", ASK),
    ("cat linked/*", ASK),
    ("grep -r . linked", ASK),
    ("grep -R . linked", ASK),
    ("rg . linked", ASK),
    ("rg --hidden . .hidden", ASK),
    # What only lists names or metadata, and what skips hidden files, is not a read.
    ("ls -l linked", RUN),
    ("stat linked/settings.txt", RUN),
    ("cat linked/notes.txt", RUN),
    ("rg . sub", RUN),
    ("grep -r c sub", RUN),
    ("cat sub/c.txt", RUN),
]


@pytest.mark.parametrize(("command", "expected"), LINK_ROWS, ids=[c for c, _ in LINK_ROWS])
def test_hard_link_rows(world, command, expected):
    assert verdict_in(world, command).action == expected


@pytest.mark.parametrize(
    ("command", "shown"),
    [("cat linked/settings.txt", KEY), ("grep -r . linked", KEY)],
)
def test_a_hard_link_shows_the_file_it_is(world, tmp_path, command, shown):
    # A copy would break the links: run in the world itself (these commands only read).
    done = subprocess.run(
        ["bash", "-c", command],
        check=False,
        cwd=world["repo"],
        env=judging_environment(world),
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert shown in done.stdout


# ---------------------------------------------------------------- long option names

OPTION_ROWS: list[tuple[str, str]] = [
    # grep's `--binary` is a flag of its own, no abbreviation of `--binary-files`: the
    # pattern is the next word and .env is a file.
    ("grep --binary LLM .env", ASK),
    ("fgrep --binary LLM .env", ASK),
    ("grep --binary LLM linked/../../outside/secret.txt", REFUSE),
    ("grep --binary-files=text LLM a.txt", RUN),
    ("grep --binary hello a.txt", RUN),
    # rg takes long names only whole: `--ignore` is a flag, the path is read.
    ("rg --ignore LLM .env", ASK),
    ("rg --ignore secret outlink", REFUSE),
    ("rg --ignore-file sub/c.txt hello a.txt", RUN),
    ("rg --ignore hello a.txt", RUN),
    # du's `--time[=WORD]` takes a value only attached: the next word is a folder it lists.
    ("du --time ..", REFUSE),
    ("du -a --time ../outside", REFUSE),
    ("du --time=atime .", RUN),
    ("du --time sub", RUN),
]


@pytest.mark.parametrize(("command", "expected"), OPTION_ROWS, ids=[c for c, _ in OPTION_ROWS])
def test_long_option_rows(world, command, expected):
    assert verdict_in(world, command).action == expected


@pytest.mark.parametrize(
    ("command", "shown"),
    [("grep --binary LLM .env", KEY), ("rg --ignore secret outlink", "outside-secret")],
)
def test_the_real_programs_read_the_file(world, tmp_path, command, shown):
    if not shutil.which(command.split()[0]):
        pytest.skip(f"{command.split()[0]} is not installed")
    assert shown in run_in_copy(world, tmp_path, command)


def test_du_time_lists_the_folder_after_it(world):
    done = subprocess.run(
        ["du", "-a", "--time", "../outside"],
        check=False,
        cwd=world["repo"],
        capture_output=True,
        text=True,
    )
    assert "secret.txt" in done.stdout


# ---------------------------------------------------------------- walks through a link


def test_a_walk_through_a_link_sees_what_its_folder_gets_later(tmp_path):
    """A walk's folder listings are kept while the folder is unchanged: the folder a
    link leads to, not the link, whose times stay the same when the folder changes."""
    world = policy_world(tmp_path)
    repo = world["repo"].resolve()
    (repo / "notes").mkdir()
    (repo / "notes" / "todo.txt").write_text("x\n")
    os.symlink("notes", repo / "docs")
    old = 1_000_000_000
    os.utime(repo / "notes", (old, old))
    os.utime(repo / "docs", (old, old), follow_symlinks=False)
    world = world | {"repo": repo}
    assert verdict_in(world, "grep -r LLM docs").action == RUN
    (repo / "notes" / "prod.env").write_text("LLM_API_KEY=sk-repo-key\n")
    assert verdict_in(world, "grep -r LLM docs").action == ASK
    assert verdict_in(world, "rg LLM docs").action == ASK
    done = subprocess.run(
        ["grep", "-r", "LLM", "docs"], check=False, cwd=repo, capture_output=True, text=True
    )
    assert KEY in done.stdout


# ---------------------------------------------------------------- /dev/stdin and friends

DEVICE_ROWS: list[tuple[str, str]] = [
    # Opening /dev/stdin, /dev/stdout or /dev/stderr reopens the file on that descriptor,
    # for writing too: the command's own redirections decide which file that is.
    ("cat a.txt < b.txt > /dev/stdin", ASK),
    ("cat a.txt 2<b.txt >/dev/stderr", ASK),
    ("echo hi 1<b.txt 2>/dev/stdout", ASK),
    ("cat a.txt 2<b.txt &>/dev/stderr", ASK),
    ("cat a.txt 3<b.txt 2<&3 >/dev/stderr", ASK),
    ("sort -o /dev/stdout a.txt 1<b.txt", ASK),
    ("cat a.txt < .git/config > /dev/stdin", REFUSE),
    ("echo x > /dev/stdout", RUN),
    ("cat a.txt 2>/dev/null", RUN),
    ("cat a.txt >/dev/null 2>&1", RUN),
    ("cat a.txt 2<b.txt 1>&2", RUN),  # a copy of a read-only descriptor writes nothing
    ("grep x a.txt > /dev/stderr", RUN),
    ("sort -o /dev/stdout a.txt", RUN),
    ("cat a.txt 2>&1 | cat > /dev/stdout", RUN),
]


@pytest.mark.parametrize(("command", "expected"), DEVICE_ROWS, ids=[c for c, _ in DEVICE_ROWS])
def test_device_rows(world, command, expected):
    assert verdict_in(world, command).action == expected


@pytest.mark.parametrize(
    "command",
    [
        "cat a.txt < b.txt > /dev/stdin",
        "echo hi 1<b.txt 2>/dev/stdout",
        "sort -o /dev/stdout a.txt 1<b.txt",
    ],
)
def test_writing_a_std_device_writes_the_file_on_it(world, tmp_path, command):
    run_in_copy(world, tmp_path, command)
    assert (tmp_path / "copy" / "b.txt").read_text() != "world\n"


# ---------------------------------------------------------------- env folders

ENV_FOLDER_ROWS: list[tuple[str, str]] = [
    # The files in a folder named like an env file (`.env/production`) hold its keys.
    ("cat deploy/.env/production", ASK),
    ("cat deploy/.env/*", ASK),
    ("head deploy/prod.env.d/keys", ASK),
    ("cd deploy/.env && cat production", ASK),
    ("grep -r LLM deploy", ASK),
    ("grep -r LLM deploy/.env", ASK),
    ("grep -R LLM deploy", ASK),
    ("rg LLM deploy", ASK),  # prod.env.d is no hidden folder: rg reads it
    ("ls deploy/.env", RUN),
    ("stat deploy/.env/production", RUN),
    ("find deploy -type f", RUN),
]


@pytest.mark.parametrize(
    ("command", "expected"), ENV_FOLDER_ROWS, ids=[c for c, _ in ENV_FOLDER_ROWS]
)
def test_env_folder_rows(world, command, expected):
    assert verdict_in(world, command).action == expected


def test_grep_shows_the_keys_in_an_env_folder(world, tmp_path):
    assert KEY in run_in_copy(world, tmp_path, "grep -r LLM deploy")


# ---------------------------------------------------------------- rg's file types


@pytest.fixture(scope="module")
def typed_world(tmp_path_factory) -> dict[str, Path]:
    """Env files rg reads only when given a type: `cfg/.env` and `cfg/.env.json` are
    hidden, `docs/notes.env.txt` is read by `--type txt`."""
    world = policy_world(tmp_path_factory.mktemp("types"))
    repo = world["repo"].resolve()
    (repo / "cfg").mkdir()
    (repo / "cfg" / ".env").write_text("LLM_API_KEY=sk-repo-key\n")
    (repo / "cfg" / ".env.json").write_text('{"LLM_API_KEY": "sk-repo-key"}\n')
    (repo / "cfg" / "app.json").write_text("{}\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "notes.env.txt").write_text("LLM_API_KEY=sk-repo-key\n")
    return world | {"repo": repo}


TYPE_ROWS: list[tuple[str, str]] = [
    # A type's globs whitelist the hidden files they match, as `-g` does.
    ("rg -t json LLM cfg", ASK),
    ("rg -tjson LLM cfg", ASK),
    ("rg --type=json LLM cfg", ASK),
    ("rg --type json LLM cfg", ASK),
    ("rg --type-add x:.env -tx LLM cfg", ASK),
    # `--type` is no abbreviation of `--type-list`: LLM is the pattern, docs is read.
    ("rg --type txt LLM docs", ASK),
    ("rg --type txt LLM", ASK),
    ("rg LLM cfg", RUN),
    ("rg -T json LLM cfg", RUN),
    ("rg -t py LLM src", RUN),
    ("rg --type py LLM src", RUN),
]


@pytest.mark.parametrize(("command", "expected"), TYPE_ROWS, ids=[c for c, _ in TYPE_ROWS])
def test_rg_type_rows(typed_world, command, expected):
    assert verdict_in(typed_world, command).action == expected


@pytest.mark.parametrize(
    "command",
    ["rg -t json LLM cfg", "rg --type-add x:.env -tx LLM cfg", "rg --type txt LLM"],
)
def test_rg_types_read_the_env_files(typed_world, tmp_path, command):
    if not shutil.which("rg"):
        pytest.skip("rg is not installed")
    assert KEY in run_in_copy(typed_world, tmp_path, command)


# ---------------------------------------------------------------- programs a program runs

RUNS_ROWS: list[tuple[str, str]] = [
    ("diff -l a.txt b.txt", ASK),  # the output goes through pr
    ("diff --paginate a.txt b.txt", ASK),
    ("diff --pag a.txt b.txt", ASK),
    ("diff -ul a.txt b.txt", ASK),
    ("diff -u a.txt b.txt", RUN),
    ("diff --label x a.txt b.txt", RUN),
]


@pytest.mark.parametrize(("command", "expected"), RUNS_ROWS, ids=[c for c, _ in RUNS_ROWS])
def test_runs_rows(world, command, expected):
    assert verdict_in(world, command).action == expected


def test_diff_paginate_starts_pr(world, tmp_path):
    if not shutil.which("strace"):
        pytest.skip("strace is needed to see the program start")
    log = tmp_path / "trace"
    run_in_copy(
        world,
        tmp_path,
        [
            "strace",
            "-f",
            "-qq",
            "-e",
            "trace=execve",
            "-o",
            str(log),
            "diff",
            "-l",
            "a.txt",
            "b.txt",
        ],
    )
    assert '/pr"' in log.read_text()


def test_rg_reads_the_ignore_files_above_the_repo(tmp_path):
    """rg reads `.ignore` and `.rgignore` in every folder above the one it searches, the
    repo's parents too: a `!.env` there shows it the .env it would skip."""
    world = policy_world(tmp_path)
    repo = world["repo"].resolve()
    world = world | {"repo": repo}
    assert verdict_in(world, "rg LLM").action == RUN
    (tmp_path / ".ignore").write_text("!.env\n")
    assert verdict_in(world, "rg LLM").action == ASK
    if shutil.which("rg"):
        done = subprocess.run(
            ["rg", "LLM"],
            check=False,
            cwd=repo,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        assert KEY in done.stdout


@pytest.mark.parametrize(
    "command",
    [*CONTROLS, "grep -r foo .", "cat *.txt", "rg foo", "rg -t py foo", "less a.txt"],
)
def test_controls_run_in_a_repo_without_env_files(tmp_path, command):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("foo\n")
    (repo / "b.txt").write_text("bar\n")
    (repo / "src" / "main.py").write_text("print('hi')\n")
    private = tmp_path / "private"
    (private / "home").mkdir(parents=True)
    (private / "tmp").mkdir()
    world = {"repo": repo.resolve(), "private": private.resolve()}
    assert verdict_in(world, command).action == RUN


# ---------------------------------------------------------------- links into .git


@pytest.fixture
def linked_git(tmp_path) -> dict[str, Path]:
    """A repo whose remote URL holds a token, with a link into its `.git` elsewhere."""
    world = policy_world(tmp_path)
    repo = world["repo"].resolve()
    url = "https://user:ghp_token1234567890@example.com/x/y.git"
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", url], check=True)
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.txt").write_text("guide\n")
    os.symlink("../.git", repo / "docs" / "gitdir")
    (repo / "notes").mkdir()
    os.symlink("../.git/config", repo / "notes" / "settings")
    return world | {"repo": repo}


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("grep -R ghp docs", ASK),
        ("grep -R ghp notes", ASK),
        ("diff -r docs src", ASK),
        ("rg -L ghp docs", ASK),
        ("grep -r ghp docs", RUN),  # -r follows no link met on the way
        ("grep -R guide docs/guide.txt", RUN),
        ("find -L docs -name config", RUN),  # names only
    ],
)
def test_a_link_into_git_is_git(linked_git, command, expected):
    assert verdict_in(linked_git, command).action == expected


def test_grep_follows_a_link_into_git_to_its_credential(linked_git):
    done = subprocess.run(
        ["grep", "-R", "ghp", "docs"],
        check=False,
        cwd=linked_git["repo"],
        capture_output=True,
        text=True,
    )
    assert "ghp_token1234567890" in done.stdout
