"""Read-only programs used the way GNU tools really parse them: option values taken
as argmatch takes them, optional arguments only when attached, diff of two folders
reading the files inside them, and sed bracket expressions by POSIX rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hello_tui.tools.shell import globbing
from hello_tui.tools.shell.policy import PolicyContext, classify
from hello_tui.tools.shell.programs import analyse_sed
from tests.tools.helpers import policy_world

RUN, ASK, REFUSE = "run", "ask", "refuse"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    world = policy_world(tmp_path_factory.mktemp("findings"))
    repo, outside = world["repo"], world["outside"]
    (repo / "b.txt").write_text("world\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "c.txt").write_text("c\n")
    (repo / "linked").mkdir()
    os.symlink(outside / "secret.txt", repo / "linked" / "note")
    (repo / "cfg").mkdir()
    (repo / "cfg" / ".env.prod").write_text("TOKEN=x\n")
    return world | {"repo": repo.resolve()}


def verdict_of(world, command: str):
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(world["private"] / "home"),
        "TMPDIR": str(world["private"] / "tmp"),
        "LANG": "C.UTF-8",
    }
    context = PolicyContext(environment=env, private_dir=world["private"])
    return classify(command, world["repo"], world["repo"], context)


ROWS: list[tuple[str, str]] = [
    # grep -d takes any prefix of its value, as argmatch does (`r` and `re` are ambiguous).
    ("grep -d rec LLM .", ASK),
    ("grep -drecu LLM .", ASK),
    ("grep --directories=rec LLM .", ASK),
    ("grep --dir=recurse LLM .", ASK),
    ("grep -d recurse LLM src", RUN),
    ("grep -d skip LLM .", RUN),
    ("grep -d read LLM a.txt", RUN),
    ("grep -r x src", RUN),
    # diff of two folders reads the files directly inside them, dotfiles and links too.
    ("diff -N . sub", ASK),
    ("diff --new-file sub .", ASK),
    ("diff . sub", ASK),
    ("diff sub cfg", ASK),
    ("diff --unidirectional-new-file cfg sub", ASK),
    ("diff sub linked", REFUSE),
    ("diff linked a.txt", REFUSE),
    ("diff a.txt b.txt", RUN),
    ("diff a.txt sub", RUN),
    ("diff -u sub/c.txt a.txt", RUN),
    ("diff sub src", RUN),
    ("diff -r sub src", RUN),
    # date -I and --iso-8601 take a format only attached: the next word is not it.
    ("date -I -f .env", ASK),
    ("date -I -r .env", ASK),
    ("date --iso -f .env", ASK),
    ("date --iso-8601 -f .env", ASK),
    ("date -I -f /etc/passwd", REFUSE),
    ("date -I", RUN),
    ("date -Idate", RUN),
    ("date --iso-8601=seconds", RUN),
    ("date --rfc-3339 date", RUN),
    ("date -I -r a.txt", RUN),
    # sed: `[:alpha:]` inside a bracket does not end it, a first `]` is a member.
    ("echo Xtouch C13 | sed 's/[[:alpha:]/]/ /e\n#/p'", ASK),
    ("echo x | sed 's/[[=a=]/]/ /e\n#/p'", ASK),
    ("echo x | sed 's/[[.-.]/]/ /e\n#/p'", ASK),
    ("echo x | sed 's/[]/]/ /e\n#/p'", ASK),
    ("echo x | sed 's/[^]/]/ /e\n#/p'", ASK),
    ("echo x | sed 's/[[:alpha:]/]/ /w out.txt\n#/p'", ASK),
    ("sed 's/[[:space:]]*$//' a.txt", RUN),
    ("sed 's/[]]/x/g' a.txt", RUN),
    ("sed -n '/[[:digit:]]\\{3\\}/p' a.txt", RUN),
    ("sed 's/[/]/x/g;s/[[:upper:]]/y/' a.txt", RUN),
]


@pytest.mark.parametrize(("command", "expected"), ROWS, ids=[c[:80] for c, _ in ROWS])
def test_program_rows(world, command, expected):
    assert verdict_of(world, command).action == expected


@pytest.mark.parametrize(
    "script",
    ["s/[[:a/]/x/", "s/[[=a/]/x/", "s/[\n]/x/", "s/[[:alpha:]/"],
)
def test_sed_brackets_that_sed_rejects_are_not_guessed(script):
    assert analyse_sed(script).problem


@pytest.mark.parametrize(
    ("pattern", "name"),
    [(".e[\\n]v", ".env"), (".e[n\\]]v", ".env"), (".e[n\\]]v", ".e]v"), (".e[\\]n]v", ".env")],
)
def test_backslash_in_a_bracket_quotes_the_next_character(pattern, name):
    assert globbing.matches(pattern, name)
    assert not globbing.matches(pattern, ".e\\v")
