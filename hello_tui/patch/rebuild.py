"""Hunks <-> file contents: apply a set of hunks to a file's lines, and diff two texts into hunks.

Untouched lines keep their own endings; a new line takes the ending its hunk
gives it (a git diff's own bytes) or else the file's first-seen ending; a line
left without an ending in the middle of the file gets one. Applying a subset
of hunks (partial acceptance) uses the same function. `diff_hunks` and
`diff_texts` go the other way, by the one line diff (line_diff.py), so a
plan's hunks are the changes git would show; `diff_texts` compares endings
too, so its hunks rebuild the new bytes exactly.
"""

from __future__ import annotations

from hello_tui.patch.line_diff import line_ops
from hello_tui.patch.lines import TextFile, split_lines
from hello_tui.patch.types import Hunk


def apply_hunks(tf: TextFile, hunks: list[Hunk]) -> TextFile:
    lines, eols = tf.lines, tf.eols
    n = len(lines)
    eol = tf.default_eol
    out_l: list[str] = []
    out_e: list[str] = []
    pos = 0
    for h in sorted(hunks, key=lambda h: (h.old_start, h.index)):
        out_l += lines[pos : h.old_start]
        out_e += eols[pos : h.old_start]
        out_l += h.new_lines
        if h.new_eols is None:
            out_e += [eol] * len(h.new_lines)
        else:
            out_e += [eol if e is None else e for e in h.new_eols]
        pos = h.old_start + len(h.old_lines)
        if h.no_eol and h.new_lines and pos >= n:
            out_e[-1] = ""
    out_l += lines[pos:]
    out_e += eols[pos:]
    # Only the last line may lack an ending; give one to any other line that lost it.
    last = len(out_e) - 1
    i = 0
    while True:
        try:
            i = out_e.index("", i, last)
        except ValueError:
            break
        out_e[i] = eol
    return TextFile(out_l, out_e, tf.bom)


def _keys(lines: list[str], has_final_eol: bool) -> list[str]:
    """Comparison keys where a last line without an ending differs from the same text with one."""
    keys = list(lines)
    if keys and not has_final_eol:
        keys[-1] = keys[-1] + "\x00no-eol"
    return keys


def diff_hunks(old: TextFile, new_text: str) -> list[Hunk]:
    """Hunks turning `old` into `new_text` (its line endings are the file's business, not the text's)."""
    new_lines, new_eols = split_lines(new_text.removeprefix("\ufeff"))
    old_final = bool(old.eols) and old.eols[-1] != ""
    new_final = bool(new_eols) and new_eols[-1] != ""
    a = _keys(old.lines, old_final or not old.lines)
    b = _keys(new_lines, new_final or not new_lines)
    hunks: list[Hunk] = []
    for tag, i1, i2, j1, j2 in line_ops(a, b):
        if tag == "equal":
            continue
        hunk = Hunk(len(hunks), i1, old.lines[i1:i2], new_lines[j1:j2])
        if j2 == len(new_lines) and j2 > j1 and not new_final:
            hunk.no_eol = True
        hunks.append(hunk)
    return hunks


def diff_texts(old: TextFile, new: TextFile) -> list[Hunk]:
    """Hunks turning `old` into `new` exactly: a line whose ending changes is a change."""
    a = list(map(str.__add__, old.lines, old.eols))
    b = list(map(str.__add__, new.lines, new.eols))
    hunks: list[Hunk] = []
    for tag, i1, i2, j1, j2 in line_ops(a, b):
        if tag == "equal":
            continue
        hunk = Hunk(len(hunks), i1, old.lines[i1:i2], new.lines[j1:j2])
        hunk.new_eols = list(new.eols[j1:j2])
        hunk.no_eol = j2 == len(new.lines) and j2 > j1 and new.eols[-1] == ""
        hunks.append(hunk)
    return hunks
