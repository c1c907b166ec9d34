"""Locating Update chunks in a file: forward search, four matching passes, ambiguity, errors.

Passes, in order: exact; ignoring trailing whitespace; ignoring surrounding
whitespace; with Unicode punctuation normalised (dashes, curly quotes,
non-breaking and other spaces). Each pass uses an index from a line to its
positions, so a chunk is found by checking the few places where its rarest
line occurs, never by rescanning the file from the top.

A chunk that matches in several places is placed by its `@@` header (the
first occurrence after it) or its line number (the nearest occurrence, said
in a warning); with neither to decide it is an error listing the candidates.
A chunk that matches nowhere is an error showing the lines expected, the
closest region of the file and the first line that differs there, and where
the characters differ.
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


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class Placement:
    """Where in the file a chunk's old lines were found."""

    chunk: Chunk
    start: int  # 0-based index in the file of the chunk's first old line (or insertion point)


def _show(lines: list[str], at: int, count: int) -> str:
    lo = max(at, 0)
    hi = min(lo + max(count, 1), len(lines))
    return "\n".join(f"{i + 1:>6} | {lines[i]}" for i in range(lo, hi)) or "       (end of file)"


def _closest_region(
    index: LineIndex, old: list[str], start: int, near: int
) -> tuple[int, int] | None:
    """(start, lines that agree) of the region at or after `start` where most of the chunk's
    lines line up, ignoring whitespace and punctuation style; ties go to the one nearest `near`."""
    idx = index.positions(3)
    votes: dict[int, int] = {}
    for j, line in enumerate(map(_normalise, old)):
        if not line:
            continue
        found = idx.get(line, [])
        if len(found) > 200:
            continue  # lines like `}` say nothing about where the chunk belongs
        for pos in found[bisect_left(found, start + j) :]:
            votes[pos - j] = votes.get(pos - j, 0) + 1
    if not votes:
        return None
    best = max(votes, key=lambda c: (votes[c], -abs(c - near)))
    return best, votes[best]


def _char_difference(expected: str, found: str) -> str:
    """Where two lines differ, said so a model can fix the line in one step."""
    if expected.strip() == found.strip():
        return "they differ only in leading or trailing whitespace"
    if expected.split() == found.split():
        return "they differ only in whitespace inside the line"
    k = 0
    while k < min(len(expected), len(found)) and expected[k] == found[k]:
        k += 1
    exp = expected[k : k + 12] or "(end of line)"
    got = found[k : k + 12] or "(end of line)"
    return f"they differ from column {k + 1}: expected {exp!r}, found {got!r}"


def _difference(want: str, have: str, at: int, j: int) -> str:
    return (
        f"First difference: line {at + 1} of the file (line {j + 1} of the chunk):\n"
        f"  expected: {want!r}\n  found:    {have!r}\n  ({_char_difference(want, have)})"
    )


def _aligned_start(lines: list[str], old: list[str], region: int) -> int:
    """Where the chunk's first line sits in the file when aligned around `region`."""
    lo, a, b = _window(lines, old, region)
    import difflib  # only to explain a patch that does not match

    for i, j, size in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        if size:
            return max(lo + j - i, 0)
    return region


def _window(lines: list[str], old: list[str], region: int) -> tuple[int, list[str], list[str]]:
    lo = max(region - len(old), 0)
    hi = min(region + 2 * len(old) + 1, len(lines))
    return lo, [_normalise(x) for x in old], [_normalise(x) for x in lines[lo:hi]]


def _first_difference(lines: list[str], old: list[str], region: int) -> str:
    """The first place where the chunk and the file part ways, aligned as difflib aligns them."""
    lo, a, b = _window(lines, old, region)
    import difflib  # only to explain a patch that does not match

    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    started = False
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            started = True
            continue
        if i1 >= len(old):
            break  # only file lines after the chunk's end: nothing of the chunk differs
        if not started:
            if tag == "insert":
                continue  # file lines before the place the chunk starts to match
            if tag == "delete":
                at = lo + j1
                return (
                    f"First difference: the chunk's first {i2 - i1} line(s), starting with "
                    f"{old[i1]!r}, are not in the file just before line {at + 1}."
                )
            at = lo + max(j1, j2 - (i2 - i1))  # the file line aligned with old[i1]
            return _difference(old[i1], lines[at], at, i1)
        at = lo + j1
        if tag == "replace":
            return _difference(old[i1], lines[at], at, i1)
        if tag == "delete":
            return (
                f"First difference: after line {at} of the file, the chunk has "
                f"{i2 - i1} line(s) the file does not have there, starting with line "
                f"{i1 + 1} of the chunk: {old[i1]!r}."
            )
        return (
            f"First difference: line {at + 1} of the file, {lines[at]!r}, is not in the chunk: "
            f"the file has {j2 - j1} line(s) here that the chunk leaves out (before line "
            f"{i1 + 1} of the chunk, {old[i1]!r})."
        )
    return "Every line agrees there when whitespace and punctuation style are ignored."


def _most_similar(lines: list[str], old: list[str], start: int) -> int | None:
    """Where the file's line most like the chunk's first real line is (a region to show)."""
    j, want = next(((j, x) for j, x in enumerate(old) if x.strip()), (0, ""))
    if not want:
        return None
    key = _normalise(want)
    best, best_ratio = None, 0.6
    import difflib  # only to explain a patch that does not match

    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(key)
    for i in range(start, min(len(lines), start + 5000)):
        matcher.set_seq1(_normalise(lines[i]))
        if matcher.real_quick_ratio() > best_ratio and matcher.ratio() > best_ratio:
            best, best_ratio = i, matcher.ratio()
    return None if best is None else max(best - j, 0)


def _chunk_label(number: int, chunk: Chunk) -> str:
    label = f"chunk {number}"
    if chunk.header_text:
        label = f"hunk {number} ({chunk.header_text})"
    elif chunk.headers:
        label += " (under " + " / ".join(f"'@@ {h}'" for h in chunk.headers) + ")"
    if chunk.source_line:
        label += f" at patch line {chunk.source_line}"
    return label


def _close_line(lines: list[str], header: str) -> str:
    key = _normalise(header)
    candidates = list({_normalise(x) for x in lines[:20000] if x.strip()})
    import difflib  # only to explain a patch that does not match

    close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    if not close:
        return ""
    at = next(i for i, x in enumerate(lines) if _normalise(x) == close[0])
    return f" The most similar line is line {at + 1}: {lines[at]!r}."


def _header_missing(path: str, label: str, header: str, lines: list[str]) -> PatchError:
    return PatchError(
        f"Patch does not apply to {path}: {label}: the context line '@@ {header}' does not "
        f"occur in the file, even ignoring whitespace.{_close_line(lines, header)} Copy an "
        "existing line of the file after '@@ ', or use a bare '@@'."
    )


def _ambiguous(path: str, label: str, found: list[int], pass_no: int, why: str) -> PatchError:
    shown = ", ".join(str(c + 1) for c in found[:MAX_CANDIDATES_SHOWN])
    more = (
        ""
        if len(found) <= MAX_CANDIDATES_SHOWN
        else f" and {len(found) - MAX_CANDIDATES_SHOWN} more"
    )
    return PatchError(
        f"Patch is ambiguous for {path}: {label} matches at lines {shown}{more} "
        f"({PASS_NAMES[pass_no]}){why}. Add more context lines, or an '@@ <line>' header "
        "naming a unique line just above the change."
    )


def place_chunks(
    path: str,
    lines: list[str],
    chunks: list[Chunk],
    warnings: list[str] | None = None,
    eols: list[str] | None = None,
) -> list[Placement]:
    """Place a patch's chunks; a diff whose hunks' line numbers are out of order, as git does.

    git places each hunk where its lines occur nearest its stated line, whatever the
    order of the hunks in the patch, so a diff whose hunks were shuffled still applies.
    When the hunks' line numbers put them in another order than the patch's, they are
    placed in that order first (by the same rules as always) and, failing that, in the
    patch's order; if both fail, the error is the one about the patch's own order.
    """
    hints = [chunk.line_hint for chunk in chunks]
    shuffled = all(h is not None for h in hints) and hints != sorted(hints, key=lambda h: h or 0)
    orders = [chunks]
    if shuffled:
        orders.insert(0, sorted(chunks, key=lambda chunk: chunk.line_hint or 0))
    first_error: PatchError | None = None
    for order in orders:
        notes: list[str] = []
        try:
            placements = _place_in_order(path, lines, order, notes, eols)
        except PatchError as exc:
            if order is chunks:
                first_error = exc
            continue
        if order is not chunks:
            notes.append(
                f"{path}: the patch's hunks are not in the file's order; each was placed by "
                "its lines and line numbers, in the file's order, as git does."
            )
        if warnings is not None:
            warnings.extend(notes)
        return placements
    assert first_error is not None
    raise first_error


def _place_in_order(
    path: str,
    lines: list[str],
    chunks: list[Chunk],
    warnings: list[str],
    eols: list[str] | None,
) -> list[Placement]:
    """Find every chunk, in order, each searched forward from the end of the previous one.

    A unified hunk's line number is a hint, moved by how far the previous hunk was found
    from its own stated line: among several occurrences the nearest wins, and `warnings`
    says so; equally near ones are ambiguous. Given the file's `eols`, occurrences whose
    line endings are the diff's own, byte for byte, come first.
    """
    wanted: list[str] = []
    for ch in chunks:
        wanted.extend(ch.old_lines)
        wanted.extend(ch.headers)
    index = LineIndex(lines, wanted)
    placements: list[Placement] = []
    cursor = 0
    delta = 0  # lines added minus removed by the chunks placed so far
    off_old = off_new = 0  # where the previous chunk was found, against its stated lines
    notes = warnings
    for number, chunk in enumerate(chunks, 1):
        label = _chunk_label(number, chunk)
        start = cursor
        header_before: tuple[str, int] | None = None
        for header in chunk.headers:
            at = find_header(index, header, start)
            if at is None:
                earlier = find_header(index, header, 0) if start > 0 else None
                if earlier is None:
                    raise _header_missing(path, label, header, lines)
                header_before = (header, earlier)
                break
            start = at + 1
        old = chunk.old_lines
        hints = _hints(chunk, delta, off_old, off_new)
        if not old:
            pos = _insertion_point(path, label, chunk, lines, start, cursor, hints, header_before)
        else:
            found, pass_no = find_sequence(index, old, start, chunk.end_of_file)
            if not found and chunk.bare_blank_tail:
                # Bare empty lines the counts took in after the hunk's real lines.
                trimmed = chunk.without_bare_blank_tail()
                if trimmed.old_lines:
                    found, pass_no = find_sequence(index, trimmed.old_lines, start, False)
                    if found:
                        notes.append(
                            f"{path}: {label}: its last {chunk.bare_blank_tail} empty line(s) "
                            "do not match the file and were left out."
                        )
                        chunk, old = trimmed, trimmed.old_lines
            if len(found) > 1 and eols is not None and chunk.eols is not None:
                found = _same_endings(found, chunk, eols)
            if not found:
                near = hints[0] if hints else None
                raise PatchError(_no_match_message(path, label, index, old, start, cursor, near))
            if header_before is not None:
                pos = _after_header_before(
                    path, label, found, pass_no, header_before, cursor, notes
                )
            elif len(found) == 1:
                pos = found[0]
            elif chunk.headers:
                pos = found[0]  # the first occurrence after the `@@` anchor
            elif hints and not chunk.counts_wrong:
                pos = _nearest(path, label, found, pass_no, hints, chunk, notes)
            elif hints:
                raise _ambiguous(
                    path,
                    label,
                    found,
                    pass_no,
                    ", and its header's counts are wrong, so its line numbers cannot decide",
                )
            else:
                raise _ambiguous(path, label, found, pass_no, "")
        if chunk.line_hint is not None:
            off_old = pos - chunk.line_hint
        if chunk.new_hint is not None:
            off_new = pos - (chunk.new_hint - delta)
        delta += len(chunk.new_lines) - len(old)
        placements.append(Placement(chunk, pos))
        cursor = pos + len(old)
    return placements


def _same_endings(found: list[int], chunk: Chunk, eols: list[str]) -> list[int]:
    """The occurrences where the file's line endings are the diff's own (all, if none is)."""
    assert chunk.eols is not None
    wanted = [eol for (kind, _), eol in zip(chunk.items, chunk.eols) if kind != "+"]
    exact = [
        c
        for c in found
        if all(c + j < len(eols) and eols[c + j] == e for j, e in enumerate(wanted))
    ]
    return exact or found


def _hints(chunk: Chunk, delta: int, off_old: int, off_new: int) -> list[int]:
    """Where the chunk's line numbers put it in the file, from `-l` and from `+l`.

    Both move by how far the previous chunk was found from its own numbers (as when the
    file has lines the diff's base did not); for a diff made from this file they agree.
    """
    hints = []
    if chunk.line_hint is not None:
        hints.append(chunk.line_hint + off_old)
    if chunk.new_hint is not None:
        from_new = chunk.new_hint - delta + off_new
        if from_new not in hints:
            hints.append(from_new)
    return hints


def _nearest(
    path: str,
    label: str,
    found: list[int],
    pass_no: int,
    hints: list[int],
    chunk: Chunk,
    notes: list[str],
) -> int:
    picks = []
    for hint in hints:
        ranked = sorted(found, key=lambda c: abs(c - hint))
        if abs(ranked[0] - hint) == abs(ranked[1] - hint):
            raise _ambiguous(
                path,
                label,
                found,
                pass_no,
                f", and lines {ranked[0] + 1} and {ranked[1] + 1} are equally near its stated "
                f"line {hint + 1}",
            )
        picks.append(ranked[0])
    if len(set(picks)) > 1:
        raise _ambiguous(
            path,
            label,
            found,
            pass_no,
            f"; its line numbers disagree (the old side says line {hints[0] + 1}, the new side "
            f"line {hints[1] + 1}) and pick different ones",
        )
    pos = picks[0]
    if pos != hints[0]:
        shown = ", ".join(str(c + 1) for c in found[:MAX_CANDIDATES_SHOWN])
        notes.append(
            f"{path}: {label}: its lines occur at lines {shown}; used line {pos + 1}, "
            f"the nearest to its stated line {(chunk.line_hint or 0) + 1}."
        )
    return pos


def _after_header_before(
    path: str,
    label: str,
    found: list[int],
    pass_no: int,
    header_before: tuple[str, int],
    cursor: int,
    notes: list[str],
) -> int:
    """Models put one function's `@@ def f():` over each of its chunks: the second time the
    line is behind the search position, so the chunk's own lines must decide, uniquely."""
    header, at = header_before
    where = (
        f"the context line '@@ {header}' is at line {at + 1}, before the end of the previous "
        f"chunk (line {cursor})"
    )
    if len(found) != 1:
        shown = ", ".join(str(c + 1) for c in found[:MAX_CANDIDATES_SHOWN])
        raise PatchError(
            f"Patch is ambiguous for {path}: {label}: {where}, so it cannot anchor this chunk, "
            f"and the chunk's own lines occur {len(found)} times after the previous chunk "
            f"(lines {shown}, {PASS_NAMES[pass_no]}). Add context lines that occur only once, "
            "or merge this chunk into the previous one."
        )
    notes.append(
        f"{path}: {label}: {where}; placed at line {found[0] + 1}, the only place after the "
        "previous chunk where its lines occur."
    )
    return found[0]


def _insertion_point(
    path: str,
    label: str,
    chunk: Chunk,
    lines: list[str],
    start: int,
    cursor: int,
    hints: list[int],
    header_before: tuple[str, int] | None,
) -> int:
    """Where a chunk with only '+' lines goes: after its `@@` line, at its line number, or the end."""
    if header_before is not None:
        header, at = header_before
        raise PatchError(
            f"Patch does not apply to {path}: {label}: it only adds lines, right after the "
            f"context line '@@ {header}', but that line is at line {at + 1}, before the end of "
            f"the previous chunk (line {cursor}). Add context lines from the file around the "
            "insertion, or merge this chunk into the previous one."
        )
    if chunk.headers:
        return start
    if not hints or chunk.end_of_file or not lines:
        return len(lines)  # (an empty file has one place for lines to go)
    fix = " Add context lines from the file around the insertion."
    if len(hints) > 1:
        raise PatchError(
            f"Patch does not apply to {path}: {label}: it only adds lines, so only its line "
            f"numbers place it, and they disagree: the old side says after line {hints[0]}, "
            f"the new side after line {hints[1]}.{fix}"
        )
    hint = hints[0]
    if hint < cursor or hint > len(lines):
        raise PatchError(
            f"Patch does not apply to {path}: {label}: it only adds lines, so only its line "
            "number places it, and that number does not fit: "
            + (
                f"the file has {len(lines)} lines."
                if hint > len(lines)
                else f"after line {hint} is before the end of the previous hunk (line {cursor})."
            )
            + fix
        )
    return hint


def _no_match_message(
    path: str,
    label: str,
    index: LineIndex,
    old: list[str],
    start: int,
    cursor: int,
    hint: int | None,
) -> str:
    expected = "\n".join(f"       | {x}" for x in old)
    msg = (
        f"Patch does not apply to {path}: {label}: these lines were not found "
        f"(searching from line {start + 1}):\n{expected}\n"
    )
    region = _closest_region(index, old, start, hint if hint is not None else start)
    earlier, _ = find_sequence(index, old, 0, False) if start > 0 else ([], -1)
    agree = region[1] if region else 0
    content = sum(1 for x in old if _normalise(x))
    if earlier and earlier[0] < start and agree * 2 < max(content, 1):
        return msg + (
            f"They occur at line {earlier[0] + 1}, which is before the end of the previous chunk "
            f"(line {cursor}); chunks are applied in the file's order, so a change at line "
            f"{earlier[0] + 1} must come before the chunk that ends at line {cursor}."
        )
    if region is None:
        similar = _most_similar(index.lines, old, start)
        if similar is None:
            msg += "No line of it occurs at or after that line, even ignoring whitespace. Re-read the file.\n"
        else:
            msg += (
                f"No line of it occurs exactly; the most similar region is at line {similar + 1}:\n"
                f"{_show(index.lines, similar, len(old) + 1)}\n"
                f"{_first_difference(index.lines, old, similar)}\n"
            )
    else:
        at = _aligned_start(index.lines, old, max(region[0], 0))
        msg += (
            f"Closest region, at line {at + 1} ({agree} of {content} lines agree):\n"
            f"{_show(index.lines, at, len(old) + 1)}\n{_first_difference(index.lines, old, at)}\n"
        )
        if earlier and earlier[0] < start:
            msg += (
                f"(The lines do occur exactly at line {earlier[0] + 1}, before the end of the "
                f"previous chunk at line {cursor}.)\n"
            )
    msg += "Context and '-' lines must copy the file's lines exactly."
    return msg


def _patch_eols_trusted(file_eols: list[str], placements: list[Placement]) -> bool:
    """A diff's own line endings are used for its '+' lines only when its context and '-'
    lines carry the file's endings; when they do not (a model's or editor's copy lost the
    CRs, or added them), or the copy was converted to CRLF as a whole (its `\\ No newline`
    marker ends in CRLF), new lines take the file's ending instead."""
    for placement in placements:
        chunk = placement.chunk
        if chunk.eols is None or chunk.eols_converted:
            return False
        f = placement.start
        for (kind, _), eol in zip(chunk.items, chunk.eols):
            if kind == "+":
                continue
            have = file_eols[f] if f < len(file_eols) else ""
            f += 1
            if eol and have and (eol == "\r\n") != (have == "\r\n"):
                return False
    return True


def hunks_from_placements(
    lines: list[str],
    placements: list[Placement],
    first_index: int = 0,
    file_eols: list[str] | None = None,
) -> list[Hunk]:
    """Turn placed chunks into reviewable hunks: each run of -/+ lines between context lines.

    '+' lines take the ending the diff gives them when it can be trusted; a Codex chunk that
    replaces or extends the last line of a file without a final newline keeps it without one.
    """
    eols_known = file_eols is not None
    trusted = eols_known and _patch_eols_trusted(file_eols or [], placements)
    n = len(lines)
    no_final_eol = eols_known and bool(file_eols) and (file_eols or [""])[-1] == ""
    hunks: list[Hunk] = []
    for placement in placements:
        chunk = placement.chunk
        header = " / ".join(chunk.headers)
        chunk_eols = chunk.eols if chunk.eols is not None else [None] * len(chunk.items)
        f = placement.start
        run_start = -1
        run_old: list[str] = []
        run_new: list[str] = []
        run_eols: list[str | None] = []

        def close(header: str = header) -> None:
            nonlocal run_start, run_old, run_new, run_eols
            if run_start >= 0:
                hunk = Hunk(first_index + len(hunks), run_start, run_old, run_new, header)
                if any(e is not None for e in run_eols):
                    hunk.new_eols = run_eols
                hunks.append(hunk)
            run_start, run_old, run_new, run_eols = -1, [], [], []

        for (kind, text), eol in zip(chunk.items, chunk_eols):
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
                # An explicit `\ No newline` always counts; other endings only when trusted.
                run_eols.append(eol if (trusted or eol == "") else None)
        last_is_add = bool(chunk.items) and chunk.items[-1][0] == "+"
        close()
        reaches_end = placement.start + len(chunk.old_lines) >= n
        keeps_no_eol = chunk.eols is None and not chunk.eol_stated and no_final_eol and reaches_end
        if last_is_add and hunks and (chunk.no_eol or keeps_no_eol):
            hunks[-1].no_eol = True
    return hunks
