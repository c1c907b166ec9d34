"""Keys and commands of the main screen."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Markdown

HELP_TEXT = """\
# hello-tui

Type a task and press **Enter**. The agent explores the repository with tools,
keeps a todo list, and proposes patches; nothing is written until you accept
a patch in the review screen.

## Keys
| key | action |
| --- | --- |
| Enter | send the prompt |
| shift+enter, ctrl+j | new line in the prompt |
| ↑ / ↓ on the first / last line | previous / next prompt |
| Esc | cancel the running turn |
| ctrl+b | show / hide the sidebar (notes and backups) |
| ctrl+p | command palette |
| f1 | this help |
| ctrl+q, ctrl+c twice | quit |

## Commands
| command | what it does |
| --- | --- |
| `:plan <goal>` | ask for a plan (steps, risks, validation) without changing files |
| `/undo` | undo the last applied patch (or restore) |
| `/clear` | clear the chat and trace |
| `/resume` | list saved sessions |
| `/mcp` | MCP servers: where they come from, their state, their tools |
| `/help` | this help |
| `:quit`, `:q` | quit |

## Sidebar
Enter on a note opens it. Enter on a backup file shows it side by side with the
current file; `R` restores the file (or the whole folder) after a confirmation,
and the restore itself can be undone with `/undo`.
"""


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

    def compose(self) -> ComposeResult:
        box = VerticalScroll(id="help-box")
        box.border_title = "Help"
        with box:
            yield Markdown(HELP_TEXT)
        yield Footer()

    def action_dismiss(self) -> None:
        self.dismiss(None)
