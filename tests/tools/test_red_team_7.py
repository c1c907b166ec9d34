"""Commands the policy let run unasked that read an env file, ran a program the command
line chose or named a file outside the repo, each judged and then proven with the real
terminal tool (policy and sandbox, every question declined).

- Words after a redirection of a list's or pipeline's last command: tree-sitter puts
  `a && cat 2>/dev/null .env` together as a list with `2>/dev/null .env` on it, `.env` a
  second target of the redirection; bash gives the word to `cat`, which printed the key.
- Text tree-sitter skips between tokens that bash reads. A carriage return, vertical tab
  or form feed: tree-sitter ends a word there, bash does not, so `cat .[e<CR>]nv` was two
  harmless words to the policy and to bash one glob that matches `.env`. A backslash
  before a blank that starts a word: tree-sitter skips it, so in `ls; cat a.txt \\ #x .env`
  it saw a comment after `a.txt`, and bash the word ` #x`, then `.env`; `ls; true \\ #; cmd`
  ran cmd. And tree-sitter's empty backquotes join the words around them across blanks:
  `ls; cat .env `` a` was the one harmless word `.enva` to the policy, `.env` and `a` to
  bash. And a word tree-sitter begins with the newline before an escaped character:
  `cat .env<NL>\\>x` was `cat` of one harmless word `.env<NL>>x` to the policy, two commands
  to bash, which printed the key; `cat a.txt<NL>\\sh -c cmd` ran cmd. And a `$` it leaves
  bare before a digit: `cat .env$x$1` was the harmless `.env$1` to the policy, `.env` to
  bash (`$1` is empty), and `cat .e$1nv` the harmless `.e` of a name `1nv`.
- Values bash sets as the command runs, taken for constants: `$!` (empty before a
  background job) was "0", so `cat .env$!` was the harmless `.env0`; `$-` (the flags,
  `hBc`) was "0", so `cat .git/[$-]onfig` matched nothing to the policy and the config
  with its token to bash; `$?` after a failing command and `${#name}` were "0" too.
- tree-sitter's number token takes bash's base notation (`2#x`): after `>&` the policy saw
  a descriptor copied and bash a file name, so `ls >&2#x` wrote the file `2#x` (which the
  sandbox stops; without Landlock the policy is all there is).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.helpers import policy_world, run_in_copy, verdict_in

RUN, ASK, REFUSE = "run", "ask", "refuse"
KEY = "sk-repo-key"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    world = policy_world(tmp_path_factory.mktemp("findings7"))
    return world | {"repo": world["repo"].resolve()}


CONTROLS = [
    "cat README.md",
    "cat a.txt",
    "grep -r foo src",
    "ls | sort",
    "git status",
    "git log",
    "git diff",
    "ls | sort 2>/dev/null",
    "git log 2>&1 | head -5",
    "cat a.txt && cat 2>/dev/null a.txt",
    "ls | grep 2>/dev/null a | sort -r",
    "cat 'a\rb'",  # in quotes a carriage return is part of the word to both
    "cat a.txt\\ #x",  # a backslash-space inside a word: one word ` #x` to both
    "cat a.txt # a comment \\ .env",
    "ls; [ $? -eq 0 ] && echo ok",
    "test $? -eq 0",
    "[[ $? == 0 ]]",
    'ls; echo "status: $? $$ $! $- ${#HOME}"',
    "cat a$#",
    "ls 3>&2 2>&1 >&3",
    "ls\ncat a.txt",
    "ls |\n sort",
    'echo "a\nb"',
    "echo a$",
    'grep "x$" a.txt',
]


@pytest.mark.parametrize("command", CONTROLS)
def test_controls_still_run(world, command):
    assert verdict_in(world, command).action == RUN


# ------------------------------------------- words after a list's or pipeline's redirection

TRAILING_ROWS = [
    ("cat a.txt && cat 2>/dev/null .env", ASK),
    ("cat a.txt | cat 2>/dev/null .env", ASK),
    ("cat a.txt || cat >/dev/null 2>&1 .env", ASK),
    ("ls && cat a.txt 2>/dev/null x >/dev/null .env", ASK),
    ("ls | cat 2>/dev/null .env | cat a.txt", ASK),
    ("ls | cat 2>/dev/null | cat 2>/dev/null .env", ASK),
    ("ls && find 2>/dev/null . -exec sh -c id ';'", ASK),
    ("ls && git 2>/dev/null -c alias.x='!id' x", ASK),
    ("ls && cat 2>/dev/null ../outside/secret.txt", REFUSE),
    ("! cat a.txt 2>/dev/null ../outside/secret.txt", REFUSE),
    ("[[ -f a.txt ]] 2>/dev/null cat .env", ASK),
]


@pytest.mark.parametrize(("command", "expected"), TRAILING_ROWS)
def test_words_after_a_trailing_redirection_are_the_last_commands(world, command, expected):
    verdict = verdict_in(world, command)
    assert verdict.action == expected, verdict


async def test_the_real_tool_does_not_print_an_env_file_named_after_a_redirection(world):
    from tests.tools.test_git_drivers import output, terminal

    result, approver = await terminal(world["repo"], "cat a.txt && cat 2>/dev/null .env")
    assert approver.asked
    assert KEY not in output(result)


async def test_the_real_tool_runs_no_alias_named_after_a_redirection(world):
    from tests.tools.test_git_drivers import output, terminal

    command = "ls && git 2>/dev/null -c alias.x='!echo RAN-ALIAS' x"
    result, approver = await terminal(world["repo"], command)
    assert approver.asked
    assert "RAN-ALIAS" not in output(result).replace(command, "")


# ------------------------------------------- blanks to tree-sitter, part of a word to bash

SPLIT_ROWS = [
    "cat .[e\r]nv",
    "cat .[e\v]nv",
    "grep -h K .[e\f]nv",
    "\rcat a.txt",
    "cat a.txt\r",
    "ls; cat a.txt \\ #x .env",
    "ls; cat a.txt \\\t#x .env",
    "ls; true \\ #; sh -c id",
    "ls; find . \\ #x -exec sh -c id ';'",
    "ls; cat .env `` a",
    "cat a.txt .env ``.e.e",
    "ls; cat a.txt `` .env",
    "cat .env\n\\>x",
    "cat a.txt\n\\sh -c id",
    "ls\n\\;cat .env",
    "cat .env$x$1",
    "cat .e$x$1nv",
    "cat .e$1nv",
]


@pytest.mark.parametrize("command", SPLIT_ROWS)
def test_text_tree_sitter_skips_asks(world, command):
    verdict = verdict_in(world, command)
    assert verdict.action == ASK, verdict


@pytest.mark.parametrize("command", [*SPLIT_ROWS[:3], SPLIT_ROWS[5], SPLIT_ROWS[9], "cat .env$x$1"])
async def test_the_real_tool_does_not_read_an_env_file_tree_sitter_skipped_to(world, command):
    from tests.tools.test_git_drivers import output, terminal

    result, approver = await terminal(world["repo"], command)
    assert approver.asked
    assert KEY not in output(result)


async def test_the_real_tool_runs_nothing_after_a_skipped_backslash_space(world):
    from tests.tools.test_git_drivers import output, terminal

    command = 'ls; true \\ #; echo RAN-"AFTER"-IT'
    result, approver = await terminal(world["repo"], command)
    assert approver.asked
    assert "RAN-AFTER-IT" not in output(result)


# --------------------------------------------------- values bash sets as the command runs

RUNTIME_ROWS = [
    "cat .env$!",
    "ls; cat .env$!",
    "cat .git/[$-]onfig",
    "ls nothing; cat $?",
    "cat [${#HOME}]",
    "grep -h K .env$!",
]


@pytest.mark.parametrize("command", RUNTIME_ROWS)
def test_a_value_bash_sets_as_it_runs_is_no_constant_in_a_path(world, command):
    verdict = verdict_in(world, command)
    assert verdict.action == ASK, verdict


async def test_the_real_tool_does_not_print_an_env_file_named_with_an_empty_job_id(world):
    from tests.tools.test_git_drivers import output, terminal

    result, approver = await terminal(world["repo"], "ls; cat .env$!")
    assert approver.asked
    assert KEY not in output(result)


TOKEN = "ghp_" + "r7" * 15


@pytest.fixture
def token_world(tmp_path) -> dict[str, Path]:
    """A world whose clone keeps a token in its remote's URL."""
    import subprocess

    world = policy_world(tmp_path)
    url = f"https://user:{TOKEN}@github.com/o/r"
    subprocess.run(["git", "-C", str(world["repo"]), "remote", "add", "origin", url], check=True)
    return world | {"repo": world["repo"].resolve()}


async def test_the_real_tool_does_not_glob_the_git_config_with_the_shell_flags(token_world):
    from tests.tools.test_git_drivers import output, terminal

    result, approver = await terminal(token_world["repo"], "cat .git/[$-]onfig")
    assert approver.asked
    assert TOKEN not in output(result)


# ---------------------------------------------------- a base-notation number after >&

BASE_NUMBER_ROWS = ["ls >&2#x", "cat a.txt >&16#ff", "ls && cat a.txt >&1#x"]


@pytest.mark.parametrize("command", BASE_NUMBER_ROWS)
def test_a_base_notation_number_after_a_duplication_is_a_file(world, command):
    verdict = verdict_in(world, command)
    assert verdict.action == ASK, verdict
    assert "writes to" in verdict.reason


def test_bash_writes_the_file_a_base_notation_number_names(world, tmp_path):
    run_in_copy(world, tmp_path, "ls >&2#x")
    assert (tmp_path / "copy" / "2#x").is_file()


async def test_the_real_tool_runs_no_line_tree_sitter_joined_to_a_word(world):
    from tests.tools.test_git_drivers import output, terminal

    command = 'cat .env\n\\sh -c "echo RAN-""IT"'
    result, approver = await terminal(world["repo"], command)
    assert approver.asked
    assert KEY not in output(result)
    assert "RAN-IT" not in output(result)
