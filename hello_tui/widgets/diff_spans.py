"""Which characters of a changed line changed, for the diff view's highlighting.

Display work only: which lines pair up is the engine's line diff (the one every
written diff uses); this compares the two sides of one changed line pair
character by character.
"""

from __future__ import annotations

import difflib

Span = tuple[int, int]
# Character-level highlighting is quadratic in line length; beyond this the
# whole line is simply marked as changed.
MAX_INTRALINE_CHARS = 400


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
