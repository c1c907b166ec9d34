"""The completion popup above the prompt (slash commands, `@` files) and the attachment chips.

The popup never takes the focus: the prompt forwards ↑/↓, Tab/Enter and Esc to
it while it is shown (`PromptInput.completion`), so typing goes on uninterrupted.
What the prompt's text means (which word is being completed) is worked out by
`completion_target`, a pure function the tests drive directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

# `@path` mentions in a prompt: up to the next whitespace.
MENTION = re.compile(r"(?:(?<=\s)|^)@(\S+)")


@dataclass(frozen=True)
class Target:
    """The word being completed: its kind, what was typed of it, and where it is."""

    kind: str  # "slash" or "file"
    typed: str  # without the / or @
    start: int  # offset in the text of the / or @
    end: int  # offset just after the word


def completion_target(text: str, cursor: int) -> Target | None:
    """What the cursor is completing: a slash command on the first line, or an `@` word."""
    before = text[:cursor]
    if before.startswith("/") and not any(c.isspace() for c in before):
        return Target("slash", before[1:], 0, len(before))
    match = re.search(r"(?:(?<=\s)|^)@(\S*)$", before)
    if match is None:
        return None
    after = re.match(r"\S*", text[cursor:])
    end = cursor + (after.end() if after else 0)
    return Target("file", match.group(1), match.start(), end)


def mentioned_paths(text: str) -> list[str]:
    """Every `@path` in the text, in order, once each (trailing punctuation dropped)."""
    seen: list[str] = []
    for match in MENTION.finditer(text):
        path = match.group(1).rstrip(".,;:!?)")
        if path and path not in seen:
            seen.append(path)
    return seen


@dataclass(frozen=True)
class Suggestion:
    value: str  # what replaces the word (without the / or @)
    help: str = ""
    display: str = ""  # shown instead of the value (a command's usage)


class CompletionList(OptionList):
    """The suggestions; `Chosen` says which one the user took."""

    DEFAULT_CSS = """
    CompletionList {
        height: auto; max-height: 10; border: round $accent; background: $surface;
        padding: 0 1; display: none;
    }
    CompletionList.-shown { display: block; }
    """

    class Chosen(Message):
        def __init__(self, target: Target, suggestion: Suggestion) -> None:
            super().__init__()
            self.target = target
            self.suggestion = suggestion

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.can_focus = False
        self.target: Target | None = None
        self.suggestions: list[Suggestion] = []

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    def show(self, target: Target, suggestions: list[Suggestion]) -> None:
        if not suggestions:
            self.hide()
            return
        self.target = target
        self.suggestions = suggestions
        prefix = "/" if target.kind == "slash" else "@"
        self.clear_options()
        self.add_options(
            [
                Option(
                    Text.assemble(
                        (s.display or prefix + s.value, "bold"),
                        (f"  {s.help}" if s.help else "", "dim"),
                    )
                )
                for s in suggestions
            ]
        )
        self.highlighted = 0
        self.add_class("-shown")

    def hide(self) -> None:
        self.target = None
        self.suggestions = []
        self.remove_class("-shown")

    def move(self, delta: int) -> None:
        if self.suggestions:
            index = (self.highlighted or 0) + delta
            self.highlighted = max(0, min(len(self.suggestions) - 1, index))

    def choose(self) -> bool:
        """Take the highlighted suggestion; False when there is none."""
        index = self.highlighted
        if self.target is None or index is None or not (0 <= index < len(self.suggestions)):
            return False
        self.post_message(self.Chosen(self.target, self.suggestions[index]))
        self.hide()
        return True

    def use_key(self, key: str) -> bool:
        """A key the prompt forwards while the popup is shown; True when it was used."""
        if not self.shown:
            return False
        if key == "down":
            self.move(1)
        elif key == "up":
            self.move(-1)
        elif key in ("tab", "enter"):
            return self.choose()
        elif key == "escape":
            self.hide()
        else:
            return False
        return True


class AttachmentChips(Static):
    """The files that will go with the message, one chip each."""

    DEFAULT_CSS = """
    AttachmentChips { height: auto; padding: 0 1; display: none; }
    AttachmentChips.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.paths: list[str] = []

    def set_paths(self, paths: list[str]) -> None:
        self.paths = list(paths)
        chips: list[tuple[str, str] | str] = []
        for path in self.paths:
            chips += [(f" 📎 {path} ", "bold #1a1b26 on #7aa2f7"), " "]
        self.update(Text.assemble(*chips) if chips else "")
        self.set_class(bool(self.paths), "-shown")
