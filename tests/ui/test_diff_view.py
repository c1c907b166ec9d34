"""The diff model (rows, hunks, changed characters, syntax) and the line-API widget that draws it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult

from hello_tui.patch.types import FilePlan, Hunk
from hello_tui.widgets.diff_rows import (
    LEX_BLOCK,
    add_syntax,
    build_file_diff,
    build_text_diff,
    changed_spans,
    display_text,
    hunks_from_texts,
)
from hello_tui.widgets.diff_view import TRUNCATED_MARK, DiffView
from tests.ui.review_fixtures import STATS_NEW, STATS_OLD, file_plan, settle

# ---- hunks and rows ---------------------------------------------------------------


def apply_hunks(old_text: str, hunks: list[Hunk]) -> str:
    lines = old_text.splitlines(keepends=True)
    for hunk in sorted(hunks, key=lambda h: h.old_start, reverse=True):
        lines[hunk.old_start : hunk.old_start + len(hunk.old_lines)] = hunk.new_lines
    return "".join(lines)


line_text = st.sampled_from(["a", "b", "c", "def f():", "    return 1", "", "x = 2"])
texts = st.lists(line_text, max_size=25).map(lambda ls: "".join(f"{line}\n" for line in ls))


@settings(max_examples=60, deadline=None)
@given(old=texts, new=texts)
def test_hunks_from_texts_turn_old_into_new(old: str, new: str):
    hunks = hunks_from_texts(old, new)
    assert apply_hunks(old, hunks) == new
    assert [h.index for h in hunks] == list(range(len(hunks)))


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


def test_a_plan_without_hunks_gets_difflib_hunks():
    diff = build_file_diff(FilePlan("a.txt", "update", old_text="1\n2\n", new_text="1\n3\n"))
    assert len(diff.hunks) == 1 and diff.hunks[0].new_lines == ["3\n"]


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
