"""Where a run of changed lines goes when equal lines let it go elsewhere: git's rules.

A run of removed (or added) lines whose first line equals the line after it
can slide down one line and still say the same; one whose last line equals
the line before it can slide up. git slides each run as far up, then as far
down, as it goes (taking in any run it meets), and then settles it:

- where it lines up with a run of changes on the other side, if it can
  (the lowest such place), so a change reads as one block of - then +;
- else, with the indent heuristic (git's default since 2.14), at the place
  whose two edges score best: blank lines and indentation decide, with
  weights git found on a corpus of real diffs (diff-slider-tools);
- else it stays at the lowest place.

`changed` marks one version's lines; it holds one more entry than there are
lines, always False, which index -1 reads too: a run never slides past the
first or last line. Every run is slid over its own stretch, and the
heuristic weighs at most a few places more than the run's size, each by a
look at most 20 lines each way, so the work is linear in the lines.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["slide_changes"]

# A line indented further than this counts as indented this far (so binary-like data is cheap).
_MAX_INDENT = 200
# Blank lines counted around a place at most.
_MAX_BLANKS = 20
# How far up the heuristic looks at most.
_MAX_SLIDING = 100

# The heuristic's weights: lower scores are better places to put a run's edge.
_START_OF_FILE = 1
_END_OF_FILE = 21
_TOTAL_BLANK = -30
_POST_BLANK = 6
_INDENT_AFTER = -4
_INDENT_AFTER_BLANK = 10
_OUTDENT = 24
_OUTDENT_BLANK = 17
_DEDENT = 23
_DEDENT_BLANK = 17
_INDENT_WEIGHT = 60

# The white space git's own ctype knows (not \v or \f).
_SPACE = frozenset(" \t\n\r")


class _Run:
    """One run of changed lines [start, end) of a version (empty: the place between two lines)."""

    def __init__(self, changed: list[bool], ids: Sequence[int] = ()) -> None:
        self.changed = changed
        self.ids = ids  # only a run that slides needs them
        self.size = len(changed) - 1
        self.start = self.end = 0
        while changed[self.end]:
            self.end += 1

    def next(self) -> bool:
        """Move to the following run, or say there is none."""
        if self.end == self.size:
            return False
        self.start = self.end = self.end + 1
        while self.changed[self.end]:
            self.end += 1
        return True

    def previous(self) -> bool:
        if self.start == 0:
            return False
        self.start = self.end = self.start - 1
        while self.changed[self.start - 1]:
            self.start -= 1
        return True

    def slide_down(self) -> bool:
        """One line down (taking in a run it then touches), if the lines allow."""
        if self.end == self.size or self.ids[self.start] != self.ids[self.end]:
            return False
        self.changed[self.start] = False
        self.changed[self.end] = True
        self.start += 1
        self.end += 1
        while self.changed[self.end]:
            self.end += 1
        return True

    def slide_up(self) -> bool:
        if self.start == 0 or self.ids[self.start - 1] != self.ids[self.end - 1]:
            return False
        self.start -= 1
        self.end -= 1
        self.changed[self.start] = True
        self.changed[self.end] = False
        while self.changed[self.start - 1]:
            self.start -= 1
        return True


def slide_changes(
    changed: list[bool], ids: list[int], other_changed: list[bool], lines: Sequence[str]
) -> None:
    """Settle each run of `changed` lines where git puts it; `ids` tell equal lines apart.

    The other version's runs are walked alongside: between two unchanged lines
    each version has one run (maybe empty), and sliding a run by one line moves
    it past one unchanged line, so the other version's run moves by one too."""
    run = _Run(changed, ids)
    other = _Run(other_changed)
    indents = _Indents(lines)
    while True:
        if run.end > run.start:
            _settle(run, other, indents)
        if not run.next():
            break
        other.next()


def _settle(run: _Run, other: _Run, indents: _Indents) -> None:
    while True:
        size = run.end - run.start
        while run.slide_up():
            other.previous()
        highest_end = run.end
        # Somewhere on its way, the other version has changes beside it.
        alongside = other.end > other.start
        while run.slide_down():
            other.next()
            alongside = alongside or other.end > other.start
        if size == run.end - run.start:
            break  # it took in no other run on the way: its stretch is known
    if run.end == highest_end:
        return
    if alongside:
        while other.end == other.start:  # up until changes on the other side are alongside
            run.slide_up()
            other.previous()
        return
    best_end = _best_end(indents, run.end, size, highest_end)
    while run.end > best_end:
        run.slide_up()
        other.previous()


def _best_end(indents: _Indents, lowest_end: int, size: int, highest_end: int) -> int:
    """The run's end whose two edges score best; the lowest of equal ones."""
    best_end, best = -1, (0, 0)
    first = max(highest_end, lowest_end - size - 1, lowest_end - _MAX_SLIDING)
    for end in range(first, lowest_end + 1):
        top_indent, top_penalty = indents.edge_score(end - size)
        bottom_indent, bottom_penalty = indents.edge_score(end)
        score = (top_indent + bottom_indent, top_penalty + bottom_penalty)
        if best_end == -1 or _compare(score, best) <= 0:
            best_end, best = end, score
    return best_end


def _compare(one: tuple[int, int], two: tuple[int, int]) -> int:
    """Below zero when `one` is the better score: indentation first, penalties next."""
    indent = (one[0] > two[0]) - (one[0] < two[0])
    return _INDENT_WEIGHT * indent + one[1] - two[1]


class _Indents:
    """Each line's indentation (tabs to multiples of 8, -1 for a blank line), found on first use."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.known: dict[int, int] = {}

    def __call__(self, k: int) -> int:
        indent = self.known.get(k)
        if indent is None:
            indent = self.known[k] = _indent(self.lines[k])
        return indent

    def edge_score(self, split: int) -> tuple[int, int]:
        """(effective indent, penalty) of a run's edge just above line `split`."""
        n = len(self.lines)
        end_of_file = split >= n
        indent = -1 if end_of_file else self(split)
        pre_blank, pre_indent = 0, -1
        for k in range(split - 1, -1, -1):
            pre_indent = self(k)
            if pre_indent != -1:
                break
            pre_blank += 1
            if pre_blank == _MAX_BLANKS:
                pre_indent = 0
                break
        post_blank, post_indent = 0, -1
        for k in range(split + 1, n):
            post_indent = self(k)
            if post_indent != -1:
                break
            post_blank += 1
            if post_blank == _MAX_BLANKS:
                post_indent = 0
                break
        return _edge_score(end_of_file, indent, pre_blank, pre_indent, post_blank, post_indent)


def _edge_score(
    end_of_file: bool,
    indent: int,
    pre_blank: int,
    pre_indent: int,
    post_blank: int,
    post_indent: int,
) -> tuple[int, int]:
    penalty = 0
    if pre_indent == -1 and pre_blank == 0:
        penalty += _START_OF_FILE
    if end_of_file:
        penalty += _END_OF_FILE
    blank_after = 1 + post_blank if indent == -1 else 0  # the line after the edge included
    blanks = pre_blank + blank_after
    penalty += _TOTAL_BLANK * blanks + _POST_BLANK * blank_after
    effective = indent if indent != -1 else post_indent
    if effective == -1 or pre_indent == -1 or effective == pre_indent:
        pass
    elif effective > pre_indent:
        penalty += _INDENT_AFTER_BLANK if blanks else _INDENT_AFTER
    elif post_indent != -1 and post_indent > effective:
        penalty += _OUTDENT_BLANK if blanks else _OUTDENT  # likely a new block's start
    else:
        penalty += _DEDENT_BLANK if blanks else _DEDENT  # likely a block's end
    return effective, penalty


def _indent(line: str) -> int:
    width = 0
    for char in line:
        if char not in _SPACE:
            return width
        if char == " ":
            width += 1
        elif char == "\t":
            width += 8 - width % 8
        if width >= _MAX_INDENT:
            return _MAX_INDENT
    return -1
