"""The review's key list: what each key of the patch review does, as a modal."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Static

REVIEW_HELP = """\
j / ↓        next hunk (past a file's last hunk: the next file)
k / ↑        previous hunk (before the first: the previous file)
tab          next file
shift+tab    previous file
space        accept / decline the current hunk (all start accepted)
click        a hunk header toggles it too
s            side by side ⇄ unified
← → / h l    scroll long lines sideways (both sides together)
home         back to the start of the lines
w            wrap long lines ⇄ cut them
e            edit the accepted hunks' version of the file in $VISUAL / $EDITOR
a            accept: apply the accepted hunks
r            reject the whole patch, with an optional reason for the agent
escape       reject the whole patch (asks first)
?            this help

Nothing is written until you accept. High-risk patches ask once more.
A letter counts when pressed alone (keys in a rush are typing, and go to
the prompt); the arrows, tab and page keys act at once."""


class ReviewHelpScreen(ModalScreen[None]):
    """The review's keys."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close help", id="review_help.close"),
    ]

    DEFAULT_CSS = """
    ReviewHelpScreen { align: center middle; }
    ReviewHelpScreen > Static {
        width: 70; max-width: 95%; height: auto; border: round $primary;
        background: $surface; padding: 1 2;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(REVIEW_HELP, markup=False)

    def action_close(self) -> None:
        self.dismiss(None)
