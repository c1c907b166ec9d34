"""awk programs that hid a file read, a command or a file write from the policy.

awk's lexer decides whether a `/` divides or opens a regex by what came before
it: after an operand (a name, number, string, `)`, `]`, `getline`) it divides,
anywhere else (after `$` too) a regex starts. Reading it the other way turns a
quote inside the regex into the start of a string, which hides what follows.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hello_tui.tools.shell.awk import analyse, tokenize
from hello_tui.tools.shell.policy import classify

RUN, ASK, REFUSE = "run", "ask", "refuse"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("awk") / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "a.txt").write_text("hello\n")
    (root / ".env").write_text("SECRET=abc\n")
    return root.resolve()


FINDINGS: list[tuple[str, str]] = [
    # getline reads into any lvalue: a field of a whole expression, a field of a field
    ("awk 'BEGIN{getline $(1) < \".env\"; print $0}'", ASK),
    ("awk 'BEGIN{getline $$0 < \".env\"; print $0}'", ASK),
    ("awk 'BEGIN{getline $(1) < \"/etc/hostname\"; print $0}'", REFUSE),
    ("awk 'BEGIN{getline $NF < \".env\"}'", ASK),
    ("awk 'BEGIN{getline $i++ < \".env\"}'", ASK),
    ("awk 'BEGIN{getline $-i < \".env\"}'", ASK),
    ("awk 'BEGIN{getline $f(1) < \".env\"}'", ASK),
    ("awk 'BEGIN{getline a[i + 1] < \".env\"; print a[1]}'", ASK),
    ("awk 'BEGIN{getline a[1][2] < \".env\"}'", ASK),
    # getline is an operand: the `/` after it divides
    ("awk '{ x = getline / 1; system(\"touch C3\"); y = 1 / 1 }' a.txt", ASK),
    ('awk \'{ x = getline / 1; print "x" > "out"; y = 1 / 1 }\' a.txt', ASK),
    # after `$` an operand is expected: `$/re/` is `$` of a match result
    ('awk \'{ x = $/"/; system("touch C12"); y = "/" # "\n}\' a.txt', ASK),
    # a statement follows an if/while/for condition, so a regex may start there
    ('awk \'BEGIN{ if (1) /"/ ; system("id"); y = "/" }\'', ASK),
    ('awk \'{ while (0) /"/ ; system("id"); y = "/" }\' a.txt', ASK),
    # mawk reads a regex after a postfix ++ and after a bare length, gawk divides
    ('awk \'BEGIN{ x++ /"/ ; system("id"); y = "/" }\'', ASK),
    ('awk \'{ n = length /"/ ; system("id"); y = "/" }\' a.txt', ASK),
    # mawk writes print > "-" to a file named -
    ('awk \'BEGIN{print "hi" > "-"}\'', ASK),
    ("awk '{print > \"-\"}' a.txt", ASK),
]

LEGIT: list[tuple[str, str]] = [
    ("awk '{print $1/2}' a.txt", RUN),
    ("awk '/x/{n++} END{print n}' a.txt", RUN),
    ("awk -F: '{print $NF}' a.txt", RUN),
    ("awk '{print $NF/2, ($1)/2, a[1]/2, NR/3}' a.txt", RUN),
    ("awk '{ s += $2 } END { print s / NR }' a.txt", RUN),
    ("awk '$0 ~ /a\\/b/ { print }' a.txt", RUN),
    ("awk '{ if ($1 /2 > 1) print }' a.txt", RUN),
    ("awk '{ if (/x/) n++; else m++ } END { print n, m }' a.txt", RUN),
    ("awk '{ n++ } END { print n }' a.txt", RUN),
    ("awk '{ print length($0) / 2 }' a.txt", RUN),
    ("awk '{ while ((getline line) > 0) n++ } END { print n }' a.txt", RUN),
    ('awk \'{ print > "/dev/stdout"; print > "/dev/stderr" }\' a.txt', RUN),
]


@pytest.mark.parametrize(("command", "expected"), FINDINGS + LEGIT)
def test_awk_verdict(repo, command, expected):
    assert classify(command, repo, repo).action == expected


@pytest.mark.parametrize(
    ("program", "kinds"),
    [
        ("x = getline / 1", ["name", "op", "keyword", "op", "number"]),
        ("$/a/", ["op", "regex"]),
        ("$1/2", ["op", "number", "op", "number"]),
        ("$NF/2", ["op", "name", "op", "number"]),
        ("a[1]/2", ["name", "op", "number", "op", "op", "number"]),
        ("if (x) /a/", ["keyword", "op", "name", "op", "regex"]),
        ("f(x) /2", ["name", "op", "name", "op", "op", "number"]),
        ("++/a/", ["op", "regex"]),
    ],
)
def test_slash_after(program, kinds):
    assert [t.kind for t in tokenize(program)] == kinds


@pytest.mark.parametrize(
    "program",
    [
        'BEGIN { getline $(1) < ".env" }',
        'BEGIN { getline $$0 < ".env" }',
        'BEGIN { getline $(i + 1)++ < ".env" }',
        'BEGIN { getline a["k" i] < ".env" }',
        "BEGIN { x++ / 2 }",
        "{ print length / 2 }",
        'BEGIN { print 1 > "-" }',
    ],
)
def test_awk_program_flagged(program):
    assert analyse(program).problem is not None


def test_getline_reads_the_file_after_the_lvalue():
    assert analyse('BEGIN { getline $(1) < "/etc/hostname" }').read_targets == ["/etc/hostname"]
    assert analyse('BEGIN { getline $$0 < "x" }').read_targets == ["x"]
