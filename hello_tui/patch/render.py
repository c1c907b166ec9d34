"""Writing patches: a unified diff of a plan (for review and notes) and Codex patches from two texts.

The unified diff is git's: it applies with `git apply` and with this engine, byte for byte.

`codex_patch_text(path, old, new)` produces a patch our matcher places
unambiguously: each chunk's context grows until its lines occur exactly once
from where the search for it starts.
"""

from __future__ import annotations

import difflib

from hello_tui.core.hunk_header import git_range
from hello_tui.patch.lines import split_git_lines, split_lines
from hello_tui.patch.matcher import LineIndex, find_sequence
from hello_tui.patch.types import PatchPlan

NO_EOL = "\\ No newline at end of file"


def _split(text: str) -> tuple[list[str], list[str]]:
    return split_lines(text.removeprefix("\ufeff"))


def _final(eols: list[str]) -> bool:
    return not eols or eols[-1] != ""


def _matcher(
    a: list[str], a_eols: list[str], b: list[str], b_eols: list[str]
) -> difflib.SequenceMatcher:
    """Lines compared with their endings, so a changed ending (or final newline) is a change."""
    ka = list(map(str.__add__, a, a_eols))
    kb = list(map(str.__add__, b, b_eols))
    return difflib.SequenceMatcher(None, ka, kb, autojunk=False)


def _render_lines(
    ops: list[tuple[str, int, int, int, int]],
    a: list[str],
    a_final: bool,
    b: list[str],
    b_final: bool,
    a_cr: list[str] | None = None,
    b_cr: list[str] | None = None,
) -> list[str]:
    """Diff lines; `a_cr`/`b_cr` give each line's CR (a git diff keeps it before its LF)."""
    out: list[str] = []
    ca = a_cr or [""] * len(a)
    cb = b_cr or [""] * len(b)
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            for i in range(i1, i2):
                out.append(" " + a[i] + ca[i])
                if i == len(a) - 1 and not a_final:
                    out.append(NO_EOL)
            continue
        for i in range(i1, i2):
            out.append("-" + a[i] + ca[i])
            if i == len(a) - 1 and not a_final:
                out.append(NO_EOL)
        for j in range(j1, j2):
            out.append("+" + b[j] + cb[j])
            if j == len(b) - 1 and not b_final:
                out.append(NO_EOL)
    return out


def _crs(eols: list[str]) -> list[str]:
    return ["\r" if eol == "\r\n" else "" for eol in eols]


def unified_diff_text(
    path: str, old: str | None, new: str | None, new_path: str | None = None
) -> str:
    """A unified diff as git writes it: lines split at LF, a CRLF line keeps its CR."""
    a, a_eols = split_git_lines(old or "")
    b, b_eols = split_git_lines(new or "")
    a_final, b_final = _final(a_eols), _final(b_eols)
    src = "/dev/null" if old is None else f"a/{path}"
    dst = "/dev/null" if new is None else f"b/{new_path or path}"
    out = [f"--- {src}", f"+++ {dst}"]
    groups = _matcher(a, a_eols, b, b_eols).get_grouped_opcodes(3)
    for group in groups:
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        out.append(f"@@ -{git_range(i1, i2 - i1)} +{git_range(j1, j2 - j1)} @@")
        out.extend(_render_lines(group, a, a_final, b, b_final, _crs(a_eols), _crs(b_eols)))
    return "\n".join(out) + "\n"


def render_plan_diff(plan: PatchPlan) -> str:
    """The whole plan as one unified diff, for review screens and notes."""
    parts = []
    for fp in plan.files:
        old = None if fp.op == "add" else (fp.old_text or "")
        new = None if fp.op == "delete" else (fp.new_text or "")
        parts.append(unified_diff_text(fp.path, old, new, fp.move_to))
    return "".join(parts)


def codex_patch_text(path: str, old: str, new: str) -> str:
    """A Codex `*** Update File` patch turning `old` into `new`, unambiguous for our matcher."""
    a, a_eols = _split(old)
    b, b_eols = _split(new)
    a_final, b_final = _final(a_eols), _final(b_eols)
    ops = _matcher(a, a_eols, b, b_eols).get_opcodes()
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
        out.extend(_render_lines(sub, a, a_final, b, b_final))
        cursor = e
        k += 1
    out.append("*** End Patch")
    return "\n".join(out) + "\n"


def _sub_ops(ops, s, e, first_change, last_change):
    """The opcodes restricted to old lines [s, e), keeping the changes from first to last."""
    result = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            lo, hi = max(i1, s), min(i2, e)
            if lo < hi:
                result.append(("equal", lo, hi, j1 + lo - i1, j1 + hi - i1))
        elif first_change[1] <= i1 and (i1, j1) <= (last_change[1], last_change[3]):
            result.append((tag, i1, i2, j1, j2))
    return result
