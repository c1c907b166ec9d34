"""A note's Markdown in a scrollable viewer; Esc or q closes it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Markdown, Static


class NoteViewerScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="note.close", tooltip="Back to the app"),
        Binding("q", "dismiss", "Close", show=False),
    ]

    DEFAULT_CSS = """
    NoteViewerScreen { align: center middle; }
    NoteViewerScreen > #note-box {
        width: 90%; height: 85%; border: round $accent; background: $surface; padding: 0 1;
    }
    NoteViewerScreen #note-meta { color: $text-muted; height: auto; }
    """

    def __init__(self, title: str, markdown: str, meta: str = "") -> None:
        super().__init__()
        self.note_title = title
        self.markdown = markdown
        self.meta = meta

    def compose(self) -> ComposeResult:
        box = VerticalScroll(id="note-box")
        box.border_title = self.note_title
        with box:
            if self.meta:
                yield Static(self.meta, id="note-meta", markup=False)
            yield Markdown(self.markdown, id="note-body")
        yield Footer()

    def action_dismiss(self) -> None:
        self.dismiss(None)
