"""Drawing one diff row as a Strip: headers, the accepted/declined bar, line numbers, signs,
changed characters, syntax colours, wrapping and sideways scrolling.

`DiffView` owns the rows, the layout and the scroll position; for each line it
draws it hands a `RowPainter` what the row looks like now (`PaintState`), so
this module holds every drawing rule and no widget state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.cells import get_character_cell_size
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from hello_tui.widgets.diff_rows import FileDiff, LineTokens, Row, Side

TRUNCATED_MARK = "›"
SCROLLED_MARK = "‹"


def wrap_starts(text: str, width: int) -> list[int]:
    """Where each wrapped piece of a line starts: at most `width` cells each, and a wide
    character is never cut in two."""
    if len(text) <= width and (text.isascii() or len(text) * 2 <= width):
        return [0]
    if text.isascii():
        return list(range(0, len(text), width))
    starts = [0]
    cells = 0
    for index, character in enumerate(text):
        size = get_character_cell_size(character)
        if cells + size > width and cells:
            starts.append(index)
            cells = 0
        cells += size
    return starts


@dataclass(frozen=True)
class PaintState:
    """What the view's state says about drawing, at the moment a line is drawn."""

    diff: FileDiff
    declined: frozenset[int]
    current_hunk: int
    show_hunk_state: bool  # False: a read-only view (the backup viewer), no hunk states
    split: bool  # side by side (else unified)
    one_pane: bool  # split layout of a one-sided file (added or deleted)
    wrap: bool
    x_offset: int  # cells scrolled sideways (wrap off)
    style: Callable[[str], Style]  # the view's component style by name
    console: Console


class RowPainter:
    def __init__(self, state: PaintState) -> None:
        self.state = state
        self._part = 0  # the visual line of the row being drawn (wrap on)

    def row(self, row: Row, part: int, width: int) -> Strip:
        """Visual line `part` of `row` (0 is its first; more only with wrap on)."""
        self._part = part
        if row.kind == "header":
            return self._render_header(row, width)
        if row.kind in ("fold", "message"):
            style = self.state.style("diff--fold")
            return Strip([Segment("  " + row.label, style)]).crop_extend(0, width, style)
        if self.state.split:
            return self._render_split(row, width)
        return self._render_unified(row, width)

    def _render_header(self, row: Row, width: int) -> Strip:
        declined = row.hunk in self.state.declined
        if row.hunk == self.state.current_hunk:
            style = self.state.style("diff--header-current")
        elif declined:
            style = self.state.style("diff--header-declined")
        else:
            style = self.state.style("diff--header")
        pointer = "▶" if row.hunk == self.state.current_hunk else " "
        if self.state.show_hunk_state:
            state = "✗ declined" if declined else "✓ accepted"
            label = f"{pointer} {state}  {row.label}"
        else:
            label = f"{pointer} {row.label}"
        return Strip([Segment(label, style)]).crop_extend(0, width, style)

    def _bar(self, row: Row) -> Segment:
        if row.hunk < 0 or row.kind == "context":
            return Segment(" ")
        if row.hunk in self.state.declined:
            return Segment("▌", self.state.style("diff--bar-declined"))
        return Segment("▌", self.state.style("diff--bar-accepted"))

    def _side_styles(self, row: Row, removed: bool) -> tuple[Style, Style, str]:
        """Line style, changed-characters style and sign for one side of a changed row."""
        if row.hunk in self.state.declined:
            declined = self.state.style("diff--declined")
            return declined, declined, "-" if removed else "+"
        if removed:
            return self.state.style("diff--removed"), self.state.style("diff--removed-char"), "-"
        return self.state.style("diff--added"), self.state.style("diff--added-char"), "+"

    def _render_split(self, row: Row, width: int) -> Strip:
        left_width = (width - 1) // 2
        right_width = width - 1 - left_width
        if self.state.one_pane:
            old = self.state.diff.one_side == "old"
            side = row.old if old else row.new
            if row.kind == "context":
                return self._cell(row, side, width, Style(), Style(), " ", old=old)
            line, char, sign = self._side_styles(row, removed=old)
            return self._cell(row, side, width, line, char, sign, old=old)
        separator = Strip([Segment("│", self.state.style("diff--separator"))])
        if row.kind == "context":
            left = self._cell(row, row.old, left_width, Style(), Style(), " ", old=True)
            right = self._cell(row, row.new, right_width, Style(), Style(), " ", old=False)
        else:
            line, char, sign = self._side_styles(row, removed=True)
            left = self._cell(row, row.old, left_width, line, char, sign, old=True)
            line, char, sign = self._side_styles(row, removed=False)
            right = self._cell(row, row.new, right_width, line, char, sign, old=False)
        return Strip.join([left, separator, right])

    def _render_unified(self, row: Row, width: int) -> Strip:
        digits = self.state.diff.number_width
        gutter = self.state.style("diff--gutter")
        more = self._part > 0
        old_no = f"{row.old.number:>{digits}}" if row.old and not more else " " * digits
        new_no = f"{row.new.number:>{digits}}" if row.new and not more else " " * digits
        if row.kind == "context":
            line, char, sign, side = Style(), Style(), " ", row.old
        elif row.kind == "removed":
            (line, char, sign), side = self._side_styles(row, removed=True), row.old
        else:
            (line, char, sign), side = self._side_styles(row, removed=False), row.new
        prefix = Strip(
            [
                self._bar(row),
                Segment(f"{old_no} {new_no} ", gutter),
                Segment(f"{' ' if more else sign} ", line),
            ]
        )
        tokens = (
            None if row.hunk in self.state.declined else self._tokens_for(side, row.kind != "added")
        )
        body = self._text_strip(side, tokens, line, char, width - prefix.cell_length)
        return Strip.join([prefix, body])

    def _cell(
        self,
        row: Row,
        side: Side | None,
        width: int,
        line: Style,
        char: Style,
        sign: str,
        old: bool,
    ) -> Strip:
        """One half of a split row: bar, line number, sign, text; filler when absent."""
        digits = self.state.diff.number_width
        if side is None:
            filler = self.state.style("diff--filler")
            return Strip.blank(width, filler)
        more = self._part > 0
        number = " " * digits if more else f"{side.number:>{digits}}"
        prefix = Strip(
            [
                self._bar(row),
                Segment(f"{number} ", self.state.style("diff--gutter")),
                Segment(f"{' ' if more else sign} ", line),
            ]
        )
        # Declined lines are drawn uniformly dim: syntax colours would make them look live.
        tokens = None if row.hunk in self.state.declined else self._tokens_for(side, old)
        body = self._text_strip(side, tokens, line, char, width - prefix.cell_length)
        return Strip.join([prefix, body]).crop_extend(0, width, line)

    def _tokens_for(self, side: Side | None, old: bool) -> LineTokens | None:
        if side is None or self.state.diff.syntax is None:
            return None
        tokens = self.state.diff.syntax.line(old, side.number)
        # A hunk may carry lines that differ from the file at that number (a
        # fuzzy match); then its tokens would colour the wrong text.
        if tokens is None or sum(len(text) for text, _ in tokens) != len(side.text):
            return None
        return tokens

    def _text_strip(
        self,
        side: Side | None,
        tokens: LineTokens | None,
        line: Style,
        char: Style,
        width: int,
    ) -> Strip:
        if width <= 0:
            return Strip([])
        if side is None:
            return Strip.blank(width, line)
        text = Text(side.text, style=line, no_wrap=True, end="")
        if tokens:
            offset = 0
            for part, style in tokens:
                text.stylize(style, offset, offset + len(part))
                offset += len(part)
        for start, end in side.spans:
            text.stylize(char, start, end)
        if self.state.wrap:
            starts = wrap_starts(side.text, width)
            if self._part >= len(starts):
                return Strip.blank(width, line)
            end = starts[self._part + 1] if self._part + 1 < len(starts) else len(side.text)
            piece = Strip(text[starts[self._part] : end].render(self.state.console))
            return piece.crop_extend(0, width, line)
        strip = Strip(text.render(self.state.console))
        start = self.state.x_offset
        length = strip.cell_length
        if start:
            strip = strip.crop(start, length)
            if length > start:
                # Some of this line is off the left edge.
                strip = Strip.join([Strip([Segment(SCROLLED_MARK, line)]), strip.crop(1)])
        if length - start > width:
            strip = Strip.join([strip.crop(0, width - 1), Strip([Segment(TRUNCATED_MARK, line)])])
        return strip.crop_extend(0, width, line)
