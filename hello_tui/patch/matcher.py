"""Locating Update chunks in a file: forward search, four matching passes, ambiguity, errors.

Passes, in order: exact; ignoring trailing whitespace; ignoring surrounding
whitespace; with Unicode punctuation normalised (dashes, curly quotes,
non-breaking and other spaces). Each pass uses an index from a line to its
positions, so a chunk is found by checking the few places where its rarest
line occurs, never by rescanning the file from the top.

A chunk that matches in several places, with no `@@` header or line number
to decide, is an error listing the candidates. A chunk that matches nowhere
is an error showing the lines expected and the closest region of the file.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress

from hello_tui.patch.model import Chunk
from hello_tui.patch.types import Hunk, PatchError

_PUNCT = str.maketrans(
    {
        **{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"},
        **{c: "'" for c in "\u2018\u2019\u201a\u201b"},
        **{c: '"' for c in "\u201c\u201d\u201e\u201f"},
        **{
            c: " "
            for c in "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
        },
    }
)


def _normalise(line: str) -> str:
    return line.translate(_PUNCT).strip()


PASSES: tuple[Callable[[str], str] | None, ...] = (None, str.rstrip, str.strip, _normalise)
PASS_NAMES = (
    "exact",
    "ignoring trailing whitespace",
    "ignoring surrounding whitespace",
    "with Unicode punctuation normalised",
)
MAX_CANDIDATES_SHOWN = 8


class LineIndex:
    """Lazily built per-pass views of a file's lines and positions of the lines we look for."""

    def __init__(self, lines: list[str], wanted: list[str]) -> None:
        self.lines = lines
        self._wanted = wanted
        self._views: dict[int, list[str]] = {}
        self._indexes: dict[int, dict[str, list[int]]] = {}

    def view(self, p: int) -> list[str]:
        v = self._views.get(p)
        if v is None:
            fn = PASSES[p]
            v = self.lines if fn is None else list(map(fn, self.lines))
            self._views[p] = v
        return v

    def positions(self, p: int) -> dict[str, list[int]]:
        idx = self._indexes.get(p)
        if idx is None:
            fn = PASSES[p]
            wanted = set(self._wanted) if fn is None else set(map(fn, self._wanted))
            view = self.view(p)
            idx = {}
            for i in compress(range(len(view)), map(wanted.__contains__, view)):
                line = view[i]
                bucket = idx.get(line)
                if bucket is None:
                    idx[line] = [i]
                else:
                    bucket.append(i)
            self._indexes[p] = idx
        return idx

    def add_wanted(self, more: list[str]) -> None:
        """Lines only known later (headers searched by prefix) invalidate nothing; exact ones do."""
        missing = [m for m in more if m not in self._wanted]
        if missing:
            self._wanted = self._wanted + missing
            self._indexes.clear()


def _matches_in_pass(index: LineIndex, p: int, old: list[str], start: int, eof: bool) -> list[int]:
    fn = PASSES[p]
    pattern = old if fn is None else list(map(fn, old))
    view = index.view(p)
    n, k = len(view), len(pattern)
    if eof:
        c = n - k
        return [c] if c >= start and view[c:n] == pattern else []
    idx = index.positions(p)
    best_j, best_positions = -1, None
    for j, line in enumerate(pattern):
        found = idx.get(line)
        if not found:
            return []
        if best_positions is None or len(found) < len(best_positions):
            best_j, best_positions = j, found
    assert best_positions is not None
    result = []
    for pos in best_positions[bisect_left(best_positions, start + best_j) :]:
        c = pos - best_j
        if c + k <= n and view[c : c + k] == pattern:
            result.append(c)
    return result


def find_sequence(index: LineIndex, old: list[str], start: int, eof: bool) -> tuple[list[int], int]:
    """All match positions >= start in the first pass that finds any, and that pass's number."""
    for p in range(len(PASSES)):
        found = _matches_in_pass(index, p, old, start, eof)
        if found:
            return found, p
    if eof:
        return find_sequence(index, old, start, False)
    return [], -1


def find_header(index: LineIndex, header: str, start: int) -> int | None:
    """First line >= start equal to the header (any pass), else the first it is a prefix of."""
    for p in range(len(PASSES)):
        fn = PASSES[p]
        key = header if fn is None else fn(header)
        found = index.positions(p).get(key)
        if found:
            at = bisect_left(found, start)
            if at < len(found):
                return found[at]
    key = _normalise(header)
    if not key:
        return None
    view = index.view(3)
    for i in range(start, len(view)):
        if view[i].startswith(key):
            return i
    return None


@dataclass
class Placement:
    chunk: Chunk
    start: int  # 0-based index in the file of the chunk's first old line (or insertion point)


def _show(lines: list[str], at: int, count: int) -> str:
    lo = max(at, 0)
    hi = min(lo + max(count, 1), len(lines))
    return "\n".join(f"{i + 1:>6} | {lines[i]}" for i in range(lo, hi)) or "       (end of file)"


def _closest_region(index: LineIndex, old: list[str], start: int) -> int | None:
    """Where most of the chunk's lines line up (ignoring whitespace and punctuation style)."""
    idx = index.positions(3)
    votes: dict[int, int] = {}
    for j, line in enumerate(map(_normalise, old)):
        if not line:
            continue
        found = idx.get(line, [])
        if len(found) > 200:
            continue  # lines like `}` say nothing about where the chunk belongs
        for pos in found:
            votes[pos - j] = votes.get(pos - j, 0) + 1
    if not votes:
        return None
    return max(votes, key=lambda c: (votes[c], -abs(c - start)))


def _chunk_label(number: int, chunk: Chunk) -> str:
    label = f"chunk {number}"
    if chunk.headers:
        label += " (under " + " / ".join(f"'@@ {h}'" for h in chunk.headers) + ")"
    if chunk.source_line:
        label += f" at patch line {chunk.source_line}"
    return label


def place_chunks(path: str, lines: list[str], chunks: list[Chunk]) -> list[Placement]:
    """Find every chunk, in order, each searched forward from the end of the previous one."""
    wanted: list[str] = []
    for ch in chunks:
        wanted.extend(ch.old_lines)
        wanted.extend(ch.headers)
    index = LineIndex(lines, wanted)
    placements: list[Placement] = []
    cursor = 0
    for number, chunk in enumerate(chunks, 1):
        label = _chunk_label(number, chunk)
        start = cursor
        for header in chunk.headers:
            at = find_header(index, header, start)
            if at is None:
                raise PatchError(
                    f"Patch does not apply to {path}: {label}: the context line '@@ {header}' "
                    f"was not found at or after line {start + 1}. Copy an existing line of the "
                    "file after '@@ ', or use a bare '@@'."
                )
            start = at + 1
        old = chunk.old_lines
        if not old:
            if chunk.headers:
                pos = start
            elif chunk.line_hint is not None and not chunk.end_of_file:
                pos = min(max(chunk.line_hint, cursor), len(lines))
            else:
                pos = len(lines)
            placements.append(Placement(chunk, pos))
            cursor = pos
            continue
        found, pass_no = find_sequence(index, old, start, chunk.end_of_file)
        if not found:
            raise PatchError(_no_match_message(path, label, index, old, start, cursor))
        if len(found) > 1:
            if chunk.headers:
                pos = found[0]
            elif (hint := chunk.line_hint) is not None:
                pos = min(found, key=lambda c: abs(c - hint))
            else:
                shown = ", ".join(str(c + 1) for c in found[:MAX_CANDIDATES_SHOWN])
                more = (
                    ""
                    if len(found) <= MAX_CANDIDATES_SHOWN
                    else f" and {len(found) - MAX_CANDIDATES_SHOWN} more"
                )
                raise PatchError(
                    f"Patch is ambiguous for {path}: {label} matches at lines {shown}{more} "
                    f"({PASS_NAMES[pass_no]}). Add more context lines, or an '@@ <line>' header "
                    "naming a unique line just above the change."
                )
        else:
            pos = found[0]
        placements.append(Placement(chunk, pos))
        cursor = pos + len(old)
    return placements


def _no_match_message(
    path: str, label: str, index: LineIndex, old: list[str], start: int, cursor: int
) -> str:
    expected = "\n".join(f"       | {x}" for x in old)
    msg = (
        f"Patch does not apply to {path}: {label}: these lines were not found "
        f"(searching from line {start + 1}):\n{expected}\n"
    )
    earlier, _ = find_sequence(index, old, 0, False)
    if earlier and earlier[0] < start:
        msg += (
            f"They occur at line {earlier[0] + 1}, before the end of the previous chunk "
            f"(line {cursor}): chunks must follow the file's order.\n"
        )
        return msg
    region = _closest_region(index, old, start)
    if region is None:
        msg += "No line of it occurs in the file, even ignoring whitespace. Re-read the file.\n"
    else:
        msg += f"Closest region, at line {max(region, 0) + 1}:\n{_show(index.lines, region, len(old) + 1)}\n"
    msg += "Context and '-' lines must copy the file's lines exactly."
    return msg


def hunks_from_placements(
    lines: list[str], placements: list[Placement], first_index: int = 0
) -> list[Hunk]:
    """Turn placed chunks into reviewable hunks: each run of -/+ lines between context lines."""
    hunks: list[Hunk] = []
    for placement in placements:
        chunk = placement.chunk
        header = " / ".join(chunk.headers)
        f = placement.start
        run_start = -1
        run_old: list[str] = []
        run_new: list[str] = []

        def close(header: str = header) -> None:
            nonlocal run_start, run_old, run_new
            if run_start >= 0:
                hunks.append(Hunk(first_index + len(hunks), run_start, run_old, run_new, header))
            run_start, run_old, run_new = -1, [], []

        for kind, text in chunk.items:
            if kind == " ":
                close()
                f += 1
                continue
            if run_start < 0:
                run_start = f
            if kind == "-":
                run_old.append(lines[f])  # the file's own text, not the patch's spelling
                f += 1
            else:
                run_new.append(text)
        last_is_add = bool(chunk.items) and chunk.items[-1][0] == "+"
        close()
        if chunk.no_eol and last_is_add and hunks:
            hunks[-1].no_eol = True
    return hunks
