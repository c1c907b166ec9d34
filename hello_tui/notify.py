"""Calling the user back: the bell and desktop notifications, as escape sequences.

When a turn ends or a decision waits while the terminal is not focused (the
terminal reports focus; Textual turns it into `App.app_focus`), the app writes
to the terminal, depending on the `notifications` setting:
`bell` (BEL), `desktop` (one desktop notification), `both`, or `off`.

A desktop notification is OSC 9 (iTerm2, WezTerm, Ghostty, kitty, ConEmu...)
or, for terminals that only know the rxvt / VTE one (foot, urxvt, VTE-based
terminals such as GNOME Terminal), OSC 777 `notify` -- one of the two, never
both, so a terminal that knows both does not show it twice. Inside tmux the
sequence is wrapped for tmux's passthrough (`allow-passthrough on`).

The text comes partly from the model, so it is cleaned first: no control or
format character (an ESC or BEL in it would end the sequence and let the rest
be read as terminal commands), one line, and at most `BODY_LIMIT` characters.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping

TITLE = "hello-tui"
BODY_LIMIT = 160
BEL = "\a"
# Unicode categories dropped from the text: controls (C0, DEL, C1), format characters
# (bidi overrides, zero-width ones), surrogates, private use, unassigned.
_DROPPED = {"Cc", "Cf", "Cs", "Co", "Cn"}
_SPACES = {"Zl", "Zp", "Zs"}  # line / paragraph separators and odd spaces become a space


def clean(text: str, limit: int = BODY_LIMIT) -> str:
    """`text` safe to put inside an OSC sequence: printable, one line, at most `limit` chars."""
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in "\t\n\r" or category in _SPACES:
            kept.append(" ")
        elif category not in _DROPPED:
            kept.append(char)
    one_line = " ".join("".join(kept).split())
    if len(one_line) > limit:
        one_line = one_line[: limit - 1].rstrip() + "…"
    return one_line


def uses_osc777(environ: Mapping[str, str]) -> bool:
    """Whether this terminal shows OSC 777 notifications rather than OSC 9 ones."""
    term = environ.get("TERM", "")
    return bool(environ.get("VTE_VERSION")) or term.startswith(("foot", "rxvt"))


def desktop_sequence(title: str, body: str, environ: Mapping[str, str]) -> str:
    """The desktop notification for this terminal (title and body cleaned here)."""
    title = clean(title).replace(";", ",")  # OSC 777 separates its fields with ';'
    body = clean(body)
    if uses_osc777(environ):
        sequence = f"\x1b]777;notify;{title};{body}{BEL}"
    else:
        # OSC 9 has only a message. It starts with the title, so it never starts with
        # digits and ';' (which ConEmu would read as one of its own OSC 9 commands).
        sequence = f"\x1b]9;{title}: {body}{BEL}"
    if environ.get("TMUX"):
        # tmux passes a sequence through when it is wrapped and its ESCs doubled.
        sequence = "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return sequence


def notification(setting: str, title: str, body: str, environ: Mapping[str, str]) -> str:
    """Everything to write for one notification under `setting` ("" when off)."""
    parts = []
    if setting in ("desktop", "both"):
        parts.append(desktop_sequence(title, body, environ))
    if setting in ("bell", "both"):
        parts.append(BEL)
    return "".join(parts)


class TerminalNotifier:
    """Sends a notification when the terminal is not focused, through `write`."""

    def __init__(
        self,
        setting: str,
        *,
        write: Callable[[str], None],
        focused: Callable[[], bool],
        environ: Mapping[str, str],
        title: str = TITLE,
    ) -> None:
        self.setting = setting
        self._write = write
        self._focused = focused
        self._environ = environ
        self.title = title
        self.sent: list[str] = []  # the bodies sent, newest last (for the status and tests)

    def notify(self, body: str) -> bool:
        """Send `body` if the user is away and notifications are on; True if sent."""
        if self.setting == "off" or self._focused():
            return False
        data = notification(self.setting, self.title, body, self._environ)
        if not data:
            return False
        self._write(data)
        self.sent.append(clean(body))
        return True
