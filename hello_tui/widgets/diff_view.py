"""The diff widget: side-by-side or unified, drawn with Textual's line API.

Only the rows on screen are rendered (a ScrollView whose render_line returns
Strips), so a 10,000-line file costs the same to draw as a 10-line one. Rows
are computed off the UI thread by hello_tui.widgets.diff_rows; changed
characters and syntax tokens are worked out only for the rows that are drawn. The widget knows hunks
(which is current, which are declined) but not what accepting means: the
screens that host it decide that.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import ClassVar

from rich.segment import Segment
from textual import work
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import get_current_worker

from hello_tui.engine.types import FilePlan
from hello_tui.widgets.diff_paint import (
    PaintState,
    RowPainter,
    wrap_starts,
)
from hello_tui.widgets.diff_rows import (
    FileDiff,
    Row,
    SyntaxCache,
    build_file_diff,
    build_text_diff,
    syntax_for,
)

# Below this many terminal columns two code columns are too narrow to read.
SPLIT_MIN_WIDTH = 100
# Columns one press of ←/→ (h/l) moves the text of both panes.
SCROLL_STEP = 8
HUNK_KEYS = Binding.Group("Hunk", compact=True)
# Hunk lines up to which a file's rows are built on the UI thread: about 50 ms for a
# 10,000-line rewrite, inside the time a decision modal ignores keys as it arms.
INLINE_BUILD_LINES = 25_000


def _changed_lines(file_plan: FilePlan) -> int:
    """What building a file's rows costs, roughly: its hunks' lines (or its texts')."""
    if file_plan.hunks:
        return sum(len(h.old_lines) + len(h.new_lines) for h in file_plan.hunks)
    return len(file_plan.old_text or "") // 40 + len(file_plan.new_text or "") // 40


class DiffView(ScrollView, can_focus=True):
    """A scrollable diff of one file; `j`/`k` jump between hunks, `s` toggles the layout."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "j",
            "next_hunk",
            "Next hunk",
            id="diff.next_hunk",
            group=HUNK_KEYS,
            tooltip="Next hunk (past the last: the next file's first)",
        ),
        Binding(
            "k",
            "previous_hunk",
            "Previous hunk",
            id="diff.previous_hunk",
            group=HUNK_KEYS,
            tooltip="Previous hunk (before the first: the previous file's last)",
        ),
        Binding(
            "down",
            "next_hunk",
            "Next hunk",
            show=False,
            id="diff.next_hunk_arrow",
            tooltip="Next hunk (past the last: the next file's first)",
        ),
        Binding(
            "up",
            "previous_hunk",
            "Previous hunk",
            show=False,
            id="diff.previous_hunk_arrow",
            tooltip="Previous hunk (before the first: the previous file's last)",
        ),
        Binding(
            "s",
            "toggle_layout",
            "Layout",
            id="diff.toggle_layout",
            tooltip="Side by side or unified",
        ),
        Binding(
            "w",
            "toggle_wrap",
            "Wrap",
            id="diff.toggle_wrap",
            tooltip="Wrap long lines, both sides aligned (again: cut them)",
        ),
        *[
            Binding(
                key,
                f"scroll_columns({steps})",
                "Scroll sideways",
                show=False,
                id=f"diff.scroll_{name}",
                tooltip=f"Scroll long lines {direction}, both sides together",
            )
            for key, steps, name, direction in (
                ("l", 1, "right", "right"),
                ("right", 1, "right_arrow", "right"),
                ("h", -1, "left", "left"),
                ("left", -1, "left_arrow", "left"),
            )
        ],
        Binding(
            "home",
            "scroll_home_columns",
            "Line start",
            show=False,
            id="diff.line_start",
            tooltip="Back to the start of long lines",
        ),
        Binding("pagedown", "page_down", "Page down", show=False, id="diff.page_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="diff.page_up"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff--gutter",
        "diff--removed",
        "diff--added",
        "diff--removed-char",
        "diff--added-char",
        "diff--header",
        "diff--header-current",
        "diff--header-declined",
        "diff--declined",
        "diff--fold",
        "diff--filler",
        "diff--bar-accepted",
        "diff--bar-declined",
        "diff--separator",
    }

    DEFAULT_CSS = """
    DiffView {
        overflow-x: hidden;
        overflow-y: auto;
        background: $surface;
        scrollbar-size-vertical: 1;
    }
    DiffView > .diff--gutter { color: $text-muted; }
    DiffView > .diff--removed { background: #4a1f26; }
    DiffView > .diff--added { background: #1d3f2a; }
    DiffView > .diff--removed-char { background: #8c2f3c; }
    DiffView > .diff--added-char { background: #2f7a46; }
    DiffView > .diff--header { background: #25324a; color: #b8c7e0; }
    DiffView > .diff--header-current { background: #3b5a8c; color: #ffffff; text-style: bold; }
    DiffView > .diff--header-declined { background: #3a3a3a; color: #a0a0a0; }
    DiffView > .diff--declined { color: #7a7a7a; }
    DiffView > .diff--fold { color: $text-muted; text-style: italic; }
    DiffView > .diff--filler { background: $surface-darken-1; }
    DiffView > .diff--bar-accepted { color: $success; }
    DiffView > .diff--bar-declined { color: #6a6a6a; }
    DiffView > .diff--separator { color: $panel-lighten-2; }
    """

    class HunkChanged(Message):
        """The current hunk moved (j/k or a click)."""

        def __init__(self, view: DiffView, position: int) -> None:
            super().__init__()
            self.view = view
            self.position = position

    class HeaderClicked(Message):
        """A hunk header was clicked: hosts toggle that hunk."""

        def __init__(self, view: DiffView, position: int) -> None:
            super().__init__()
            self.view = view
            self.position = position

    class LayoutChanged(Message):
        """Split and unified swapped (the `s` key or a resize across the threshold)."""

        def __init__(self, view: DiffView, split: bool) -> None:
            super().__init__()
            self.view = view
            self.split = split

    class ViewportChanged(Message):
        """The text scrolled sideways or the wrap toggle changed."""

        def __init__(self, view: DiffView) -> None:
            super().__init__()
            self.view = view

    class BoundaryReached(Message):
        """j past the last hunk (forward) or k before the first: hosts may change file."""

        def __init__(self, view: DiffView, forward: bool) -> None:
            super().__init__()
            self.view = view
            self.forward = forward

    class DiffReady(Message):
        """Rows for the requested file are on screen."""

        def __init__(self, view: DiffView, diff: FileDiff) -> None:
            super().__init__()
            self.view = view
            self.diff = diff

    # None follows the terminal width; True/False is the user's explicit choice.
    split_mode: reactive[bool | None] = reactive(None, layout=False)

    def __init__(
        self,
        *,
        show_hunk_state: bool = True,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        # A read-only view (the backup viewer) has no accepted/declined hunks.
        self.show_hunk_state = show_hunk_state
        self.diff: FileDiff | None = None
        self.current_hunk = 0
        self.declined: frozenset[int] = frozenset()
        self.placeholder = "computing diff…"
        self._line_cache: LRUCache[tuple[int, int, int, bool], Strip] = LRUCache(1024)
        self._computed: dict[int, tuple[object, FileDiff]] = {}
        self._split_now = False
        self._wanted: object = None
        # The hunk to show once the wanted file's rows arrive: 0 the first, -1 the last.
        self._initial_hunk = 0
        # Columns of text hidden on the left of every pane (the panes scroll together).
        self.x_offset = 0
        self.wrap = False
        # With wrap on: the first visual line of each row, and the total after the last.
        self._row_starts: list[int] = []

    # ---- what to show -------------------------------------------------------

    def load_plan(self, file_plan: FilePlan, hunk: int = 0) -> None:
        """Show one file of a plan at a hunk (-1: the last); rows are computed the first
        time, in a thread when the file is big."""
        self._initial_hunk = hunk
        cached = self._computed.get(id(file_plan))
        if cached is not None and cached[0] is file_plan:
            self.show(cached[1])
            return
        self._begin_loading(file_plan)
        if _changed_lines(file_plan) <= INLINE_BUILD_LINES:
            # Quicker than a thread, which would share the interpreter with the first
            # frame being drawn; syntax still comes from a thread.
            diff = build_file_diff(file_plan)
            self._rows_ready(file_plan, diff)
            self._compute_syntax(diff)
            return
        self._compute(file_plan, lambda: build_file_diff(file_plan))

    def load_texts(self, path: str, old_text: str, new_text: str) -> None:
        """Show two versions of a text (a backup against the current file)."""
        key = (path, old_text, new_text)
        self._begin_loading(key)
        self._compute(key, lambda: build_text_diff(path, old_text, new_text))

    def _begin_loading(self, key: object) -> None:
        self._wanted = key
        self.diff = None
        self.declined = frozenset()
        self.current_hunk = 0
        self._reset()

    # A fixed description: Textual would otherwise repr the arguments (whole files).
    @work(thread=True, exclusive=True, group="diff-view", description="diff rows")
    def _compute(self, key: object, build) -> None:
        worker = get_current_worker()
        diff = build()
        if worker.is_cancelled:
            return
        self.app.call_from_thread(self._rows_ready, key, diff)
        syntax = syntax_for(diff)
        if syntax is not None and not worker.is_cancelled:
            self.app.call_from_thread(self._syntax_ready, diff, syntax)

    @work(thread=True, exclusive=True, group="diff-view", description="diff syntax")
    def _compute_syntax(self, diff: FileDiff) -> None:
        syntax = syntax_for(diff)
        if syntax is not None and not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._syntax_ready, diff, syntax)

    def _rows_ready(self, key: object, diff: FileDiff) -> None:
        self._computed[id(key)] = (key, diff)
        # A slower, older request must not replace the file the user moved to.
        if key is self._wanted:
            self.show(diff)

    def _syntax_ready(self, diff: FileDiff, syntax: SyntaxCache) -> None:
        if diff is not self.diff:
            diff.syntax = syntax
            return
        # Colours come a frame later: lexing the first screen would delay the first paint.
        self.call_after_refresh(self._attach_syntax, diff, syntax)

    def _attach_syntax(self, diff: FileDiff, syntax: SyntaxCache) -> None:
        diff.syntax = syntax
        if diff is self.diff:
            self._line_cache.clear()
            self.refresh()

    def show(self, diff: FileDiff) -> None:
        """Display rows already computed (the cache or a caller that built them)."""
        self.diff = diff
        self.current_hunk = 0
        self.x_offset = 0
        self._reset()
        self.scroll_to(y=0, animate=False, immediate=True)
        hunk, self._initial_hunk = self._initial_hunk, 0
        if hunk and self.hunk_count:
            self.scroll_to_hunk(hunk % self.hunk_count)
        self.post_message(self.DiffReady(self, diff))

    def set_declined(self, declined: set[int] | frozenset[int]) -> None:
        """Positions (in diff.hunks) the user turned off; drawn dimmed."""
        self.declined = frozenset(declined)
        self._line_cache.clear()
        self.refresh()

    # ---- layout -------------------------------------------------------------

    @property
    def is_split(self) -> bool:
        if self.split_mode is not None:
            return self.split_mode
        return self.screen.size.width >= SPLIT_MIN_WIDTH if self.is_attached else True

    @property
    def rows(self) -> list[Row]:
        if self.diff is None:
            return []
        return self.diff.split_rows if self._split_now else self.diff.unified_rows

    @property
    def hunk_rows(self) -> list[int]:
        if self.diff is None:
            return []
        return self.diff.split_hunk_rows if self._split_now else self.diff.unified_hunk_rows

    @property
    def one_pane(self) -> bool:
        """An added or deleted file in the split layout: one full-width pane."""
        return self._split_now and self.diff is not None and self.diff.one_side is not None

    @property
    def hunk_count(self) -> int:
        return len(self.diff.hunks) if self.diff is not None else 0

    def _reset(self) -> None:
        self._split_now = self.is_split
        self._line_cache.clear()
        self._measure()
        self.refresh()

    def _measure(self) -> None:
        """Visual lines per row for the current width (wrap on), and the virtual height."""
        rows = self.rows
        width = self.scrollable_content_region.width
        if not self.wrap or self.diff is None or width < 8:
            self._row_starts = []
            self.virtual_size = Size(0, max(1, len(rows)))
            return
        widths = self._text_widths(width)
        starts = [0] * (len(rows) + 1)
        total = 0
        for index, row in enumerate(rows):
            starts[index] = total
            total += self._row_height(row, widths)
        starts[len(rows)] = total
        self._row_starts = starts
        self.virtual_size = Size(0, max(1, total))

    def _text_widths(self, width: int) -> tuple[int, int]:
        """Text columns of the (old, new) panes, or of the one pane twice."""
        digits = self.diff.number_width if self.diff else 1
        if not self._split_now:
            text = max(1, width - (2 * digits + 5))
            return text, text
        if self.one_pane:
            text = max(1, width - (digits + 4))
            return text, text
        left = (width - 1) // 2
        return max(1, left - (digits + 4)), max(1, width - 1 - left - (digits + 4))

    def _row_height(self, row: Row, widths: tuple[int, int]) -> int:
        if row.kind in ("header", "fold", "message"):
            return 1
        height = 1
        for side, text_width in ((row.old, widths[0]), (row.new, widths[1])):
            if side is not None:
                height = max(height, len(wrap_starts(side.text, text_width)))
        return height

    def row_at(self, y: int) -> tuple[int, int]:
        """(row index, visual line inside the row) of virtual line y."""
        if not self._row_starts:
            return y, 0
        index = bisect_right(self._row_starts, y) - 1
        return index, y - self._row_starts[index]

    def line_of_row(self, index: int) -> int:
        """The first virtual line of a row."""
        if not self._row_starts:
            return index
        return self._row_starts[min(index, len(self._row_starts) - 1)]

    def watch_split_mode(self) -> None:
        self._relayout()

    def on_resize(self) -> None:
        self._relayout()

    def _relayout(self) -> None:
        split = self.is_split
        if split != self._split_now:
            self._reset()
            self.scroll_to_hunk(self.current_hunk)
            self.post_message(self.LayoutChanged(self, split))
        else:
            self._line_cache.clear()
            if self.wrap:
                self._keep_top_row(self._measure)

    def _keep_top_row(self, change) -> None:
        """Apply a change of visual lines keeping the row at the top of the view in place."""
        top, _ = self.row_at(int(self.scroll_offset.y))
        change()
        self._scroll_to_line(self.line_of_row(top))
        self.refresh()

    def _scroll_to_line(self, line: int) -> None:
        # Forced: Textual lets a widget scroll only once its scrollbar is shown, which
        # happens at the next layout; a key burst (`w` then `j`) acts before that, and an
        # unforced scroll was dropped. The virtual size is already current, so the clamp holds.
        self.scroll_to(y=line, animate=False, immediate=True, force=True)

    # ---- long lines ---------------------------------------------------------

    @property
    def longest_line(self) -> int:
        """Cells of the longest text line of either version."""
        return self.diff.longest if self.diff is not None else 0

    @property
    def lines_cut(self) -> bool:
        """Some line is wider than its pane (and neither wrapped nor scrolled to its end)."""
        return self.diff is not None and not self.wrap and self.x_offset < self.max_x_offset

    @property
    def max_x_offset(self) -> int:
        narrowest = min(self._text_widths(self.scrollable_content_region.width))
        return max(0, self.longest_line - narrowest)

    def action_scroll_columns(self, steps: int) -> None:
        if self.wrap or self.diff is None:
            return
        offset = max(0, min(self.x_offset + steps * SCROLL_STEP, self.max_x_offset))
        if offset != self.x_offset:
            self.x_offset = offset
            self._line_cache.clear()
            self.refresh()
            self.post_message(self.ViewportChanged(self))

    def action_scroll_home_columns(self) -> None:
        if self.x_offset:
            self.x_offset = 0
            self._line_cache.clear()
            self.refresh()
            self.post_message(self.ViewportChanged(self))

    def action_toggle_wrap(self) -> None:
        def toggle() -> None:
            self.wrap = not self.wrap
            self.x_offset = 0
            self._line_cache.clear()
            self._measure()

        self._keep_top_row(toggle)
        self.post_message(self.ViewportChanged(self))

    def action_toggle_layout(self) -> None:
        self.split_mode = not self.is_split

    # ---- hunk navigation ----------------------------------------------------

    def scroll_to_hunk(self, position: int) -> None:
        rows = self.hunk_rows
        if not rows:
            return
        position = max(0, min(position, len(rows) - 1))
        if position != self.current_hunk:
            self.current_hunk = position
            self.post_message(self.HunkChanged(self, position))
        self._line_cache.clear()
        # One row of breathing room above the header, when there is one.
        self._scroll_to_line(max(0, self.line_of_row(rows[position]) - 1))
        self.refresh()

    def action_next_hunk(self) -> None:
        if self.diff is None:
            return
        if self.current_hunk + 1 < self.hunk_count:
            self.scroll_to_hunk(self.current_hunk + 1)
        else:
            self.post_message(self.BoundaryReached(self, forward=True))

    def action_previous_hunk(self) -> None:
        if self.diff is None:
            return
        if self.current_hunk > 0 and self.hunk_count:
            self.scroll_to_hunk(self.current_hunk - 1)
        else:
            self.post_message(self.BoundaryReached(self, forward=False))

    def on_click(self, event) -> None:
        index, _ = self.row_at(int(self.scroll_offset.y) + event.y)
        rows = self.rows
        if not 0 <= index < len(rows) or rows[index].hunk < 0:
            return
        position = rows[index].hunk
        if position != self.current_hunk:
            self.current_hunk = position
            self._line_cache.clear()
            self.refresh()
            self.post_message(self.HunkChanged(self, position))
        if rows[index].kind == "header":
            self.post_message(self.HeaderClicked(self, position))

    # ---- drawing ------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index, part = self.row_at(int(self.scroll_offset.y) + y)
        rows = self.rows
        base = self.rich_style
        if self.diff is None:
            text = self.placeholder if y == 0 else ""
            return Strip([Segment(text, base)]).crop_extend(0, width, base)
        if index >= len(rows):
            return Strip.blank(width, base)
        key = (index, part, width, self._split_now)
        strip = self._line_cache.get(key)
        if strip is None:
            strip = self._painter().row(rows[index], part, width).apply_style(base)
            self._line_cache[key] = strip
        return strip

    def _painter(self) -> RowPainter:
        assert self.diff is not None
        return RowPainter(
            PaintState(
                diff=self.diff,
                declined=self.declined,
                current_hunk=self.current_hunk,
                show_hunk_state=self.show_hunk_state,
                split=self._split_now,
                one_pane=self.one_pane,
                wrap=self.wrap,
                x_offset=self.x_offset,
                style=lambda name: self.get_component_rich_style(name, partial=True),
                console=self.app.console,
            )
        )
