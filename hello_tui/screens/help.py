"""The help page (F1, /help): Markdown the app builds from its command table and bindings."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Markdown


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="help.close", tooltip="Back to the app"),
        Binding("q", "dismiss", "Close", show=False),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > #help-box {
        width: 90; max-width: 95%; height: 85%; border: round $accent; background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        box = VerticalScroll(id="help-box")
        box.border_title = "Help"
        with box:
            yield Markdown(self.text)
        yield Footer()

    def action_dismiss(self) -> None:
        self.dismiss(None)
