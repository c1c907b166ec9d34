"""Markdown fenced code blocks that the text inside cannot close.

Shared by the notes the patch engine writes and the notes viewer, which
fences the patch of notes written before patches were fenced.
"""

from __future__ import annotations

from hello_tui.core.lazy_regex import lazy_compile

_FENCE_OPENER = lazy_compile(r"^ {0,3}(`{3,}|~{3,})")


def fence(text: str, info: str = "diff") -> str:
    """`text` as a Markdown fenced code block that no line of it can close.

    A closing fence is a run of at least as many backticks, indented by at most
    three spaces; a diff's context line (" ```") is exactly that, so the fence
    is made one backtick longer than any such run in the text.
    """
    longest = 0
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) <= 3 and stripped.startswith("`"):
            longest = max(longest, len(stripped) - len(stripped.lstrip("`")))
    ticks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{ticks}{info}\n{body}{ticks}"


def opens_fence(line: str) -> bool:
    """The line starts a fenced code block (CommonMark: 3+ backticks or tildes, <= 3 spaces in)."""
    return _FENCE_OPENER.match(line) is not None
