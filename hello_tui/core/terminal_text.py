"""Text that is shown, never obeyed: control and escape sequences made visible.

What a model answers, what a command or an MCP server prints and what an
editor is sent over ACP is text from someone else. Written raw to a terminal,
its escape sequences are commands to that terminal: OSC 52 writes the user's
clipboard, OSC 0 sets the window title, OSC 8 hides a link behind other text,
`CSI 2J` clears the screen, a lone CR or a backspace writes over what was
shown, and the 8-bit C1 controls (U+0080–U+009F, e.g. 0x9B, a CSI on its own)
do the same in one character. `safe_text` is the one rule every front end
applies before text reaches a screen:

- colour and style (SGR, `ESC [ … m`) are removed: they only paint, and
  painted text can hide (same colour as the background, "concealed");
- every other C0 control but tab and newline, DEL, and ESC with whatever
  follows it, become Unicode control pictures (ESC is `␛`, BEL `␇`): the
  sequence shows as text and does nothing;
- CR LF is a newline; a lone CR becomes a newline too, so the text it would
  have overwritten stays on screen;
- C1 controls show as `\\x9b`;
- bidirectional embeddings, overrides and isolates (U+202A–U+202E,
  U+2066–U+2069) show as `<U+202E>`: they reorder what the eye reads
  ("Trojan Source") and no output needs them. The plain marks (LRM, RLM)
  stay: they only nudge neutral characters and right-to-left text uses them.

Each character is judged on its own (only SGR and CR LF span two), so text cut
into pieces anywhere, as a stream is, is as safe piece by piece as whole.
`SafeTextStream` keeps a piece's trailing CR or unfinished SGR for the next
piece, so streamed text looks the same as whole text; `safe_json` escapes the
same characters inside a JSON line, which keeps every value exact.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from hello_tui.shown_text import safe_json, safe_text

__all__ = ["SafeTextStream", "safe_event", "safe_json", "safe_text", "safe_value"]

# An unfinished SGR at the end of a piece is held at most this long.
_SGR_HELD = 32
_UNFINISHED_SGR = re.compile(r"\x1b(\[[0-9;:]*)?\Z")


def safe_value(value: Any) -> Any:
    """`safe_text` applied to every string inside lists, tuples and dicts (keys too)."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_value(k): safe_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [safe_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(safe_value(v) for v in value)
    return value


def safe_event(event: Any) -> Any:
    """A copy of a (frozen dataclass) event whose text fields are safe to show.

    Only strings and the lists and dicts holding them change; any other field
    (a tool's `data`, numbers) is passed on as it is."""
    if not dataclasses.is_dataclass(event) or isinstance(event, type):
        return event
    changes = {}
    for f in dataclasses.fields(event):
        if not f.init or f.name == "data":
            continue
        value = getattr(event, f.name)
        safe = safe_value(value)
        if safe is not value and safe != value:
            changes[f.name] = safe
    return dataclasses.replace(event, **changes) if changes else event


class SafeTextStream:
    """`safe_text` for text that arrives in pieces (a streamed answer, a live output)."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        text = self._held + piece
        self._held = ""
        if text.endswith("\r"):  # its LF may come with the next piece
            self._held, text = "\r", text[:-1]
        else:
            unfinished = _UNFINISHED_SGR.search(text)
            if unfinished is not None and len(unfinished.group()) < _SGR_HELD:
                self._held, text = unfinished.group(), text[: unfinished.start()]
        return safe_text(text)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return safe_text(held)
