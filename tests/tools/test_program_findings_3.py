"""Read-only programs judged by what their less common options really read or run: the
lists of magic files `file -m` takes and the decompressors `file -z` starts. Where the
harm needs the real tool, the command is also run with bash in a copy of the world."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hello_tui.tools.shell.policy import PolicyContext, classify
from tests.tools.helpers import judging_environment, policy_world, run_in_copy, verdict_in

RUN, ASK, REFUSE = "run", "ask", "refuse"
KEY = "sk-repo-key"
CANARY = "outside-secret"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    world = policy_world(tmp_path_factory.mktemp("findings3"))
    repo = world["repo"]
    (repo / "b.txt").write_text("world\n")
    (repo / "magic").mkdir()
    (repo / "magic" / "plain").write_text("0 string hello greeting\n")
    (repo / "keys").mkdir()
    os.link(repo / ".env", repo / "keys" / "settings")
    (repo / "away").mkdir()
    os.symlink(world["outside"] / "secret.txt", repo / "away" / "notes")
    (repo / "deep" / "x" / "y" / "z").mkdir(parents=True)
    os.symlink("x/y/z", repo / "deep" / "l")  # `cd l/../..` is `deep/..` to bash
    return world | {"repo": repo.resolve()}


CONTROLS = [
    "cat a.txt",
    "grep -n foo a.txt",
    "ls | sort",
    "cat *.txt",
    "wc -l a.txt",
    "head -n 3 a.txt",
    "stat a.txt",
    "diff a.txt b.txt",
    "date",
    "pwd",
    "file a.txt",
    "file -m magic/plain a.txt",
]


@pytest.mark.parametrize("command", CONTROLS)
def test_controls_still_run(world, command):
    assert verdict_in(world, command).action == RUN


# ------------------------------------------------------------------ file -m, file -z

FILE_ROWS: list[tuple[str, str]] = [
    # `-m` takes a colon-separated list: every name in it is read.
    ("file -m a.txt:../outside/secret.txt a.txt", REFUSE),
    ("file --magic-file=a.txt:.env a.txt", ASK),
    ("file -m magic/plain:keys/settings a.txt", ASK),
    ("file -m a.txt:away/notes a.txt", REFUSE),
    # A folder given as magic is every file in it, links followed.
    ("file -m . a.txt", ASK),
    ("file -m keys a.txt", ASK),
    ("file -m away a.txt", REFUSE),
    ("file -m magic a.txt", RUN),
    # `-z` starts the decompressors libmagic was built without.
    ("file -z a.txt", ASK),
    ("file -bZ a.txt", ASK),
    ("file --uncompress a.txt", ASK),
    ("file --uncompress-noreport a.txt", ASK),
]


@pytest.mark.parametrize(("command", "expected"), FILE_ROWS, ids=[c for c, _ in FILE_ROWS])
def test_file_rows(world, command, expected):
    assert verdict_in(world, command).action == expected


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("file -m a.txt:away/notes a.txt", CANARY),
        ("file -m a.txt:.env a.txt", KEY),
        ("file -m keys a.txt", KEY),
        ("file -m away a.txt", CANARY),
    ],
)
def test_file_prints_the_lines_of_its_magic_files(world, tmp_path, command, shown):
    if not shutil.which("file"):
        pytest.skip("file is needed")
    assert shown in run_in_copy(world, tmp_path, command)


# ------------------------------------------------------------------ ${!name} indirection

INDIRECTION_ROWS: list[tuple[str, str]] = [
    # `$_` is the last word of the command before: bash expands the variable it names,
    # evaluating the subscript in that name as arithmetic, whatever operator follows.
    ("echo 'a[$(id)]' >/dev/null; echo ${!_}", ASK),
    ("echo 'a[$(id)]' >/dev/null; echo ${!_:-x}", ASK),
    ("echo 'a[$(id)]' >/dev/null; echo \"${!_#x}\"", ASK),
    ("echo 'a[$(id)]' >/dev/null; echo ${!_@Q}", ASK),
    ("echo ${!x[0]}", ASK),
    # Lists of names and keys, and the parameter the last argument is, name no variable.
    ("echo ${!GIT*}", RUN),
    ("echo ${!GIT@}", RUN),
    ("echo ${!x[@]}", RUN),
    ("echo ${!#}", RUN),
    ("echo ${#PWD}", RUN),
]


@pytest.mark.parametrize(
    ("command", "expected"), INDIRECTION_ROWS, ids=[c for c, _ in INDIRECTION_ROWS]
)
def test_indirection_rows(world, command, expected):
    assert verdict_in(world, command).action == expected


def test_an_indirection_through_the_last_argument_runs_its_subscript(world, tmp_path):
    command = "echo 'a[$(touch made-by-subscript)]' >/dev/null; echo ${!_:-x}"
    assert verdict_in(world, command).action != RUN
    run_in_copy(world, tmp_path, command)
    assert (tmp_path / "copy" / "made-by-subscript").exists()


# ------------------------------------------------------------------ bash's own variables

DYNAMIC_ROWS: list[tuple[str, str]] = [
    # `$_` is the last word of the command before it, not the empty environment value.
    ("echo .env >/dev/null; cat $_", ASK),
    ('true .env; head -n 1 "$_"', ASK),
    ("echo ../outside/secret.txt >/dev/null; cat ${_}", ASK),
    ("echo 'a[$(id)]' >/dev/null; [[ $_ -eq 0 ]]", ASK),
    ("echo 'a[$(id)]' >/dev/null; test -v \"$_\"", ASK),
    # bash sets SHELL to the login shell when the environment has none.
    ("cat $SHELL", ASK),
    # Printed, they are harmless.
    ("echo $_", RUN),
    ('echo "$SHELL"', RUN),
]


@pytest.mark.parametrize(("command", "expected"), DYNAMIC_ROWS, ids=[c for c, _ in DYNAMIC_ROWS])
def test_bash_variable_rows(world, command, expected):
    assert verdict_in(world, command).action == expected


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("echo .env >/dev/null; cat $_", KEY),
        ('true .env; head -n 1 "$_"', KEY),
        ("echo away/notes >/dev/null; cat $_", CANARY),
    ],
)
def test_the_last_argument_names_the_file_read(world, tmp_path, command, shown):
    assert verdict_in(world, command).action != RUN
    assert shown in run_in_copy(world, tmp_path, command)


# ------------------------------------------------------------------ /proc/self

PROC_ROWS: list[tuple[str, str]] = [
    # /proc/self is whoever resolves it: the policy, which may sit in another folder than
    # the command (started in a subfolder of the repo, or after a `cd`).
    ("cat /proc/self/cwd/../outside/secret.txt", REFUSE),
    ("cat /proc/thread-self/cwd/../outside/secret.txt", REFUSE),
    ("cat /dev/fd/../cwd/../outside/secret.txt", REFUSE),
    ("cat /dev/../proc/self/cwd/a.txt", REFUSE),
    ("head -n 1 /proc/self/cwd/../outside/s*", REFUSE),
    ("cd /proc/self/cwd", REFUSE),
    ("cat /dev/stdin", RUN),
    ("cat a.txt > /dev/null", RUN),
]


@pytest.mark.parametrize(("command", "expected"), PROC_ROWS, ids=[c for c, _ in PROC_ROWS])
def test_proc_self_rows(world, monkeypatch, command, expected):
    monkeypatch.chdir(world["repo"] / "magic")  # the policy's own folder: one level down
    assert verdict_in(world, command).action == expected


def test_proc_self_is_the_commands_folder_not_the_policys(world, monkeypatch):
    command = "cat /proc/self/cwd/../outside/secret.txt"
    monkeypatch.chdir(world["repo"] / "magic")
    assert verdict_in(world, command).action == REFUSE
    done = subprocess.run(
        ["bash", "-c", command],
        check=False,
        cwd=world["repo"],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert CANARY in done.stdout


def test_a_link_into_proc_self_is_refused(tmp_path, monkeypatch):
    world = policy_world(tmp_path)
    repo = world["repo"].resolve()
    (repo / "sub").mkdir()
    os.symlink("/proc/self/cwd/../outside/secret.txt", repo / "notes")
    monkeypatch.chdir(repo / "sub")
    context = PolicyContext(environment=judging_environment(world), private_dir=world["private"])
    assert classify("cat notes", repo, repo, context).action == REFUSE


# ------------------------------------------------------------------ what a command sets itself

SETS_ROWS: list[tuple[str, str]] = [
    # `c\d` and `c''d` are cd to bash: after them $PWD is the new folder.
    ('c\\d ..; cat "$PWD/../outside/secret.txt"', ASK),
    ("c''d ..; cat $PWD/.env", ASK),
    ("command c\\d ..; cat $PWD/.env", ASK),
    # `${x[0]:=v}` sets element 0, which `$x` is.
    ("echo ${x[0]:=.env} >/dev/null; cat $x", ASK),
    ("echo ${x[0]-.env}; cat a.txt", RUN),
    ("cat $PWD/a.txt", RUN),
]


@pytest.mark.parametrize(("command", "expected"), SETS_ROWS, ids=[c for c, _ in SETS_ROWS])
def test_what_the_command_sets_rows(world, command, expected):
    context = PolicyContext(environment=judging_environment(world), private_dir=world["private"])
    verdict = classify(command, world["repo"], world["repo"] / "magic", context)
    assert verdict.action == expected


@pytest.mark.parametrize(
    ("command", "shown"),
    [("c\\d ..; cat $PWD/.env", KEY), ("echo ${x[0]:=../.env} >/dev/null; cat $x", KEY)],
)
def test_the_real_shell_reads_what_the_command_set(world, command, shown):
    context = PolicyContext(environment=judging_environment(world), private_dir=world["private"])
    assert classify(command, world["repo"], world["repo"] / "magic", context).action != RUN
    done = subprocess.run(
        ["bash", "-c", command],
        check=False,
        cwd=world["repo"] / "magic",
        env=judging_environment(world),
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert shown in done.stdout


# ------------------------------------------------------------------ cd as bash does it

CD_ROWS: list[tuple[str, str]] = [
    # Without -P, bash takes `..` off the path as written: `cd l/../..` from deep/ is the
    # repo itself, not deep/x (where the link's target's parents are).
    ("cd l/../.. && cat ../outside/secret.txt", REFUSE),
    ("cd l/../..; head -n 1 ../outside/secret.txt", REFUSE),
    ("cd l/.. && cat ../a.txt", RUN),
    ("cd x/y && cd .. && ls", RUN),
]


@pytest.mark.parametrize(("command", "expected"), CD_ROWS, ids=[c for c, _ in CD_ROWS])
def test_cd_rows(world, command, expected):
    context = PolicyContext(environment=judging_environment(world), private_dir=world["private"])
    assert classify(command, world["repo"], world["repo"] / "deep", context).action == expected


def test_bash_cd_goes_up_from_the_links_name(world):
    command = "cd l/../.. && cat ../outside/secret.txt"
    done = subprocess.run(
        ["bash", "-c", command],
        check=False,
        cwd=world["repo"] / "deep",
        env=judging_environment(world),
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert CANARY in done.stdout


# ------------------------------------------------------------------ commands hidden in ${ }

HIDDEN_ROWS: list[tuple[str, str]] = [
    # The pattern of # % ^ , is expanded too: tree-sitter leaves it as text.
    ("echo ${PWD#$(id)}", ASK),
    ("echo ${PWD%%$(id)*}", ASK),
    ('echo "${PWD^^$(id)}"', ASK),
    ("echo ${HOME,$(id)}", ASK),
    ("echo ${PWD#${a[$(id)]}}", ASK),
    # In `[[ ]]`, compared words are expanded as much as tested files.
    ("[[ $PWD != ${PWD#$(id)} ]]", ASK),
    ("[[ a == ${PWD%`id`} ]]", ASK),
    ("[[ $PWD == *repo* ]]", RUN),
    ("[[ $PWD =~ (`id`) ]]", ASK),
    ("[[ $PWD =~ ^/(.*)$ ]]", RUN),
    # A here-string's word is expanded as an argument is.
    ("cat <<< ${PWD#$(id)}", ASK),
    ("cat <<< ${PWD#`id`}", ASK),
    ('cat <<< "$PWD"', RUN),
    # Inside double quotes, the single quotes of `${x:-'...'}` quote nothing.
    ("echo \"${x:-'$(id)'}\"", ASK),
    ("echo ${x:-'$(id)'}", RUN),
    ("echo ${PWD#\\$(id)}", RUN),
    ("echo ${PWD##*/}", RUN),
    ("echo ${PWD%/*}", RUN),
    ("echo \"${x:-'a'}\"", RUN),
]


@pytest.mark.parametrize(("command", "expected"), HIDDEN_ROWS, ids=[c for c, _ in HIDDEN_ROWS])
def test_hidden_command_rows(world, command, expected):
    assert verdict_in(world, command).action == expected


@pytest.mark.parametrize(
    "command",
    [
        "echo ${PWD#$(touch made-by-pattern)}",
        'echo "${HOME%$(touch made-by-pattern)}"',
        "echo \"${x:-'$(touch made-by-pattern)'}\"",
        "[[ $PWD != ${PWD#$(touch made-by-pattern)} ]]",
        "[[ $PWD =~ (`touch made-by-pattern`) ]]",
        "cat <<< ${PWD#$(touch made-by-pattern)}",
    ],
)
def test_bash_runs_the_command_in_the_expansion(world, tmp_path, command):
    assert verdict_in(world, command).action != RUN
    run_in_copy(world, tmp_path, command)
    assert (tmp_path / "copy" / "made-by-pattern").exists()
