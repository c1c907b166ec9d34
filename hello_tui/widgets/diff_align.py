"""Line and character alignment for the diff view: which lines of two versions pair up.

Pure difflib work, no Textual and no rows: lines are anchored as git's patience
diff anchors them (unique lines first, difflib between the anchors), grouped
into hunks with context, and changed line pairs are compared character by
character for highlighting. `diff_rows` turns the result into display rows.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left
from typing import Literal

from hello_tui.core.hunk_header import hunk_header
from hello_tui.engine.types import Hunk

Span = tuple[int, int]
# Character-level highlighting is quadratic in line length; beyond this the
# whole line is simply marked as changed.
MAX_INTRALINE_CHARS = 400
# A stretch of lines with no unique line to anchor on longer than this is aligned
# with difflib's autojunk heuristic; see line_opcodes.
LARGE_UNANCHORED = 400


OpcodeTag = Literal["replace", "delete", "insert", "equal"]
Opcode = tuple[OpcodeTag, int, int, int, int]


def line_opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """difflib-style opcodes turning lines a into lines b, anchored as git's patience diff.

    Lines that occur exactly once on each side are matched first (in order), and
    difflib only aligns the short stretches between them: SequenceMatcher alone
    (without autojunk, which would give up on common lines) is quadratic in the
    repeated lines, minutes for a 10,000-line file with 2,500 blank lines.
    """
    ops: list[Opcode] = []
    _diff_range(a, b, 0, len(a), 0, len(b), ops)
    merged: list[Opcode] = []
    for op in ops:
        if op[1] == op[2] and op[3] == op[4]:
            continue
        if merged and (merged[-1][0] == "equal") == (op[0] == "equal"):
            _, i1, _, j1, _ = merged[-1]
            i2, j2 = op[2], op[4]
            tag = "equal" if op[0] == "equal" else change_tag(i1, i2, j1, j2)
            merged[-1] = (tag, i1, i2, j1, j2)
        else:
            merged.append(op)
    return merged


def change_tag(i1: int, i2: int, j1: int, j2: int) -> OpcodeTag:
    if i1 < i2 and j1 < j2:
        return "replace"
    return "delete" if i1 < i2 else "insert"


def _diff_range(
    a: list[str], b: list[str], lo_a: int, hi_a: int, lo_b: int, hi_b: int, ops: list[Opcode]
) -> None:
    # Common head and tail first: they are equal whatever lies between.
    head = 0
    while lo_a + head < hi_a and lo_b + head < hi_b and a[lo_a + head] == b[lo_b + head]:
        head += 1
    tail = 0
    while (
        hi_a - tail > lo_a + head
        and hi_b - tail > lo_b + head
        and a[hi_a - tail - 1] == b[hi_b - tail - 1]
    ):
        tail += 1
    if head:
        ops.append(("equal", lo_a, lo_a + head, lo_b, lo_b + head))
    lo_a, lo_b, hi_a, hi_b = lo_a + head, lo_b + head, hi_a - tail, hi_b - tail
    if lo_a < hi_a or lo_b < hi_b:
        anchors = _unique_anchors(a, b, lo_a, hi_a, lo_b, hi_b)
        if not anchors:
            # Past a few hundred lines with nothing unique to anchor on, difflib's own
            # heuristic (popular lines are junk) keeps this fast; the hunks stay exact,
            # only coarser.
            big = hi_a - lo_a > LARGE_UNANCHORED or hi_b - lo_b > LARGE_UNANCHORED
            matcher = difflib.SequenceMatcher(None, a[lo_a:hi_a], b[lo_b:hi_b], autojunk=big)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes():
                ops.append((tag, lo_a + i1, lo_a + i2, lo_b + j1, lo_b + j2))
        else:
            at_a, at_b = lo_a, lo_b
            for i, j in anchors:
                _diff_range(a, b, at_a, i, at_b, j, ops)
                ops.append(("equal", i, i + 1, j, j + 1))
                at_a, at_b = i + 1, j + 1
            _diff_range(a, b, at_a, hi_a, at_b, hi_b, ops)
    if tail:
        ops.append(("equal", hi_a, hi_a + tail, hi_b, hi_b + tail))


def _unique_anchors(
    a: list[str], b: list[str], lo_a: int, hi_a: int, lo_b: int, hi_b: int
) -> list[tuple[int, int]]:
    """(i, j) of lines unique on both sides, the longest run in the same order on both."""
    count_a: dict[str, int] = {}
    for i in range(lo_a, hi_a):
        count_a[a[i]] = count_a.get(a[i], 0) + 1
    where_b: dict[str, int] = {}
    count_b: dict[str, int] = {}
    for j in range(lo_b, hi_b):
        line = b[j]
        if count_a.get(line) == 1:
            count_b[line] = count_b.get(line, 0) + 1
            where_b[line] = j
    pairs = [
        (i, where_b[a[i]])
        for i in range(lo_a, hi_a)
        if count_a[a[i]] == 1 and count_b.get(a[i]) == 1
    ]
    return _longest_increasing(pairs)


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of pairs (sorted by i) whose j also increases (patience sort)."""
    tops: list[int] = []  # j at the top of each pile
    top_index: list[int] = []  # index into pairs of each pile's top
    back: list[int] = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pile = bisect_left(tops, j)
        if pile:
            back[k] = top_index[pile - 1]
        if pile == len(tops):
            tops.append(j)
            top_index.append(k)
        else:
            tops[pile] = j
            top_index[pile] = k
    out: list[tuple[int, int]] = []
    k = top_index[-1] if top_index else -1
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    out.reverse()
    return out


def grouped_opcodes(ops: list[Opcode], context: int) -> list[list[Opcode]]:
    """Changes with up to `context` equal lines around them, grouped as difflib's
    get_grouped_opcodes groups them (changes closer than 2 * context share a group)."""
    if not any(op[0] != "equal" for op in ops):
        return []
    codes = list(ops)
    tag, i1, i2, j1, j2 = codes[0]
    if tag == "equal":
        codes[0] = (tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    tag, i1, i2, j1, j2 = codes[-1]
    if tag == "equal":
        codes[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    groups: list[list[Opcode]] = []
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return [g for g in groups if any(op[0] != "equal" for op in g)]


def hunks_from_texts(old_text: str, new_text: str, context: int = 0) -> list[Hunk]:
    """Hunks turning old_text into new_text, as difflib sees them.

    Used for the backup viewer, for files edited by the user during review and
    by tests that build plans by hand. Lines keep their endings, like the
    engine's hunks.
    """
    old = old_text.splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)
    hunks: list[Hunk] = []
    for group in grouped_opcodes(line_opcodes(old, new), context):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        hunks.append(
            Hunk(
                index=len(hunks),
                old_start=i1,
                old_lines=old[i1:i2],
                new_lines=new[j1:j2],
                header=hunk_header(i1, i2 - i1, j1, j2 - j1),
            )
        )
    return hunks


def changed_spans(old: str, new: str) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    """Character ranges that differ between two versions of a line."""
    if len(old) > MAX_INTRALINE_CHARS or len(new) > MAX_INTRALINE_CHARS:
        return ((0, len(old)),) if old else (), ((0, len(new)),) if new else ()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    old_spans: list[Span] = []
    new_spans: list[Span] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old_spans.append((i1, i2))
        if j2 > j1:
            new_spans.append((j1, j2))
    return tuple(old_spans), tuple(new_spans)
