"""The one line diff against git's own, and the work it does on many repeated lines.

test_git_fidelity compares the writer with git on small random trees; here the
files are larger, from small alphabets, so that git's less common rules run
too: lines frequent in the other version left out of the search among absent
ones, the search cut short at its cost limit, runs slid to line up with the
other side or by the indent heuristic. All pairs go to one `git diff
--no-index` of two folders.
"""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from hello_tui.patch.line_diff import hunk_groups, line_ops
from hello_tui.patch.written_diff import text_diff
from tests.support.work import lines_run

from .git_runner import git

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

ALPHABET = ["", "x", "y", "  x", "    y", "\tz", "}", "def f():", "    return 1", "  ", "a\r", "{"]


def _lines(rng: random.Random, words: list[str], count: int) -> list[str]:
    return [rng.choice(words) for _ in range(count)]


def _edited(rng: random.Random, lines: list[str], words: list[str], edits: int) -> list[str]:
    out = list(lines)
    for _ in range(edits):
        at = rng.randrange(len(out) + 1)
        out[at : at + rng.randrange(4)] = _lines(rng, words, rng.randrange(4))
    return out


def _pair(seed: int) -> tuple[str, str]:
    """Old and new text: an edited file, a moved block, or two unrelated texts."""
    rng = random.Random(seed)
    words = ALPHABET[: rng.randrange(2, len(ALPHABET) + 1)]
    words += [f"w{seed}_{k}" for k in range(rng.choice([0, 3, 40]))]
    old = _lines(rng, words, rng.randrange(0, 700))
    shape = seed % 3
    if shape == 0:
        new = _edited(rng, old, words, rng.randrange(1, 60))
    elif shape == 1:
        at, size = rng.randrange(len(old) + 1), rng.randrange(len(old) // 2 + 1)
        new = _edited(rng, old[at : at + size] + old[:at] + old[at + size :], words, 5)
    else:
        new = _lines(rng, words, rng.randrange(0, 700))
    old_text, new_text = ("".join(line + "\n" for line in side) for side in (old, new))
    if new_text and seed % 5 == 0:
        new_text = new_text[:-1]
    return old_text, new_text


def _hunks_of(diff: str) -> str:
    """A file's diff from its first `@@` on: the part the line diff decides."""
    at = diff.find("\n@@ ")
    return diff[at + 1 :] if at >= 0 else ""


@needs_git
def test_the_line_diff_is_gits_on_larger_files(tmp_path: Path):
    pairs = {f"{seed:03}": _pair(seed) for seed in range(90)}
    for side, k in (("a", 0), ("b", 1)):
        (tmp_path / side).mkdir()
        for name, texts in pairs.items():
            (tmp_path / side / name).write_bytes(texts[k].encode())
    out = git(tmp_path, "diff", "--no-index", "--no-color", "a", "b", check=False).stdout
    theirs = {}
    for section in re.split(r"^(?=diff --git )", out.decode(), flags=re.MULTILINE):
        if section:
            theirs[section.split("\n", 1)[0].rsplit("/", 1)[1]] = _hunks_of(section)
    for name, (old, new) in pairs.items():
        assert _hunks_of(text_diff("f", old, new)) == theirs.get(name, ""), name


def test_lines_match_with_their_endings_and_the_ops_tile_both_versions():
    a = ["a\n", "b\r\n", "c\n", "d"]
    b = ["a\n", "b\n", "c\n", "d\n"]
    ops = line_ops(a, b)
    assert ops == [
        ("equal", 0, 1, 0, 1),
        ("replace", 1, 2, 1, 2),
        ("equal", 2, 3, 2, 3),
        ("replace", 3, 4, 3, 4),
    ]
    assert line_ops([], []) == [] and line_ops([], ["x"]) == [("insert", 0, 0, 0, 1)]
    assert line_ops(["x"], []) == [("delete", 0, 1, 0, 0)]


def test_hunks_group_changes_at_most_twice_the_context_apart():
    a = [f"{k}\n" for k in range(30)]
    b = list(a)
    b[5], b[11], b[19] = "five\n", "eleven\n", "nineteen\n"  # 5 lines apart, then 7
    groups = hunk_groups(line_ops(a, b), 3)
    assert [(g[0][1], g[-1][2]) for g in groups] == [(2, 15), (16, 23)]
    assert [len([op for op in g if op[0] != "equal"]) for g in groups] == [2, 1]
    assert [(g[0][1], g[-1][2]) for g in hunk_groups(line_ops(a, b), 0)] == [
        (5, 6),
        (11, 12),
        (19, 20),
    ]


# ---------------------------------------------------------------- work, not time


def code_with_blank_lines(n_lines: int, edits: int) -> tuple[str, str]:
    """A file of small functions (one line in four is blank) and a copy with `edits`
    scattered changes that add, remove and replace blank and repeated lines."""
    rng = random.Random(n_lines)
    old: list[str] = []
    for k in range(n_lines // 4):
        old += [f"def f_{k}():", f"    return {k % 10}", "    pass", ""]
    new = list(old)
    for k in range(edits):
        at = rng.randrange(len(new))
        choices = ["", "    pass", f"    return {rng.randrange(10)}", f"x_{k} = 1"]
        new[at : at + rng.randrange(3)] = [rng.choice(choices) for _ in range(rng.randrange(3))]
    return "\n".join(old) + "\n", "\n".join(new) + "\n"


# Lines of Python a diff may run per line of its two versions (it runs about 50).
WORK_PER_LINE = 200


def linear_work(diff: Callable[[str, str], object]) -> None:
    """`diff` of 5,000 lines (1,250 blank) costs at most WORK_PER_LINE a line, and of
    20,000 lines (5,000 blank) at most six times that: linear, not quadratic (sixteen)."""
    small, large = (code_with_blank_lines(n, 50) for n in (5_000, 20_000))
    small_work = lines_run(lambda: diff(*small), budget=WORK_PER_LINE * 2 * 5_000)
    lines_run(lambda: diff(*large), budget=6 * small_work)


def test_the_writer_works_in_linear_time_on_thousands_of_blank_lines():
    # difflib's matcher (autojunk off) was quadratic in the repeated lines: 11 s for
    # these 20,000 lines, and 60 million lines of Python for the 5,000.
    linear_work(lambda old, new: text_diff("f.py", old, new))
