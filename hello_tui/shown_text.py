"""The one rule for text shown to a person: what a terminal would obey made visible.

`hello_tui.core.terminal_text` explains the rule and applies it to events,
values and streams; the characters and their pictures live here, at the bottom
of the layers, so that settings can make their own error messages safe too (a
cloned repository names the link targets and folders they quote).
"""

from __future__ import annotations

import re

_SGR = re.compile(r"\x1b\[[0-9;:]*m")
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# What a JSON encoder leaves raw that a terminal would obey (C0 it escapes itself).
_JSON_UNSAFE = re.compile(r"[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


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
    if _UNSAFE.search(text) is None:
        return text
    text = _SGR.sub("", text).replace("\r\n", "\n")
    return _UNSAFE.sub(_shown, text)


def safe_json(line: str) -> str:
    """A JSON document with DEL, C1 and bidi controls written as `\\uXXXX` escapes.

    Outside strings JSON has only ASCII punctuation, so every such character is
    inside a string, where the escape means the very same character."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
