"""The review shows the hunks the note records: the display model's hunks are the writer's.

The review's unit is a run of changed lines (a hunk the user accepts or
declines), so its hunks are the writer's hunks without context (`-U0`): the
same ranges and `@@` lines, and its titles number them so. With the default
three lines of context the writer merges nearby runs into one hunk; the runs
of - and + lines inside its hunks are still exactly the review's hunks.
Checked for two texts (the backup viewer), a plan without hunks, and plans
with the engine's own hunks (a file written whole, an edit of it). The review
also stays linear in the lines on many repeated ones.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from hello_tui.config import load_settings
from hello_tui.patch import plan_file_change
from hello_tui.patch.types import FilePlan, Hunk, PatchPlan, Risk
from hello_tui.patch.written_diff import HunkDiff, diff_file, plan_changes
from hello_tui.widgets.diff_rows import FileDiff, build_file_diff, build_text_diff
from tests.support.work import assert_linear_work

_TITLE_RANGE = re.compile(r"hunk \d+/\d+  (-\S+ \+\S+)")

LINE = st.sampled_from(["", "x", "y", "  x", "def f():", "    return 1", "}", "a\r", "\tz"])


@st.composite
def texts(draw) -> str:
    lines = draw(st.lists(LINE, max_size=40))
    text = "".join(line + "\n" for line in lines)
    return text[:-1] if text and draw(st.booleans()) else text


def ranges(hunk: HunkDiff) -> tuple[int, int, int, int]:
    return hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count


def review_ranges(diff: FileDiff) -> list[tuple[int, int, int, int]]:
    """Each review hunk's 0-based old start and count, new start and count."""
    out, delta = [], 0
    for hunk in diff.hunks:
        out.append(
            (hunk.old_start, len(hunk.old_lines), hunk.old_start + delta, len(hunk.new_lines))
        )
        delta += len(hunk.new_lines) - len(hunk.old_lines)
    return out


def runs_of_changes(hunks: list[HunkDiff]) -> list[tuple[int, int, int, int]]:
    """The runs of - and + lines inside written hunks, as (old start, count, new start, count)."""
    out = []
    for hunk in hunks:
        old, new, run = hunk.old_start, hunk.new_start, None
        for line in [*hunk.lines, " end"]:
            if line.startswith("\\"):
                continue
            if line[0] == " ":
                if run:
                    out.append((run[0], old - run[0], run[1], new - run[1]))
                run = None
                old, new = old + 1, new + 1
                continue
            run = run or (old, new)
            old, new = (old + 1, new) if line[0] == "-" else (old, new + 1)
    return out


def assert_review_is_written(diff: FileDiff, plan: FilePlan, *, headers: bool = True) -> None:
    """The review's hunks are the writer's -U0 hunks (`headers`: their @@ lines too; a plan's
    own hunks keep the header their patch gave them) and the runs inside its -U3 hunks."""
    (change,) = plan_changes(PatchPlan(files=[plan], risk=Risk(high=False, reasons=[])))
    unified = diff_file(change, context=0).hunks
    if headers:
        assert [h.header for h in diff.hunks] == [h.header for h in unified]
    assert review_ranges(diff) == [ranges(h) for h in unified]
    titles = [_TITLE_RANGE.search(r.label).group(1) for r in diff.split_rows if r.kind == "header"]
    assert titles == [h.header.split(" @@")[0].removeprefix("@@ ") for h in unified]
    assert runs_of_changes(diff_file(change).hunks) == review_ranges(diff)


def _plan_of_texts(old: str, new: str) -> FilePlan:
    data = old.encode(), new.encode()
    return FilePlan(
        "f.py", "update", old_text=old, new_text=new, old_bytes=data[0], new_bytes=data[1]
    )


@settings(max_examples=150, deadline=None)
@given(old=texts(), new=texts())
def test_the_review_of_two_texts_shows_the_writers_hunks(old: str, new: str):
    diff = build_text_diff("f.py", old, new)
    if old == new:
        return
    assert_review_is_written(diff, _plan_of_texts(old, new))


@settings(max_examples=150, deadline=None)
@given(old=texts(), new=texts())
def test_the_review_of_a_plan_without_hunks_shows_the_writers_hunks(old: str, new: str):
    plan = _plan_of_texts(old, new)
    if old != new:
        assert_review_is_written(build_file_diff(plan), plan)


@settings(max_examples=60, deadline=None)
@given(old=texts(), new=texts())
def test_the_review_of_an_engine_plan_shows_the_writers_hunks(old: str, new: str):
    # A plan of the engine's own (a file written whole): its hunks are the review's
    # hunks, and the writer writes the note from them.
    old, new = old.replace("\r", ""), new.replace("\r", "")  # the file's endings rule there
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        (repo / "f.py").write_text(old)
        plan = plan_file_change(load_settings(repo, environ={}), "f.py", new)
    if plan.files and plan.files[0].hunks:
        assert_review_is_written(build_file_diff(plan.files[0]), plan.files[0], headers=False)


def test_the_review_is_linear_in_the_lines_on_thousands_of_blank_lines():
    assert_linear_work(lambda old, new: build_text_diff("f.py", old, new))

    # One hunk over the whole file (a plan rewritten whole): the lines inside it are
    # paired by the same line diff.
    def whole(old: str, new: str) -> FileDiff:
        hunk = Hunk(0, 0, old.splitlines(), new.splitlines())
        return build_file_diff(FilePlan("f.py", "update", old_text=old, new_text=new, hunks=[hunk]))

    assert_linear_work(whole)
