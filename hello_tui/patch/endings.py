"""Line endings a diff could not carry, settled by its `index` line.

When a diff's context and '-' lines do not carry the file's endings (a copy converted
to CRLF on its way, or one that lost its CRs), its '+' lines' endings are not the
author's either, and they take the file's first ending. In a file that mixes endings
that guess can be wrong for every new line. When the file is the very blob the diff
was made from, its `index` line names the result: the guess is checked against it,
the other ending tried, and with neither matching the patch is refused instead of
written with endings its author never had.
"""

from __future__ import annotations

from collections.abc import Callable

from hello_tui.patch.blob_ids import blob_id, is_null_oid, oid_matches
from hello_tui.patch.types import Hunk, PatchError

_ENDINGS = ("\n", "\r\n")


def _guessed(hunks: list[Hunk]) -> list[Hunk]:
    return [h for h in hunks if h.new_lines and (h.new_eols is None or None in h.new_eols)]


def settle_endings(
    rel: str,
    old_oid: str | None,
    new_oid: str | None,
    data: bytes,
    hunks: list[Hunk],
    build: Callable[[list[Hunk]], bytes],
    built: bytes,
) -> bytes:
    """The result's bytes, rebuilt with one ending for the guessed lines when that is
    the only way to the blob the index line names. `build` writes the hunks again."""
    if not old_oid or not new_oid or is_null_oid(new_oid) or is_null_oid(old_oid):
        return built
    guessed = _guessed(hunks)
    if not guessed:
        return built  # every ending came from the diff (a stale index line is git's too)
    if not oid_matches(old_oid, data) or oid_matches(new_oid, built):
        return built  # another base (nothing to check against), or the guess was right
    saved = [h.new_eols for h in guessed]
    for eol in _ENDINGS:
        for h, eols in zip(guessed, saved):
            h.new_eols = [eol if e is None else e for e in (eols or [None] * len(h.new_lines))]
        rebuilt = build(hunks)
        if oid_matches(new_oid, rebuilt):
            return rebuilt
    raise PatchError(
        f"Cannot tell the line endings of the lines the patch adds to {rel}: its context "
        "lines do not carry the file's endings (the copy was converted to CRLF, or lost its "
        f"CRs), and with either ending the result is not blob {new_oid} as its index line "
        f"says (with the file's own ending it is blob {blob_id(built)[: max(len(new_oid), 7)]}). "
        "Apply the patch file as git wrote it, not a copy."
    )


def unconverted_readings(content: str) -> list[str]:
    """What a new file's text may have been before a copy converted it to CRLF: with LF
    endings, and, when its last line has no ending, with the CR a `\\ No newline` marker
    in CRLF made the copy's (a file that ends in a bare CR)."""
    unconverted = content.replace("\r\n", "\n")
    readings = [unconverted]
    if content and not content.endswith("\n"):
        readings += [content + "\r", unconverted + "\r"]
    return [text for text in dict.fromkeys(readings) if text != content]


def check_converted_add(rel: str, oid: str, built: bytes, converted: bool) -> None:
    """A new file from a copy converted to CRLF (its `@@` line or its `\\ No newline`
    marker in CRLF) whose index line's blob is none of its readings: which of its lines
    had a CR is lost, so it is refused, not written. A file whose every line is CRLF
    under an LF `@@` line is a CRLF file as git wrote it (pygments' hanoi.pro), whatever
    its index line says: it is written as given, as git does, with a warning."""
    if converted:
        raise PatchError(
            f"Cannot tell the line endings of the new file {rel}: the patch was converted "
            f"to CRLF on its way, and no reading of its endings makes blob {oid} as its "
            f"index line says (as given it is blob {blob_id(built)[: max(len(oid), 7)]}). "
            "Apply the patch file as git wrote it, not a copy."
        )
