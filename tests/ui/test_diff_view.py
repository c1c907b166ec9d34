"""The diff model (rows, hunks, changed characters, syntax) and the line-API widget that draws it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult

from hello_tui.engine.types import text_hunks
from hello_tui.patch.types import FilePlan, Hunk
from hello_tui.widgets.diff_paint import SCROLLED_MARK, TRUNCATED_MARK
from hello_tui.widgets.diff_rows import (
    LEX_BLOCK,
    add_syntax,
    build_file_diff,
    build_text_diff,
    display_text,
)
from hello_tui.widgets.diff_spans import changed_spans
from hello_tui.widgets.diff_view import SCROLL_STEP, DiffView
from tests.ui.review_fixtures import STATS_NEW, STATS_OLD, file_plan, settle

# ---- hunks and rows ---------------------------------------------------------------


line_text = st.sampled_from(["a", "b", "c", "def f():", "    return 1", "", "x = 2"])
texts = st.lists(line_text, max_size=25).map(lambda ls: "".join(f"{line}\n" for line in ls))


@settings(max_examples=60, deadline=None)
@given(old=texts, new=texts)
def test_rows_account_for_every_line_of_both_versions(old: str, new: str):
    diff = build_text_diff("f.py", old, new, context=1)
    if old == new:
        assert diff.split_rows[0].kind == "message"
        return
    # The proposed text rebuilt by the row builder (folded lines included) is the new text.
    assert diff.new_source == [display_text(x) for x in new.splitlines()]
    for rows in (diff.split_rows, diff.unified_rows):
        old_numbers = [r.old.number for r in rows if r.old]
        new_numbers = [r.new.number for r in rows if r.new]
        assert old_numbers == sorted(set(old_numbers))
        assert new_numbers == sorted(set(new_numbers))
        # Every changed line is shown; only unchanged lines may be folded away.
        changed_old = sum(len(h.old_lines) for h in diff.hunks)
        changed_new = sum(len(h.new_lines) for h in diff.hunks)
        assert sum(1 for r in rows if r.old and r.kind != "context") <= changed_old
        assert sum(1 for r in rows if r.hunk >= 0 and r.old) == changed_old
        assert sum(1 for r in rows if r.hunk >= 0 and r.new) == changed_new
    assert len(diff.split_hunk_rows) == len(diff.hunks)
    for position, row_index in enumerate(diff.split_hunk_rows):
        assert diff.split_rows[row_index].kind == "header"
        assert diff.split_rows[row_index].hunk == position


def test_split_rows_pair_changed_lines_and_mark_changed_characters():
    diff = build_file_diff(file_plan("stats.py", STATS_OLD, STATS_NEW))
    changes = [r for r in diff.split_rows if r.kind == "change"]
    assert len(changes) == 2
    first = changes[0]
    assert first.old.number == first.new.number == 15
    assert first.old.text == "    return total(values) / (count(values) - 1)"
    # Only the "(" and " - 1)" around count(values) changed.
    assert [first.old.text[a:b] for a, b in first.old.spans] == ["(", " - 1)"]
    assert first.new.spans == ()


def test_unified_rows_put_removed_lines_before_added_lines():
    diff = build_text_diff("t.txt", "a\nb\nc\n", "a\nB\nC\nc\n")
    kinds = [r.kind for r in diff.unified_rows]
    assert kinds == ["header", "context", "removed", "added", "added", "context"]
    assert [r.new.number for r in diff.unified_rows if r.kind == "added"] == [2, 3]


def test_long_unchanged_runs_are_folded_with_context_around_hunks():
    old = "".join(f"line {i}\n" for i in range(100))
    new = old.replace("line 50\n", "fifty\n")
    diff = build_text_diff("t.txt", old, new, context=3)
    folds = [r.label for r in diff.split_rows if r.kind == "fold"]
    assert folds == ["⋯ 47 unchanged lines", "⋯ 46 unchanged lines"]
    numbers = [r.old.number for r in diff.split_rows if r.kind == "context"]
    assert numbers == [48, 49, 50, 52, 53, 54]


def test_new_line_numbers_follow_earlier_hunks():
    old = "".join(f"L{i}\n" for i in range(40))
    new = old.replace("L5\n", "L5\nL5b\nL5c\n").replace("L30\n", "")
    diff = build_text_diff("t.txt", old, new, context=1)
    rows = [r for r in diff.split_rows if r.kind == "context" and r.old.number == 30]
    assert rows and rows[0].new.number == 32  # two lines added above
    after = [r for r in diff.split_rows if r.kind == "context" and r.old.number == 32]
    assert after[0].new.number == 33  # one line removed since


def test_added_deleted_moved_and_binary_files():
    added = build_file_diff(file_plan("n.py", None, "x = 1\ny = 2\n", op="add"))
    assert [r.new.text for r in added.split_rows if r.kind == "change"] == ["x = 1", "y = 2"]
    assert all(r.old is None for r in added.split_rows if r.kind == "change")
    deleted = build_file_diff(file_plan("d.py", "x = 1\n", None, op="delete"))
    assert [(r.old.text, r.new) for r in deleted.split_rows if r.kind == "change"] == [
        ("x = 1", None)
    ]
    moved = build_file_diff(
        FilePlan("a.py", "move", move_to="b.py", old_text="x\n", new_text="x\n")
    )
    assert moved.split_rows[0].label == "renamed a.py → b.py; content unchanged"
    binary = build_file_diff(
        FilePlan("i.png", "update", old_bytes=b"\x89PNG", new_bytes=b"\x89PNG!")
    )
    assert "binary file: 4 bytes → 5 bytes" in binary.split_rows[0].label


def test_a_plan_without_hunks_gets_the_writers_hunks():
    diff = build_file_diff(FilePlan("a.txt", "update", old_text="1\n2\n", new_text="1\n3\n"))
    assert len(diff.hunks) == 1 and diff.hunks[0].new_lines == ["3"]
    assert diff.hunks[0].header == "@@ -2 +2 @@"


def test_lines_are_numbered_where_the_engine_split_them():
    # git's lines end at LF only: a lone CR is text (shown as a replacement character),
    # and a form feed or U+2028 splits no line either.
    old = "a\rb\nc\x0cd\ne\u2028f\ng\n"
    diff = build_text_diff("t.txt", old, old.replace("g", "G"))
    assert [r.old.text for r in diff.split_rows if r.old] == [
        "a\ufffdb",
        "c\ufffdd",
        "e\u2028f",
        "g",
    ]
    assert [r.old.number for r in diff.split_rows if r.kind == "change"] == [4]
    # A Codex plan's hunks count a lone CR as a line end too.
    hunk = Hunk(0, 1, ["b"], ["B"])
    codex = FilePlan("t.txt", "update", old_text="a\rb\n", new_text="a\rB\n", hunks=[hunk])
    rows = build_file_diff(codex).split_rows
    assert [(r.kind, r.old.text) for r in rows if r.old] == [("context", "a"), ("change", "b")]


def test_display_text_is_safe_for_the_terminal():
    assert display_text("a\tb\r\n") == "a   b"
    assert display_text("bell\x07 esc\x1b[31m") == "bell\ufffd esc\ufffd[31m"


def test_changed_spans_of_very_long_lines_cover_the_whole_line():
    old, new = "a" * 1000, "b" * 1000
    assert changed_spans(old, new) == (((0, 1000),), ((0, 1000),))


def test_syntax_tokens_cover_each_line_exactly():
    diff = build_file_diff(file_plan("stats.py", STATS_OLD, STATS_NEW))
    assert add_syntax(diff)
    for old, text in ((True, STATS_OLD), (False, STATS_NEW)):
        for number, line in enumerate(text.splitlines(), start=1):
            assert "".join(part for part, _ in diff.syntax.line(old, number)) == line
    tokens = diff.syntax.line(False, 4)  # def total(values):
    keyword_styles = {style for text, style in tokens if text == "def"}
    plain_styles = {style for text, style in tokens if text == "total"}
    assert keyword_styles and keyword_styles != plain_styles
    assert diff.syntax.line(False, 0) is None and diff.syntax.line(False, 10_000) is None


def test_syntax_is_lexed_lazily_in_blocks():
    text = "".join(f"x_{i} = {i}\n" for i in range(LEX_BLOCK * 5))
    diff = build_text_diff("m.py", text, text.replace("x_3 ", "y_3 "))
    assert add_syntax(diff)
    assert diff.syntax.blocks == {}
    last = LEX_BLOCK * 5
    assert "".join(p for p, _ in diff.syntax.line(False, last)) == f"x_{last - 1} = {last - 1}"
    assert list(diff.syntax.blocks) == [(False, 4)]


def test_no_lexer_for_unknown_files():
    diff = build_text_diff("notes.unknownext", "a\n", "b\n")
    assert not add_syntax(diff)
    assert diff.syntax is None


# ---- the widget ---------------------------------------------------------------------


class CountingDiffView(DiffView):
    def __init__(self) -> None:
        super().__init__()
        self.rendered_rows = 0

    def _render_row(self, row, width):
        self.rendered_rows += 1
        return super()._render_row(row, width)


class ViewApp(App[Any]):
    def __init__(self) -> None:
        super().__init__()
        self.view = CountingDiffView()

    def compose(self) -> ComposeResult:
        yield self.view


def screen_lines(view: DiffView) -> list[str]:
    return [view.render_line(y).text for y in range(view.size.height)]


async def test_only_visible_rows_are_rendered_for_a_huge_file():
    old = "".join(f"value_{i} = {i}\n" for i in range(10_000))
    new = "".join(f"value_{i} = {i * 2}\n" for i in range(10_000))  # every line changed
    app = ViewApp()
    async with app.run_test(size=(120, 30)) as pilot:
        app.view.load_texts("big.py", old, new)
        await settle(pilot)
        assert len(app.view.rows) > 10_000
        assert app.view.rendered_rows <= 3 * app.view.size.height
        await pilot.press("pagedown")
        await pilot.pause()
        assert app.view.rendered_rows <= 6 * app.view.size.height


async def test_split_rendering_shows_both_sides_with_line_numbers():
    app = ViewApp()
    async with app.run_test(size=(120, 30)) as pilot:
        app.view.load_texts("stats.py", STATS_OLD, STATS_NEW)
        await settle(pilot)
        lines = screen_lines(app.view)
        changed = next(line for line in lines if "(count(values) - 1)" in line)
        left, right = changed.split("│")
        assert left.startswith("▌15 - ") and "(count(values) - 1)" in left
        assert right.startswith("▌15 + ") and "total(values) / count(values)" in right
        assert any("✓ accepted" in line and "hunk 1/2" in line for line in lines)


async def test_unified_rendering_and_declined_hunks():
    app = ViewApp()
    async with app.run_test(size=(80, 30)) as pilot:
        app.view.load_texts("stats.py", STATS_OLD, STATS_NEW)
        await settle(pilot)
        assert not app.view.is_split
        lines = screen_lines(app.view)
        assert any(line.startswith("▌15    - ") for line in lines)
        assert any(line.startswith("▌   15 + ") for line in lines)
        app.view.set_declined({0})
        lines = screen_lines(app.view)
        assert any("✗ declined" in line and "hunk 1/2" in line for line in lines)


async def test_changed_characters_and_syntax_are_styled():
    app = ViewApp()
    async with app.run_test(size=(120, 30)) as pilot:
        app.view.load_texts("stats.py", STATS_OLD, STATS_NEW)
        await settle(pilot)
        view = app.view
        y = next(i for i, line in enumerate(screen_lines(view)) if "(count(values) - 1)" in line)
        segments = list(view.render_line(y))
        left = segments[: next(i for i, seg in enumerate(segments) if seg.text == "│")]
        removed_bg = view.get_component_rich_style("diff--removed").bgcolor
        char_bg = view.get_component_rich_style("diff--removed-char").bgcolor
        by_text = {seg.text: seg.style for seg in left if seg.text.strip()}
        assert "".join(seg.text for seg in left if seg.style.bgcolor == char_bg) == "( - 1)"
        assert by_text["total"].bgcolor == removed_bg
        assert by_text["return"].color != by_text["total"].color  # keyword vs name


async def test_long_lines_are_cut_with_a_mark():
    app = ViewApp()
    async with app.run_test(size=(80, 10)) as pilot:
        app.view.load_texts("t.txt", "short\n", "x" * 300 + "\n")
        await settle(pilot)
        line = next(line for line in screen_lines(app.view) if "xxx" in line)
        assert line.rstrip().endswith(TRUNCATED_MARK)
        assert len(line) <= 80


async def test_layout_toggle_keeps_the_current_hunk_in_view():
    old = "".join(f"line {i}\n" for i in range(300))
    new = "".join(f"changed {i}\n" if i % 30 == 0 else f"line {i}\n" for i in range(300))
    app = ViewApp()
    async with app.run_test(size=(120, 20)) as pilot:
        app.view.load_texts("t.txt", old, new)
        await settle(pilot)
        app.view.focus()
        for _ in range(6):
            await pilot.press("j")
        await pilot.press("s")
        await pilot.pause()
        view = app.view
        assert not view.is_split and view.current_hunk == 6
        header = view.hunk_rows[6]
        assert view.scroll_offset.y <= header < view.scroll_offset.y + view.size.height


async def test_placeholder_until_rows_arrive():
    app = ViewApp()
    async with app.run_test(size=(80, 10)):
        assert app.view.render_line(0).text.startswith("computing diff…")


# ---- hunk headers against git ---------------------------------------------------------

NUMBERED = "".join(f"line {i}\n" for i in range(1, 31))


def _lines_replaced(text: str, start: int, end: int, new: list[str]) -> str:
    lines = text.splitlines(keepends=True)
    lines[start:end] = [f"{line}\n" for line in new]
    return "".join(lines)


# (name, new text) against NUMBERED: insertions, deletions and replacements at the top,
# in the middle and at the end, one or several hunks.
HEADER_SHAPES = [
    ("insert at top", _lines_replaced(NUMBERED, 0, 0, ["new a", "new b"])),
    ("insert in middle", _lines_replaced(NUMBERED, 13, 13, ["n1", "n2", "n3", "n4"])),
    ("insert at end", NUMBERED + "tail 1\ntail 2\n"),
    ("delete at top", _lines_replaced(NUMBERED, 0, 3, [])),
    ("delete in middle", _lines_replaced(NUMBERED, 17, 18, [])),
    ("delete at end", _lines_replaced(NUMBERED, 27, 30, [])),
    ("replace one line", _lines_replaced(NUMBERED, 9, 10, ["line ten"])),
    ("replace two by three", _lines_replaced(NUMBERED, 20, 22, ["x", "y", "z"])),
    (
        "several hunks",
        _lines_replaced(
            _lines_replaced(_lines_replaced(NUMBERED, 25, 26, []), 12, 12, ["mid"]), 0, 1, []
        ),
    ),
]

_GIT_HEADER = re.compile(r"^@@ (-\S+ \+\S+) @@", re.MULTILINE)
_TITLE_RANGE = re.compile(r"hunk \d+/\d+  (-\S+ \+\S+)")

requires_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git_diff(repo: Path, old: str, new: str, context: int) -> str:
    """`git diff -U<context>` of f.txt from old to new (old staged, new in the work tree)."""
    git = ["git", "-C", str(repo), "-c", "core.autocrlf=false"]
    if not (repo / ".git").exists():
        subprocess.run([*git, "init", "-q"], check=True)
    (repo / "f.txt").write_text(old)
    subprocess.run([*git, "add", "f.txt"], check=True)
    (repo / "f.txt").write_text(new)
    out = subprocess.run(
        [*git, "diff", f"-U{context}", "--no-color", "--no-ext-diff", "f.txt"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    (repo / "f.txt").write_text(old)
    return out


def title_ranges(diff) -> list[str]:
    return [
        _TITLE_RANGE.search(row.label).group(1) for row in diff.split_rows if row.kind == "header"
    ]


@requires_git
@pytest.mark.parametrize("name, new", HEADER_SHAPES, ids=[s[0] for s in HEADER_SHAPES])
@pytest.mark.parametrize("context", [0, 3])
def test_review_hunk_headers_number_as_git_does(tmp_path, name, new, context):
    # The review's unit is a run of changed lines, so its header is git's -U0 header for
    # that run, whatever context the patch was written with.
    from hello_tui.config import load_settings
    from hello_tui.patch import plan_patch_text

    expected = _GIT_HEADER.findall(git_diff(tmp_path, NUMBERED, new, 0))
    patch = git_diff(tmp_path, NUMBERED, new, context)
    plan = plan_patch_text(patch, load_settings(tmp_path, environ={}))
    assert title_ranges(build_file_diff(plan.files[0])) == expected


@requires_git
@pytest.mark.parametrize("name, new", HEADER_SHAPES, ids=[s[0] for s in HEADER_SHAPES])
def test_text_hunk_headers_are_git_headers(tmp_path, name, new):
    # The whole @@ line, function context included, as `git diff -U0` writes it.
    expected = re.findall(r"^@@ .*$", git_diff(tmp_path, NUMBERED, new, 0), re.MULTILINE)
    assert [h.header for h in text_hunks(NUMBERED, new)] == expected


@requires_git
def test_new_and_emptied_files_number_as_git_does(tmp_path):
    text = "a\nb\nc\n"
    added = build_file_diff(file_plan("f.txt", None, text, op="add"))
    assert title_ranges(added) == _GIT_HEADER.findall(git_diff(tmp_path, "", text, 3))
    emptied = build_file_diff(file_plan("f.txt", text, ""))
    assert title_ranges(emptied) == _GIT_HEADER.findall(git_diff(tmp_path, text, "", 3))


# ---- long lines: sideways scroll and wrap -----------------------------------------------

LONG_OLD = (
    "def mean(values):\n"
    "    return total(values) / (count(values) - 1) if values and all(isinstance(v, (int, "
    "float)) for v in values) else 0.0  # old\n"
    "\n"
    "def other():\n"
    "    return 1\n"
)
LONG_NEW = LONG_OLD.replace("else 0.0  # old", "else float('nan')  # guard")


def panes(line: str) -> tuple[str, str]:
    left, right = line.split("│")
    return left, right


def body(cell: str, digits: int = 1) -> str:
    """A split cell's text after the bar, the line number and the sign."""
    return cell[digits + 4 :]


async def long_line_view(pilot, app: ViewApp) -> DiffView:
    app.view.load_texts("m.py", LONG_OLD, LONG_NEW)
    await settle(pilot)
    app.view.focus()
    return app.view


def changed_line(view: DiffView) -> str:
    return next(line for line in screen_lines(view) if "▌2 - " in line)


async def test_long_lines_scroll_sideways_in_both_panes_together():
    app = ViewApp()
    async with app.run_test(size=(120, 20)) as pilot:
        view = await long_line_view(pilot, app)
        left, right = panes(changed_line(view))
        assert left.rstrip().endswith(TRUNCATED_MARK) and right.rstrip().endswith(TRUNCATED_MARK)
        assert "float('nan')" not in right
        for _ in range(6):
            await pilot.press("l")
        assert view.x_offset == 6 * SCROLL_STEP
        left, right = panes(changed_line(view))
        # Both panes hide the same columns: their texts start at the same character.
        assert body(left).startswith(SCROLLED_MARK) and body(right).startswith(SCROLLED_MARK)
        old_line = LONG_OLD.splitlines()[1]
        assert body(left)[1:].startswith(old_line[view.x_offset + 1 : view.x_offset + 20])
        assert body(right)[1:].startswith(LONG_NEW.splitlines()[1][view.x_offset + 1 :][:19])
        # Scrolling stops where the longest line's end is in view.
        for _ in range(30):
            await pilot.press("right")
        assert view.x_offset == view.max_x_offset
        left, right = panes(changed_line(view))
        assert "float('nan')  # guard" in right and not right.rstrip().endswith(TRUNCATED_MARK)
        await pilot.press("h", "left")
        assert view.x_offset == view.max_x_offset - 2 * SCROLL_STEP
        await pilot.press("home")
        assert view.x_offset == 0
        assert body(panes(changed_line(view))[0]).startswith("    return total")


async def test_wrap_shows_whole_lines_with_both_sides_aligned():
    app = ViewApp()
    async with app.run_test(size=(120, 20)) as pilot:
        view = await long_line_view(pilot, app)
        await pilot.press("w")
        assert view.wrap
        lines = screen_lines(view)
        assert not any(TRUNCATED_MARK in line for line in lines)
        first = next(i for i, line in enumerate(lines) if "▌2 - " in line)
        # The row continues on unnumbered lines until the next row, numbered on both sides.
        following = next(i for i in range(first + 1, len(lines)) if "3   " in lines[i][:6])
        assert following - first >= 3
        assert panes(lines[following])[1].startswith(" 3   ")
        old_text = "".join(body(panes(lines[i])[0]) for i in range(first, following))
        new_text = "".join(body(panes(lines[i])[1]) for i in range(first, following))
        assert old_text.rstrip() == LONG_OLD.splitlines()[1]
        assert new_text.rstrip() == LONG_NEW.splitlines()[1]
        await pilot.press("l")  # no sideways scroll while wrapped
        assert view.x_offset == 0
        await pilot.press("w")
        assert not view.wrap and TRUNCATED_MARK in changed_line(view)


async def test_wrap_in_the_unified_layout():
    app = ViewApp()
    async with app.run_test(size=(80, 20)) as pilot:
        view = await long_line_view(pilot, app)
        assert not view.is_split
        await pilot.press("w")
        lines = screen_lines(view)
        first = next(i for i, line in enumerate(lines) if line.startswith("▌2   - "))
        end = first + 1
        while lines[end].startswith("▌      "):
            end += 1
        assert end - first >= 2 and not any(TRUNCATED_MARK in line for line in lines)
        assert "".join(line[7:] for line in lines[first:end]).rstrip() == LONG_OLD.splitlines()[1]
        assert lines[end].startswith("▌  2 + ")


def _long_lines_two_hunks() -> tuple[str, str]:
    """200 lines, every other one 300 wide (they wrap), changed in two places."""
    old = "".join(("x" * 300 if i % 2 else f"line {i}") + "\n" for i in range(200))
    return old, old.replace("line 150\n", "changed\n").replace("line 20\n", "other\n")


async def test_wrapped_rows_keep_j_on_the_hunk_header():
    old, new = _long_lines_two_hunks()
    app = ViewApp()
    async with app.run_test(size=(120, 20)) as pilot:
        app.view.load_texts("t.txt", old, new)
        await settle(pilot)
        view = app.view
        view.focus()
        await pilot.press("w", "j")
        assert view.current_hunk == 1
        line = view.line_of_row(view.hunk_rows[1])
        assert line > view.hunk_rows[1]  # the wrapped rows above take more lines
        assert view.scroll_offset.y <= line < view.scroll_offset.y + view.size.height
        assert any("hunk 2/2" in text for text in screen_lines(view))


async def test_a_burst_that_wraps_then_jumps_scrolls_before_the_scrollbar_exists():
    """`w` then `j` handled before any refresh: wrapping made the view scrollable, but the
    scrollbar that Textual's scroll permission waits for appears only at the next layout."""
    old, new = _long_lines_two_hunks()
    app = ViewApp()
    async with app.run_test(size=(120, 20)) as pilot:
        app.view.load_texts("t.txt", old, new)
        await settle(pilot)
        view = app.view
        assert not view.show_vertical_scrollbar  # unwrapped, the rows fit
        view.action_toggle_wrap()
        view.action_next_hunk()  # the same burst: no layout in between
        await settle(pilot)
        line = view.line_of_row(view.hunk_rows[1])
        assert view.scroll_offset.y <= line < view.scroll_offset.y + view.size.height


async def test_added_and_deleted_files_are_one_pane():
    app = ViewApp()
    async with app.run_test(size=(120, 20)) as pilot:
        view = app.view
        view.load_plan(file_plan("new.py", None, "x = 1\ny = 2\n", op="add"))
        await settle(pilot)
        assert view.is_split and view.one_pane
        lines = [line for line in screen_lines(view) if "x = 1" in line or "y = 2" in line]
        assert [line.rstrip() for line in lines] == ["▌1 + x = 1", "▌2 + y = 2"]
        assert not any("│" in line for line in screen_lines(view))
        view.load_plan(file_plan("old.py", "gone = True\n", None, op="delete"))
        await settle(pilot)
        assert view.one_pane
        assert any(line.rstrip() == "▌1 - gone = True" for line in screen_lines(view))
        view.load_texts("t.txt", "a\n", "b\n")  # both sides: two panes
        await settle(pilot)
        assert not view.one_pane and any("│" in line for line in screen_lines(view))


async def test_big_files_are_built_in_a_thread_small_ones_at_once(monkeypatch):
    from hello_tui.widgets import diff_view

    app = ViewApp()
    async with app.run_test(size=(120, 20)) as pilot:
        view = app.view
        view.load_plan(file_plan("a.py", STATS_OLD, STATS_NEW))
        assert view.diff is not None  # at once: no frame without rows
        monkeypatch.setattr(diff_view, "INLINE_BUILD_LINES", 1)
        view.load_plan(file_plan("b.py", STATS_OLD, STATS_NEW + "x = 1\n"))
        assert view.diff is None
        assert view.render_line(0).text.startswith("computing diff…")
        await settle(pilot)
        assert view.diff is not None and view.diff.path == "b.py"


async def test_wrap_counts_wide_characters_as_two_cells():
    wide = "注" * 40  # 40 characters, 80 cells: wider than a 55-cell pane at 120 columns
    app = ViewApp()
    async with app.run_test(size=(120, 20)) as pilot:
        app.view.load_texts("t.txt", f"a\n{wide}\n", f"a\n{wide}!\n")
        await settle(pilot)
        app.view.focus()
        await pilot.press("w")
        lines = screen_lines(app.view)
        first = next(i for i, line in enumerate(lines) if "▌2 - " in line)
        right = "".join(body(panes(line)[1]) for line in lines[first : first + 2])
        assert right.replace(" ", "") == wide + "!"
