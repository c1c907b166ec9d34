"""The one rule for text shown to a person: what a terminal would obey made visible.

`hello_tui.core.terminal_text` explains the rule and applies it to events,
values and streams; the characters and their pictures live here, at the bottom
of the layers, so that settings can make their own error messages safe too (a
cloned repository names the link targets and folders they quote).
"""

from __future__ import annotations

import re

_PATTERNS: tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]] | None = None


def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """SGR codes, what a terminal would obey, what JSON leaves raw of it: compiled at the
    first use, not at import. The settings import this module, so every patch command
    did, and `hello-tui apply` seldom shows such a text; their character classes cost
    about 1.5 ms to compile. (Below `core`, this module cannot use core.lazy_regex.)"""
    global _PATTERNS
    if _PATTERNS is None:
        _PATTERNS = (
            re.compile(r"\x1b\[[0-9;:]*m"),
            re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"),
            # What a JSON encoder leaves raw that a terminal would obey (C0 it escapes itself).
            re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]"),
        )
    return _PATTERNS


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char == "\r":
        return "\n"
    if code < 0x20:
        return chr(0x2400 + code)  # the control pictures block: ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    if code <= 0x9F:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"


def safe_text(text: str) -> str:
    """`text` with nothing a terminal would obey; tabs and newlines kept."""
    sgr, unsafe, _ = _patterns()
    if unsafe.search(text) is None:
        return text
    text = sgr.sub("", text).replace("\r\n", "\n")
    return unsafe.sub(_shown, text)


def safe_json(line: str) -> str:
    """A JSON document with DEL, C1 and bidi controls written as `\\uXXXX` escapes.

    Outside strings JSON has only ASCII punctuation, so every such character is
    inside a string, where the escape means the very same character."""
    return _patterns()[2].sub(lambda m: f"\\u{ord(m.group()):04x}", line)
