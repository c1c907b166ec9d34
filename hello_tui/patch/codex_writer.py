"""Writing Codex patches: `codex_patch_text(path, old, new)`, for a model to read back.

A Codex patch is a format of its own (git diffs are written by written_diff.py,
whose line rendering and line diff this shares): each chunk's context grows
until its lines occur exactly once from where the search for it starts, so our
matcher places it unambiguously.
"""

from __future__ import annotations

from hello_tui.patch.line_diff import Op, line_ops
from hello_tui.patch.lines import split_lines
from hello_tui.patch.matcher import LineIndex, find_sequence
from hello_tui.patch.written_diff import Lines, op_lines


def _split(text: str) -> Lines:
    return Lines(*split_lines(text.removeprefix("\ufeff")))


def codex_patch_text(path: str, old: str, new: str) -> str:
    """A Codex `*** Update File` patch turning `old` into `new`, unambiguous for our matcher."""
    old_lines, new_lines = _split(old), _split(new)
    a = old_lines.lines
    ops: list[Op] = line_ops(old_lines.keys(), new_lines.keys())
    changes = [op for op in ops if op[0] != "equal"]
    out = ["*** Begin Patch", f"*** Update File: {path}"]
    if not changes:
        return ""
    index = LineIndex(a, list(a))
    cursor = 0
    k = 0
    while k < len(changes):
        first = k
        s = max(changes[k][1] - 3, cursor)
        e = min(changes[k][2] + 3, len(a))
        while True:
            # Take in every change whose old range touches the chunk.
            while k + 1 < len(changes) and changes[k + 1][1] <= e:
                k += 1
                e = max(e, min(changes[k][2] + 3, len(a)))
            old_seq = a[s:e]
            if not old_seq:
                break
            found, _ = find_sequence(index, old_seq, cursor, False)
            if found == [s]:
                break
            if s == cursor and e == len(a):
                break
            s = max(s - 1, cursor)
            e = min(e + 1, len(a))
        out.append("@@")
        sub = _sub_ops(ops, s, e, changes[first], changes[k])
        out.extend(op_lines(sub, old_lines, new_lines, carriage_returns=False))
        cursor = e
        k += 1
    out.append("*** End Patch")
    return "\n".join(out) + "\n"


def _sub_ops(ops: list[Op], s: int, e: int, first_change: Op, last_change: Op) -> list[Op]:
    """The opcodes restricted to old lines [s, e), keeping the changes from first to last."""
    result: list[Op] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            lo, hi = max(i1, s), min(i2, e)
            if lo < hi:
                result.append(("equal", lo, hi, j1 + lo - i1, j1 + hi - i1))
        elif first_change[1] <= i1 and (i1, j1) <= (last_change[1], last_change[3]):
            result.append((tag, i1, i2, j1, j2))
    return result
