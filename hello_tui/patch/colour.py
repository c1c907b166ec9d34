"""Diffs pasted with terminal colours (`git diff --color=always`, `--color-moved`): the codes go.

git colours a diff with SGR sequences (`ESC [ ... m`) around each line's text:
the headers bold, `@@` cyan, removed lines red, added lines green, moved lines
in other colours, white space errors on a red background. A paste whose diff
headers or hunk headers start with such a sequence is a coloured diff: every
SGR sequence is removed from it, which gives back the text git coloured.

A word diff (`--word-diff=color`, `--color-words`) cannot be applied: its lines
carry no `+`/`-`/space prefix and its changes are marked only by colour inside
the line, so it does not say which lines a file has before and after. It is
refused with a message saying so.
"""

from __future__ import annotations

import re

from hello_tui.core.lazy_regex import lazy_compile
from hello_tui.patch.blob_ids import blob_id, is_null_oid, oid_matches
from hello_tui.patch.types import PatchError

_SGR = lazy_compile(r"\x1b\[[0-9;:]*m")
# A diff line git coloured: colour codes, then the start of a header or a hunk header.
_COLOURED_HEADER = lazy_compile(
    r"^(?:\x1b\[[0-9;:]*m)+(?:diff --git |diff --cc |index |--- |\+\+\+ |@@ )", re.MULTILINE
)
_HUNK_HEADER = lazy_compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")
_FOREGROUND = lazy_compile(r"\x1b\[(?:[0-9;:]*;)?(?:3[0-7]|9[0-7])(?:;[0-9;:]*)?m")
_FILE_START = ("diff ", "--- ", "+++ ")


def is_coloured_diff(text: str) -> bool:
    return "\x1b[" in text and _COLOURED_HEADER.search(text) is not None


def _is_word_diff_line(raw: str, plain: str) -> bool:
    """A hunk line of a word diff: no prefix, or a context line with coloured words in it."""
    if plain == "" or plain == "\r":
        return False
    if plain[0] not in " +-\\":
        return True
    return plain[0] == " " and _FOREGROUND.search(raw) is not None


def strip_diff_colour(text: str) -> str:
    """`text` without git's colour codes when it is a coloured diff; unchanged otherwise.

    Raises PatchError for a coloured word diff.
    """
    if not is_coloured_diff(text):
        return text
    lines = text.split("\n")
    plain_lines = [_SGR.sub("", line) for line in lines]
    in_hunk = False
    for number, (raw, plain) in enumerate(zip(lines, plain_lines), start=1):
        if _HUNK_HEADER.match(plain):
            in_hunk = True
        elif plain.startswith(_FILE_START):
            in_hunk = False
        elif in_hunk and _is_word_diff_line(raw, plain):
            raise PatchError(
                f"This is a word diff (`git diff --word-diff` / `--color-words`, line {number}: "
                f"{plain[:60]!r}): it marks changed words by colour inside a line and does not "
                "say which lines the file has before and after, so it cannot be applied. "
                "Make the patch with plain `git diff` (colours are fine)."
            )
    return "\n".join(plain_lines)


def check_decoloured(
    rel: str, old_oid: str | None, new_oid: str | None, before: bytes | None, after: bytes | None
) -> None:
    """Refuse a file of a coloured diff whose lines lost codes of the file's own.

    A file can hold colour codes itself (a terminal-output fixture, a highlighted
    sample), and in a coloured diff they cannot be told from git's: removing every
    code changes the lines the diff adds. The index line shows it: when the file is
    the very blob the diff was made from, the result must be the blob it names after.
    """
    if not old_oid or not new_oid or is_null_oid(new_oid) or after is None:
        return
    from_base = is_null_oid(old_oid) if before is None else oid_matches(old_oid, before)
    if from_base and not oid_matches(new_oid, after):
        raise PatchError(
            f"Cannot apply the coloured diff to {rel}: with the colour codes removed, its "
            f"lines make blob {blob_id(after)[: max(len(new_oid), 7)]}, not the {new_oid} its "
            "index line names, so some codes were the file's own text. Make the patch "
            "without colours (`git diff --no-color`)."
        )
