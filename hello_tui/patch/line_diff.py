"""The one line diff: which lines of two versions stay, chosen as `git diff` chooses them.

`line_ops(a, b)` compares two lists of lines (a line with its ending, where
the ending counts) and answers difflib-style opcodes; `hunk_groups(ops,
context)` cuts them into hunks as git does. Everything hello-tui prints or
shows as a diff comes from these two: the notes and the chat (written_diff),
the plans' hunks (rebuild), Codex patches and the review's display model.

The lines are git's own choice with its defaults (Myers, not minimal, the
indent heuristic), so the diff is git's byte for byte. The steps:

1. Lines equal at both ends are set aside.
2. A line the other version lacks is changed whatever the diff, so it takes
   no part in the search; nor does a line that occurs very often there
   (about the square root of the file's length, or more) when it sits among
   such lines: the blank lines of a rewritten stretch.
3. Myers' search (middle snake, divide and conquer) runs on what is left.
   Past an edit cost of 256 it stops looking for the best path and takes a
   good one (a long run of equal lines, or the furthest reach), so the work
   is bounded by the lines times that cost however many lines repeat.
4. Each run of changed lines slides over equal neighbours to where git puts
   it (diff_slides.py).

Each step is linear in the lines, the search aside, which is linear in the
lines times the edit cost it stops at: 256, more only past 32,000 lines (the
square root of the lines, roughly).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from itertools import pairwise

from hello_tui.patch.diff_slides import slide_changes

# (tag, old start, old end, new start, new end), as difflib's opcodes.
Op = tuple[str, int, int, int, int]

__all__ = ["Op", "hunk_groups", "line_ops"]

# A run of this many equal lines is worth cutting the search at.
_GOOD_RUN = 20
# The edit cost past which such a run ends the search.
_GOOD_RUN_FROM_COST = 256
# The least edit cost at which the search takes its furthest reach.
_MIN_COST_LIMIT = 256
# A cut is good when it got this many times its cost further than the diagonal.
_GOOD_REACH = 4
# How often a line may occur in the other version before it counts as frequent.
_MAX_FREQUENT = 1024
# How far around a frequent line to look for the lines the other version lacks.
_FREQUENT_WINDOW = 100
_UNREACHED = sys.maxsize


def _change_tag(i1: int, i2: int, j1: int, j2: int) -> str:
    if i1 < i2 and j1 < j2:
        return "replace"
    return "delete" if i1 < i2 else "insert"


def line_ops(a: Sequence[str], b: Sequence[str]) -> list[Op]:
    """Opcodes turning lines `a` into lines `b`: equal runs and git's changes between them."""
    ids: dict[str, int] = {}
    ids_a = [ids.setdefault(line, len(ids)) for line in a]
    ids_b = [ids.setdefault(line, len(ids)) for line in b]
    changed_a = [False] * (len(a) + 1)
    changed_b = [False] * (len(b) + 1)
    start, end_a, end_b = _common_ends(ids_a, ids_b)
    searched_a = _searched(ids_a, ids_b, start, end_a, changed_a)
    searched_b = _searched(ids_b, ids_a, start, end_b, changed_b)
    _search(searched_a, searched_b, ids_a, ids_b, changed_a, changed_b)
    slide_changes(changed_a, ids_a, changed_b, a)
    slide_changes(changed_b, ids_b, changed_a, b)
    return _ops(changed_a, changed_b)


def _common_ends(a: list[int], b: list[int]) -> tuple[int, int, int]:
    """Where the lines equal at the start end, and where those equal at the end begin."""
    shorter = min(len(a), len(b))
    start = 0
    while start < shorter and a[start] == b[start]:
        start += 1
    tail = 0
    while tail < shorter - start and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return start, len(a) - tail, len(b) - tail


# ---------------------------------------------------------------- which lines are searched


def _rough_sqrt(n: int) -> int:
    """git's square root: the power of two with half as many bits as n, rounded up."""
    root = 1
    while n > 0:
        n >>= 2
        root <<= 1
    return root


def _searched(
    ids: list[int], other: list[int], start: int, end: int, changed: list[bool]
) -> list[int]:
    """Indexes of lines [start, end) that take part in the search; the others are marked changed.

    Each line is absent from the other version, ordinary, or frequent there
    (as often as `_rough_sqrt` of this version's length, at most `_MAX_FREQUENT`).
    A frequent line is left out when absent lines crowd it (`_crowded`)."""
    counts: dict[int, int] = {}
    for line in other:  # the whole other version, its equal ends too, as git counts
        counts[line] = counts.get(line, 0) + 1
    limit = min(_rough_sqrt(len(ids)), _MAX_FREQUENT)
    kinds = []
    for k in range(start, end):
        seen = counts.get(ids[k], 0)
        kinds.append(_ABSENT if seen == 0 else _FREQUENT if seen >= limit else _ORDINARY)
    crowded = _crowded(kinds) if _FREQUENT in kinds else None
    searched = []
    for k, kind in enumerate(kinds):
        if kind == _ORDINARY or (kind == _FREQUENT and crowded is not None and not crowded[k]):
            searched.append(start + k)
        else:
            changed[start + k] = True
    return searched


_ABSENT, _ORDINARY, _FREQUENT = 0, 1, 2


def _crowded(kinds: list[int]) -> list[bool]:
    """For each line: is it frequent, with absent lines on both sides outnumbering
    the frequent ones more than three to one (itself counted once each way)?

    The stretch looked at runs from the line to the nearest ordinary line on
    each side, at most `_FREQUENT_WINDOW` lines. Prefix counts answer each line
    in constant time: a file of nothing but frequent lines costs no more."""
    n = len(kinds)
    absent_before = [0] * (n + 1)  # absent lines among kinds[:k]
    ordinary_before = [-1] * n  # the nearest ordinary line before k, or -1
    last = -1
    for k, kind in enumerate(kinds):
        absent_before[k + 1] = absent_before[k] + (kind == _ABSENT)
        ordinary_before[k] = last
        if kind == _ORDINARY:
            last = k
    ordinary_after = [n] * n
    last = n
    for k in range(n - 1, -1, -1):
        ordinary_after[k] = last
        if kinds[k] == _ORDINARY:
            last = k
    out = [False] * n
    for k, kind in enumerate(kinds):
        if kind != _FREQUENT:
            continue
        lo = max(ordinary_before[k] + 1, k - _FREQUENT_WINDOW, 0)
        absent_lo = absent_before[k] - absent_before[lo]
        if not absent_lo:
            continue
        hi = min(ordinary_after[k] - 1, k + _FREQUENT_WINDOW, n - 1)
        absent_hi = absent_before[hi + 1] - absent_before[k + 1]
        if not absent_hi:
            continue
        frequent = (k - lo - absent_lo) + (hi - k - absent_hi) + 2
        out[k] = frequent * 4 < frequent + absent_lo + absent_hi
    return out


# ---------------------------------------------------------------- the search


def _search(
    index_a: list[int],
    index_b: list[int],
    ids_a: list[int],
    ids_b: list[int],
    changed_a: list[bool],
    changed_b: list[bool],
) -> None:
    """Myers' search over the searched lines; marks the changed ones.

    Each box (a stretch of both versions) loses its equal ends, then is cut at
    its middle snake into two boxes, until one side of a box is empty: the
    other side's lines are changed. Both halves of a cut where the two
    directions met, and the reached half of a cut taken early, are searched
    without shortcuts: their cost is at most the cost spent already."""
    a = [ids_a[k] for k in index_a]
    b = [ids_b[k] for k in index_b]
    reach = _Reach(len(a), len(b))
    boxes = [(0, len(a), 0, len(b), False)]
    while boxes:
        lo_a, hi_a, lo_b, hi_b, minimal = boxes.pop()
        while lo_a < hi_a and lo_b < hi_b and a[lo_a] == b[lo_b]:
            lo_a += 1
            lo_b += 1
        while lo_a < hi_a and lo_b < hi_b and a[hi_a - 1] == b[hi_b - 1]:
            hi_a -= 1
            hi_b -= 1
        if lo_a == hi_a:
            for k in range(lo_b, hi_b):
                changed_b[index_b[k]] = True
        elif lo_b == hi_b:
            for k in range(lo_a, hi_a):
                changed_a[index_a[k]] = True
        else:
            cut_a, cut_b, minimal_lo, minimal_hi = reach.cut(a, b, lo_a, hi_a, lo_b, hi_b, minimal)
            boxes.append((cut_a, hi_a, cut_b, hi_b, minimal_hi))
            boxes.append((lo_a, cut_a, lo_b, cut_b, minimal_lo))


class _Reach:
    """The furthest line of `a` reached on each diagonal (a's index minus b's), forward and
    backward, shared by every box. A list of len(a) + len(b) + 3 indexed by the diagonal
    itself holds them all: diagonals run from -len(b) - 1 to len(a) + 1, and a negative one
    reads from the list's end, which no positive one reaches."""

    def __init__(self, len_a: int, len_b: int) -> None:
        self.forward = [0] * (len_a + len_b + 3)
        self.backward = [0] * (len_a + len_b + 3)
        self.cost_limit = max(_rough_sqrt(len_a + len_b + 3), _MIN_COST_LIMIT)

    def cut(
        self,
        a: list[int],
        b: list[int],
        lo_a: int,
        hi_a: int,
        lo_b: int,
        hi_b: int,
        minimal: bool,
    ) -> tuple[int, int, bool, bool]:
        """Where to cut the box, and whether each half must then be searched minimally."""
        fwd, bwd = self.forward, self.backward
        low, high = lo_a - hi_b, hi_a - lo_b  # the box's diagonals
        f_mid, b_mid = lo_a - lo_b, hi_a - hi_b
        odd = (f_mid - b_mid) & 1
        f_lo = f_hi = f_mid
        b_lo = b_hi = b_mid
        fwd[f_mid] = lo_a
        bwd[b_mid] = hi_a
        cost = 0
        while True:
            cost += 1
            # One more edit widens the diagonals reached by one each way, inside the box;
            # the diagonal just outside reads as never reached.
            if f_lo > low:
                f_lo -= 1
                fwd[f_lo - 1] = -1
            else:
                f_lo += 1
            if f_hi < high:
                f_hi += 1
                fwd[f_hi + 1] = -1
            else:
                f_hi -= 1
            good_run = _reach_forward(a, b, fwd, f_lo, f_hi, hi_a, hi_b)
            met = _meeting(fwd, bwd, f_lo, f_hi, b_lo, b_hi) if odd else None
            if met is not None:
                return fwd[met], fwd[met] - met, True, True
            if b_lo > low:
                b_lo -= 1
                bwd[b_lo - 1] = _UNREACHED
            else:
                b_lo += 1
            if b_hi < high:
                b_hi += 1
                bwd[b_hi + 1] = _UNREACHED
            else:
                b_hi -= 1
            good_run = _reach_backward(a, b, bwd, b_lo, b_hi, lo_a, lo_b) or good_run
            met = None if odd else _meeting(fwd, bwd, b_lo, b_hi, f_lo, f_hi)
            if met is not None:
                return bwd[met], bwd[met] - met, True, True
            if minimal:
                continue
            box = (lo_a, hi_a, lo_b, hi_b)
            if good_run and cost > _GOOD_RUN_FROM_COST:
                found = _good_forward(a, b, box, fwd, f_lo, f_hi, f_mid, cost)
                if found is not None:
                    return found[0], found[1], True, False
                found = _good_backward(a, b, box, bwd, b_lo, b_hi, b_mid, cost)
                if found is not None:
                    return found[0], found[1], False, True
            if cost >= self.cost_limit:
                return _furthest(box, fwd, f_lo, f_hi, bwd, b_lo, b_hi)


def _reach_forward(
    a: list[int], b: list[int], fwd: list[int], lo: int, hi: int, hi_a: int, hi_b: int
) -> bool:
    """One more edit on each diagonal from lo to hi, then the run of equal lines after it;
    says whether some run was a good one. The hottest loop of the diff."""
    good_run = False
    for d in range(hi, lo - 1, -2):
        left, right = fwd[d - 1], fwd[d + 1]
        i = left + 1 if left >= right else right
        j = i - d
        if i < hi_a and j < hi_b and a[i] == b[j]:
            before = i
            i += 1
            j += 1
            while i < hi_a and j < hi_b and a[i] == b[j]:
                i += 1
                j += 1
            if i - before > _GOOD_RUN:
                good_run = True
        fwd[d] = i
    return good_run


def _reach_backward(
    a: list[int], b: list[int], bwd: list[int], lo: int, hi: int, lo_a: int, lo_b: int
) -> bool:
    """The same from the box's end towards its start."""
    good_run = False
    for d in range(hi, lo - 1, -2):
        left, right = bwd[d - 1], bwd[d + 1]
        i = left if left < right else right - 1
        j = i - d
        if i > lo_a and j > lo_b and a[i - 1] == b[j - 1]:
            before = i
            i -= 1
            j -= 1
            while i > lo_a and j > lo_b and a[i - 1] == b[j - 1]:
                i -= 1
                j -= 1
            if before - i > _GOOD_RUN:
                good_run = True
        bwd[d] = i
    return good_run


def _meeting(
    fwd: list[int], bwd: list[int], lo: int, hi: int, other_lo: int, other_hi: int
) -> int | None:
    """The highest diagonal of lo..hi (step 2), also in other_lo..other_hi, where the
    forward reach got as far as the backward one: the paths meet there."""
    top = hi if hi <= other_hi else hi - (hi - other_hi + 1) // 2 * 2
    for d in range(top, max(lo, other_lo) - 1, -2):
        if bwd[d] <= fwd[d]:
            return d
    return None


Box = tuple[int, int, int, int]


def _good_forward(
    a: list[int], b: list[int], box: Box, fwd: list[int], lo: int, hi: int, mid: int, cost: int
) -> tuple[int, int] | None:
    """The forward reach that got furthest for its cost and ends a run of `_GOOD_RUN` equal lines."""
    lo_a, hi_a, lo_b, hi_b = box
    best, found = 0, None
    for d in range(hi, lo - 1, -2):
        i = fwd[d]
        j = i - d
        value = (i - lo_a) + (j - lo_b) - abs(d - mid)
        if (
            value > _GOOD_REACH * cost
            and value > best
            and lo_a + _GOOD_RUN <= i < hi_a
            and lo_b + _GOOD_RUN <= j < hi_b
            and a[i - _GOOD_RUN : i] == b[j - _GOOD_RUN : j]
        ):
            best, found = value, (i, j)
    return found


def _good_backward(
    a: list[int], b: list[int], box: Box, bwd: list[int], lo: int, hi: int, mid: int, cost: int
) -> tuple[int, int] | None:
    """The same from the box's end: a backward reach that starts a long run of equal lines."""
    lo_a, hi_a, lo_b, hi_b = box
    best, found = 0, None
    for d in range(hi, lo - 1, -2):
        i = bwd[d]
        j = i - d
        value = (hi_a - i) + (hi_b - j) - abs(d - mid)
        if (
            value > _GOOD_REACH * cost
            and value > best
            and lo_a < i <= hi_a - _GOOD_RUN
            and lo_b < j <= hi_b - _GOOD_RUN
            and a[i : i + _GOOD_RUN] == b[j : j + _GOOD_RUN]
        ):
            best, found = value, (i, j)
    return found


def _furthest(
    box: Box, fwd: list[int], f_lo: int, f_hi: int, bwd: list[int], b_lo: int, b_hi: int
) -> tuple[int, int, bool, bool]:
    """The search has cost enough: cut where either direction reached furthest."""
    lo_a, hi_a, lo_b, hi_b = box
    f_best, f_i = -1, -1
    for d in range(f_hi, f_lo - 1, -2):
        i = min(fwd[d], hi_a)
        j = i - d
        if hi_b < j:
            i, j = hi_b + d, hi_b
        if f_best < i + j:
            f_best, f_i = i + j, i
    b_best, b_i = _UNREACHED, _UNREACHED
    for d in range(b_hi, b_lo - 1, -2):
        i = max(lo_a, bwd[d])
        j = i - d
        if j < lo_b:
            i, j = lo_b + d, lo_b
        if i + j < b_best:
            b_best, b_i = i + j, i
    if (hi_a + hi_b) - b_best < f_best - (lo_a + lo_b):
        return f_i, f_best - f_i, True, False
    return b_i, b_best - b_i, False, True


# ---------------------------------------------------------------- opcodes and hunks


def _ops(changed_a: list[bool], changed_b: list[bool]) -> list[Op]:
    """The marks as opcodes: unchanged lines pair up in order, changes lie between them."""
    len_a, len_b = len(changed_a) - 1, len(changed_b) - 1
    ops: list[Op] = []
    i = j = 0
    while i < len_a or j < len_b:
        i0, j0 = i, j
        while i < len_a and j < len_b and not changed_a[i] and not changed_b[j]:
            i += 1
            j += 1
        if i > i0:
            ops.append(("equal", i0, i, j0, j))
        i0, j0 = i, j
        while i < len_a and changed_a[i]:
            i += 1
        while j < len_b and changed_b[j]:
            j += 1
        if i > i0 or j > j0:
            ops.append((_change_tag(i0, i, j0, j), i0, i, j0, j))
        elif i < len_a or j < len_b:
            raise AssertionError("unchanged lines left on one side only")
    return ops


def hunk_groups(ops: Sequence[Op], context: int) -> list[list[Op]]:
    """The changes as git's hunks: each with up to `context` equal lines around it, and
    changes at most 2 * context lines apart in one hunk (their equal lines between them)."""
    len_a = ops[-1][2] if ops else 0
    groups: list[list[Op]] = []
    for op in ops:
        if op[0] == "equal":
            continue
        if groups and op[1] - groups[-1][-1][2] <= 2 * context:
            groups[-1].append(op)
        else:
            groups.append([op])
    return [_with_context(group, len_a, context) for group in groups]


def _with_context(group: list[Op], len_a: int, context: int) -> list[Op]:
    first, last = group[0], group[-1]
    s1 = max(first[1] - context, 0)
    e1 = min(last[2] + context, len_a)
    shift = first[3] - first[1]
    ops: list[Op] = [("equal", s1, first[1], s1 + shift, first[3])]
    for prev, op in pairwise(group):
        ops += [prev, ("equal", prev[2], op[1], prev[4], op[3])]
    shift = last[4] - last[2]
    ops += [last, ("equal", last[2], e1, last[2] + shift, e1 + shift)]
    return [op for op in ops if op[0] != "equal" or op[2] > op[1]]
