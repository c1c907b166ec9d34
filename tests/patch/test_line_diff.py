"""The one line diff against git's own, and the work it does on many repeated lines.

test_git_fidelity compares the writer with git on small random trees; here the
files are larger, from small alphabets, so that git's less common rules run
too: lines frequent in the other version left out of the search among absent
ones, the search cut short at its cost limit, runs slid to line up with the
other side or by the indent heuristic. All pairs go to one `git diff
--no-index` of two folders.
"""

from __future__ import annotations

import difflib
import itertools
import random
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hello_tui.patch.line_diff import hunk_groups, line_ops
from hello_tui.patch.types import Hunk
from hello_tui.patch.written_diff import text_diff, text_hunks
from tests.support.work import assert_linear_work

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


def test_the_writer_works_in_linear_time_on_thousands_of_blank_lines():
    # difflib's matcher (autojunk off) was quadratic in the repeated lines: 11 s for
    # these 20,000 lines, and 60 million lines of Python for the 5,000.
    assert_linear_work(lambda old, new: text_diff("f.py", old, new))


def test_repeated_lines_are_matched_not_rewritten():
    # Every third line is the same blank line, and every body line changes: the blank
    # lines still match and each change is its own small hunk.
    old = "".join(f"def f_{i}():\n    return {i}\n\n" for i in range(2000))
    new = old.replace("    return ", "    yield ")
    hunks = text_hunks(old, new)
    assert len(hunks) == 2000
    assert all(len(h.old_lines) == len(h.new_lines) == 1 for h in hunks)
    assert apply_hunks(old, hunks) == new
    # Nothing unique in common: still exact hunks.
    blanks = "".join(f"v{i}\n\n" for i in range(1000))
    renamed = blanks.replace("v", "w")
    assert apply_hunks(blanks, text_hunks(blanks, renamed)) == renamed


# ---------------------------------------------------------------- properties


def apply_hunks(old_text: str, hunks: list[Hunk]) -> str:
    """Hunks of git's lines (endings in `new_eols`) applied to a text."""
    lines = old_text.split("\n")
    keys = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    for hunk in sorted(hunks, key=lambda h: h.old_start, reverse=True):
        new = [line + (eol or "") for line, eol in zip(hunk.new_lines, hunk.new_eols or [])]
        keys[hunk.old_start : hunk.old_start + len(hunk.old_lines)] = new
    return "".join(keys)


line_text = st.sampled_from(["a", "b", "c", "def f():", "    return 1", "", "x = 2", "y\r"])
texts = st.lists(line_text, max_size=25).map(lambda ls: "".join(f"{line}\n" for line in ls))
texts_maybe_unended = st.tuples(texts, st.booleans()).map(
    lambda t: t[0][:-1] if t[1] and t[0] else t[0]
)


@settings(max_examples=100, deadline=None)
@given(old=texts_maybe_unended, new=texts_maybe_unended)
def test_text_hunks_turn_old_into_new(old: str, new: str):
    hunks = text_hunks(old, new)
    assert apply_hunks(old, hunks) == new
    assert [h.index for h in hunks] == list(range(len(hunks)))


@settings(max_examples=100, deadline=None)
@given(old=texts, new=texts, context=st.integers(0, 3))
def test_line_ops_tile_both_versions_and_group_like_difflib(old, new, context):
    a, b = old.splitlines(), new.splitlines()
    ops = line_ops(a, b)
    if not ops:
        assert a == b == []
        return
    assert (ops[0][1], ops[0][3]) == (0, 0)
    assert (ops[-1][2], ops[-1][4]) == (len(a), len(b))
    for (_, _, i2, _, j2), (_, i1, _, j1, _) in itertools.pairwise(ops):
        assert (i2, j2) == (i1, j1)  # contiguous on both sides
    for tag, i1, i2, j1, j2 in ops:
        assert (a[i1:i2] == b[j1:j2]) if tag == "equal" else (i1 < i2 or j1 < j2)
    # git's grouping into hunks is difflib's rule, on the same opcodes (difflib keeps
    # an empty run of context where there is none; a hunk has no such op).
    reference = difflib.SequenceMatcher(None, a, b)
    reference.opcodes = ops  # difflib groups whatever opcodes it holds
    expected = [
        [op for op in group if op[0] != "equal" or op[2] > op[1]]
        for group in reference.get_grouped_opcodes(context)
    ]
    assert hunk_groups(ops, context) == expected
