"""Read-only diff of a backed-up file against the current file, opened from the sidebar."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from hello_tui.widgets.diff_view import DiffView
from hello_tui.widgets.footer import SteadyFooter


class BackupDiffScreen(ModalScreen[None]):
    """Backup (left, old) against the current file (right, new); escape closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="backup_diff.close", tooltip="Back to the app"),
    ]

    DEFAULT_CSS = """
    BackupDiffScreen { align: center middle; }
    BackupDiffScreen > #backup-dialog {
        width: 100%; height: 100%; background: $surface; border: round $accent;
    }
    BackupDiffScreen #backup-title { height: 1; padding: 0 1; text-style: bold; }
    BackupDiffScreen #backup-legend { height: 1; padding: 0 1; color: $text-muted; }
    BackupDiffScreen DiffView { height: 1fr; }
    """

    def __init__(self, title: str, old_text: str, new_text: str, path: str | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.old_text = old_text
        self.new_text = new_text
        # The lexer is guessed from this name; the title usually is the file's path.
        self.path = path or title

    def compose(self) -> ComposeResult:
        with Vertical(id="backup-dialog"):
            yield Static(self.title_text, id="backup-title", markup=False)
            yield Static("left: the backup · right: the file now", id="backup-legend")
            yield DiffView(show_hunk_state=False, id="backup-diff")
            yield SteadyFooter()

    def on_mount(self) -> None:
        view = self.query_one(DiffView)
        view.focus()
        view.load_texts(self.path, self.old_text, self.new_text)

    def action_close(self) -> None:
        self.dismiss(None)
