"""Programs get their arguments after bash's expansions: the policy judges those.

bash joins line continuations, then expands braces, then globs, and only then
does a program parse its options. A check that reads the words as written
sees `sort {a.txt,-o,out.txt}` as three operands where sort gets `-o out.txt`,
and `cat .e\\<newline>nv` as two names where cat gets `.env`.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hello_tui.tools.shell.parse import brace_expand, join_continuations
from hello_tui.tools.shell.policy import classify

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / "cfg").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".env").write_text("SECRET=planted-secret\n")
    (root / "cfg" / ".env.prod").write_text("TOKEN=planted-token\n")
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    return root.resolve()


def bash(repo: Path, command: str) -> str:
    done = subprocess.run(
        ["bash", "-c", command], cwd=repo, capture_output=True, text=True, timeout=20, check=False
    )
    return done.stdout + done.stderr


# (command, what real bash makes it do: a file it creates, or text it prints)
ATTACKS = [
    ("sort {a.txt,-o,out.txt}", "out.txt"),
    ("find {.,-name,a.txt,-fprint,out.txt}", "out.txt"),
    ("git log {--output=out.txt,-1}", "out.txt"),
    ("grep {-r,SECRET}", "planted-secret"),
    ("cat .e{n..n}v", "planted-secret"),
    ("head .{e..e}nv", "planted-secret"),
    ("cat .e{l..n..2}v", "planted-secret"),
    ("cat .e\\\nnv", "planted-secret"),
    ("sort a.txt -\\\no out.txt", "out.txt"),
    ("git log -1 -\\\n-output=out.txt", "out.txt"),
    ('cat ".e\\\nnv"', "planted-secret"),
    ("uniq {a,b}.txt", "b.txt"),
    # A backslash in a bracket quotes the next character; tree-sitter splits `.e[\n]v` in
    # two at the bracket, bash reads one word.
    ("cat .e[\\n]v", "planted-secret"),
    ("cat .e[n\\]]v", "planted-secret"),
]


@pytest.mark.parametrize(("command", "effect"), ATTACKS)
def test_what_bash_makes_of_the_words_is_judged(repo, command, effect):
    verdict = classify(command, repo, repo)
    assert verdict.action != "run", verdict.reason
    # The row is a real attack: bash does it.
    before = (repo / "b.txt").read_text()
    printed = bash(repo, command)
    if effect.endswith(".txt"):
        assert (repo / effect).exists() and (
            effect != "b.txt" or (repo / effect).read_text() != before
        )
    else:
        assert effect in printed


def test_a_glob_that_matches_files_named_like_options_is_judged_as_those_options(repo):
    (repo / "-o").write_text("")
    assert classify("sort *", repo, repo).action != "run"
    (repo / "-o").unlink()
    (repo / "-r").write_text("")
    assert classify("grep TOKEN *", repo, repo).action != "run"
    assert "planted-token" in bash(repo, "grep TOKEN *")


def test_a_glob_that_counts_as_two_operands_is_judged_as_two(repo):
    assert classify("uniq [ab].txt", repo, repo).action != "run"


@pytest.mark.parametrize(
    "command",
    [
        "cat {a,b}.txt",
        "cat *.txt",
        "grep -n a *.txt",
        "wc -l [ab].txt",
        "echo {1..3}",
        "grep -n a \\\n  a.txt b.txt",
        "ls cfg",
        "cat a'*'",  # a quoted star is a star: no such file, nothing read
        'cat "a".t[x]t',
    ],
)
def test_ordinary_expansions_still_run(repo, command):
    verdict = classify(command, repo, repo)
    assert verdict.action == "run", verdict.reason


def test_a_refusal_names_the_pattern_not_what_it_matched_outside(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private-name.txt").write_text("x\n")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "link").symlink_to(outside)
    verdict = classify("cat link/*.txt", root, root)
    assert verdict.action == "refuse"
    assert "private-name" not in verdict.reason


@pytest.mark.parametrize(
    "text",
    [
        ".e{n..n}v",
        "{a..e..2}",
        "{01..03}",
        "{1..3..-1}",
        "{3..1}",
        "{a..5}",
        "{-01..2}",
        "{007..9}",
        "{+1..3}",
        "{e..a..2}",
        "{10..1..3}",
        "{a,b}{1..2}",
        "a{b}c",
        "{a,{b,c}}",
        "{a,}x",
    ],
)
def test_brace_expansion_agrees_with_bash(text):
    real = subprocess.run(
        ["bash", "-c", f"printf '%s\\n' {text}"], capture_output=True, text=True, check=True
    ).stdout.split("\n")[:-1]
    assert brace_expand(text) == real


@pytest.mark.parametrize(
    ("command", "joined"),
    [
        ("cat .e\\\nnv", "cat .env"),
        ('echo "a\\\nb"', 'echo "ab"'),
        ("echo 'a\\\nb'", "echo 'a\\\nb'"),  # single quotes keep it
        ("echo $'a\\\nb'", "echo $'a\\\nb'"),
        ("ls # note \\\ncat .env", "ls # note \\\ncat .env"),  # a comment ends at the newline
        ("echo a\\\\\ncat .env", "echo a\\\\\ncat .env"),  # an escaped backslash, then a newline
        ("a\\\n#b", "a#b"),  # joined, `#` is inside a word: no comment
        ("echo $(cat .e\\\nnv)", "echo $(cat .env)"),
    ],
)
def test_line_continuations_are_joined_as_bash_joins_them(command, joined):
    assert join_continuations(command) == joined


def test_a_command_after_a_continued_comment_is_still_judged(repo):
    command = "ls # note \\\ncat .env"
    assert "planted-secret" in bash(repo, command)
    assert classify(command, repo, repo).action != "run"


def test_a_word_tree_sitter_splits_is_never_run_as_two_arguments(repo):
    # Run directly, the two pieces would be two arguments; bash gives the program one.
    verdict = classify("ls x[\\n]y a.txt", repo, repo)
    assert verdict.argv is None
    assert classify("ls a.txt b.txt", repo, repo).argv == ["ls", "a.txt", "b.txt"]
