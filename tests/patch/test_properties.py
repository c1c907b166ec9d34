"""Properties: diff(a, b) applied to a gives b; corrupted patches apply fully or change nothing."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, find, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from hello_tui.config import load_settings
from hello_tui.patch import (
    PatchError,
    codex_patch_text,
    commit_plan,
    plan_patch_text,
    undo_last,
)
from hello_tui.patch.lines import split_lines
from hello_tui.patch.written_diff import text_diff

from .conftest import snapshot

FAST = hyp_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# A small vocabulary makes repeated lines (and so ambiguity) common.
LINE = st.one_of(
    st.sampled_from(
        [
            "",
            "x",
            "y",
            "x  ",
            "  x",
            "}",
            "caf\u00e9",
            "\u201cq\u201d",
            "a \u2014 b",
            "\u4e2d\u6587",
            "\U0001f600",
        ]
    ),
    st.text(
        st.characters(
            blacklist_categories=("Cs", "Cc"),
            blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
        ),
        max_size=6,
    ),
)
EOLS = ("\n", "\r\n", "\r")


@st.composite
def text_pair(draw, mixed: bool = False) -> tuple[str, str]:
    """(a, b) where b is an edit of a: kept lines keep their ending, new ones take a's first ending.

    With `mixed`, a's lines end in a mix of LF, CRLF and CR. A patch's text cannot say
    which ending a line has, so (a, b) pairs whose diff re-adds a line with a
    non-default ending are only used where the outcome need not equal b.
    """
    style = draw(st.sampled_from(EOLS + (("mixed",) if mixed else ())))
    a_lines = draw(st.lists(LINE, max_size=10))
    a_eols = [draw(st.sampled_from(EOLS)) if style == "mixed" else style for _ in a_lines]
    if a_lines and not draw(st.booleans()):
        a_eols[-1] = ""
    default = next((e for e in a_eols if e), "\n")
    b: list[tuple[str, str]] = []
    for line, eol in zip(a_lines, a_eols):
        b += [(x, default) for x in draw(st.lists(LINE, max_size=2))]
        action = draw(st.sampled_from(["keep", "keep", "delete", "replace"]))
        if action == "keep":
            b.append((line, eol))
        elif action == "replace":
            b.append((draw(LINE), default))
    b += [(x, default) for x in draw(st.lists(LINE, max_size=3))]
    b = [(line, eol or default) for line, eol in b]
    if b and not draw(st.booleans()):
        b[-1] = (b[-1][0], "")
    a = "".join(x + e for x, e in zip(a_lines, a_eols))
    b_text = "".join(x + e for x, e in b)
    # A line ending in CR followed by an empty line ending in LF reads back as one CRLF:
    # such texts do not have the line structure they were built with.
    assume(split_lines(a) == (a_lines, a_eols))
    assume(split_lines(b_text) == ([x for x, _ in b], [e for _, e in b]))
    return a, b_text


def _apply_to_fresh_repo(files: dict[str, str], patch_text: str) -> tuple[dict, dict, object]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        for name, content in files.items():
            (repo / name).write_bytes(content.encode("utf-8"))
        s = load_settings(repo, environ={})
        before = snapshot(repo)
        try:
            plan = plan_patch_text(patch_text, s)
            commit_plan(plan, s)
        except PatchError as exc:
            return before, snapshot(repo), exc
        after = snapshot(repo)
        predicted = {**before}
        for fp in plan.files:
            predicted[fp.move_to or fp.path] = fp.new_bytes
        undo_last(s)
        restored = snapshot(repo)
        return before, after, (plan, predicted, restored)


@FAST
@given(text_pair())
def test_codex_patch_turns_a_into_b(pair):
    a, b = pair
    patch = codex_patch_text("f.txt", a, b)
    if not patch:
        assert a == b
        return
    _, after, outcome = _apply_to_fresh_repo({"f.txt": a}, patch)
    assert not isinstance(outcome, Exception), f"{outcome}\n{patch!r}"
    assert after["f.txt"] == b.encode("utf-8")


@FAST
@given(text_pair())
def test_unified_diff_turns_a_into_b(pair):
    a, b = pair
    if a == b:
        return
    patch = text_diff("f.txt", a, b)
    _, after, outcome = _apply_to_fresh_repo({"f.txt": a}, patch)
    assert not isinstance(outcome, Exception), f"{outcome}\n{patch!r}"
    assert after["f.txt"] == b.encode("utf-8")


def _corrupt(draw, patch: str) -> str:
    lines = patch.split("\n")
    i = draw(st.integers(0, max(len(lines) - 1, 0)))
    kind = draw(st.sampled_from(["mutate", "delete", "duplicate", "swap", "truncate", "prefix"]))
    if kind == "mutate" and lines[i]:
        j = draw(st.integers(0, len(lines[i]) - 1))
        lines[i] = (
            lines[i][:j] + draw(st.sampled_from(["z", " ", "", "\t", "\u2014"])) + lines[i][j + 1 :]
        )
    elif kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "swap" and i + 1 < len(lines):
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif kind == "truncate":
        lines = lines[:i]
    elif kind == "prefix" and lines[i]:
        lines[i] = draw(st.sampled_from(["+", "-", " ", "@@ ", "*** "])) + lines[i][1:]
    return "\n".join(lines)


@FAST
@given(text_pair(mixed=True), text_pair(mixed=True), st.data())
def test_corrupted_patches_apply_fully_or_change_nothing(pair1, pair2, data):
    (a1, b1), (a2, b2) = pair1, pair2
    parts = [codex_patch_text("one.txt", a1, b1), codex_patch_text("two.txt", a2, b2)]
    body = "".join(p.replace("*** Begin Patch\n", "").replace("*** End Patch\n", "") for p in parts)
    if not body:
        return
    patch = _corrupt(data.draw, "*** Begin Patch\n" + body + "*** End Patch\n")
    before, after, outcome = _apply_to_fresh_repo({"one.txt": a1, "two.txt": a2}, patch)
    if isinstance(outcome, Exception):
        assert after == before, "a failed patch changed the tree"
        return
    _plan, predicted, restored = outcome
    assert after == predicted, "the tree is not what the plan said it would be"
    assert restored == before, "undo did not restore the tree"


def test_generator_makes_every_kind_of_text():
    # The properties above would prove little if the generator stopped producing these.
    wanted = {
        "crlf": lambda p: "\r\n" in p[0],
        "lone cr": lambda p: "\r" in p[0].replace("\r\n", ""),
        "no final newline": lambda p: p[0] != "" and not p[0].endswith(("\n", "\r")),
        "non-ascii": lambda p: any(ord(c) > 127 for c in p[0] + p[1]),
    }
    for name, condition in wanted.items():
        assert find(
            text_pair(mixed=True),
            condition,
            settings=hyp_settings(max_examples=2000, database=None),
        ), name


def test_split_lines_endings():
    assert split_lines("a\r\nb\rc") == (["a", "b", "c"], ["\r\n", "\r", ""])
