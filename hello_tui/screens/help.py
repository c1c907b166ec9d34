"""The help page (F1, /help): Markdown built from the command table and the real bindings."""

from __future__ import annotations

from collections.abc import Iterable

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from hello_tui.widgets.footer import SteadyFooter


def help_page(main_screen: Iterable[BindingType]) -> str:
    """The help page: the commands, then the keys of the main screen (its real `BINDINGS`,
    given) and of every screen and widget with keys of its own."""
    from hello_tui.screens.command_approval import CommandApprovalScreen
    from hello_tui.screens.command_table import help_markdown
    from hello_tui.screens.picker import PickerScreen
    from hello_tui.screens.review import PatchReviewScreen
    from hello_tui.widgets.diff_view import DiffView
    from hello_tui.widgets.sidebar import BackupTree, NotesList
    from hello_tui.widgets.trace import TracePanel

    return help_markdown(
        [
            ("Main screen", [*main_screen, Binding("ctrl+p", "command_palette", "Commands")]),
            ("Patch review", [*PatchReviewScreen.BINDINGS, *DiffView.BINDINGS]),
            ("Command approval", CommandApprovalScreen.BINDINGS),
            ("Sidebar", [*NotesList.BINDINGS, *BackupTree.BINDINGS]),
            ("Trace", TracePanel.BINDINGS),
            ("Pickers (/resume, /model)", PickerScreen.BINDINGS),
        ]
    )


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
        yield SteadyFooter()
