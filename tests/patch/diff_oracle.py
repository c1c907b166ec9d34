"""unidiff as the diff writer's oracle: what the writer says it wrote is what unidiff reads.

`assert_unidiff_agrees(changes, diffs)` parses the rendered text with
`unidiff.PatchSet` (strict: a hunk whose counts disagree with its lines is an
error) and checks, file by file, the same names, binary-ness, number of hunks,
hunk ranges and added/removed counts as the writer's own model, and that the
parsed hunks, applied to the old text, give the new text byte for byte.
"""

from __future__ import annotations

from collections.abc import Sequence

from unidiff import PatchedFile, PatchSet

from hello_tui.patch.gitquote import quote_path
from hello_tui.patch.lines import decode_bytes
from hello_tui.patch.written_diff import FileChange, FileDiff, render


def _git_start(start: int, count: int) -> int:
    """A hunk side's number as it stands in the header (the line before, for no lines)."""
    return start + 1 if count else start


def apply_parsed(pf: PatchedFile, old: str) -> str:
    """unidiff's hunks of one file applied to `old` (its lines split at LF, as git's)."""
    parts = old.split("\n")
    keys = [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    out: list[str] = []
    pos = 0
    for hunk in pf:
        start = hunk.source_start - 1 if hunk.source_length else hunk.source_start
        assert start >= pos, "hunks overlap or go backwards"
        src: list[str] = []
        dst: list[str] = []
        previous = ""
        for line in hunk:
            if line.line_type == "\\":
                # No newline after the line before: off the side(s) that line was on.
                if previous in (" ", "-"):
                    src[-1] = src[-1].removesuffix("\n")
                if previous in (" ", "+"):
                    dst[-1] = dst[-1].removesuffix("\n")
                continue
            if line.line_type in (" ", "-"):
                src.append(line.value)
            if line.line_type in (" ", "+"):
                dst.append(line.value)
            previous = line.line_type
        out += keys[pos:start]
        assert keys[start : start + len(src)] == src, "a hunk's old lines are not the file's"
        out += dst
        pos = start + len(src)
    out += keys[pos:]
    return "".join(out)


def assert_unidiff_agrees(changes: Sequence[FileChange], diffs: Sequence[FileDiff]) -> PatchSet:
    text = render(diffs)
    parsed = PatchSet(text)
    assert len(parsed) == len(diffs), text
    for pf, change, diff in zip(parsed, changes, diffs):
        src = "/dev/null" if change.old is None else quote_path("a/" + change.old_path)
        dst = "/dev/null" if change.new is None else quote_path("b/" + change.new_path)
        assert (pf.source_file, pf.target_file) == (src, dst), text
        assert pf.is_binary_file == diff.binary, text
        assert len(pf) == len(diff.hunks), text
        for got, want in zip(pf, diff.hunks):
            assert got.source_start == _git_start(want.old_start, want.old_count)
            assert (got.source_length, got.target_length) == (want.old_count, want.new_count)
            assert got.target_start == _git_start(want.new_start, want.new_count)
            assert (got.added, got.removed) == (want.added, want.removed), text
            assert got.section_header == want.func
        assert (pf.added, pf.removed) == (diff.added, diff.removed)
        if not diff.binary:
            old, new = decode_bytes(change.old or b""), decode_bytes(change.new or b"")
            assert apply_parsed(pf, old) == new, text
    return parsed
