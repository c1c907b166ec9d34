"""The approval modal for a terminal command the policy will not run unasked.

Answers with a CommandVerdict: `y` once, `a` for the rest of the session,
`w` once with network access (commands otherwise run offline in the
sandbox), `n`/escape deny. It is a DecisionModal: only a lone key after a
moment of quiet answers it; typing goes to the prompt. Focus starts on Deny
so a stray Enter runs nothing.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from hello_tui.core.approval import CommandVerdict
from hello_tui.screens.decision import DecisionModal

# Set while the user's own `!command` runs (in its worker's context): the approval it asks
# for says the command is theirs.
USERS_OWN_COMMAND: ContextVar[bool] = ContextVar("users_own_command", default=False)


class CommandApprovalScreen(DecisionModal[CommandVerdict]):
    ready_text = "Ready: y once · a for the session · w with network · n deny"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('once')", "Allow once", id="command.once", tooltip="Run it this time"),
        Binding(
            "a",
            "answer('session')",
            "Allow for session",
            id="command.session",
            tooltip="Run this command without asking until the app closes",
        ),
        Binding(
            "w",
            "answer('network')",
            "Allow with network",
            id="command.network",
            tooltip="Run it this time, with network access",
        ),
        Binding("n,escape", "answer('deny')", "Deny", id="command.deny", tooltip="Do not run it"),
        Binding("left", "app.focus_previous", "Previous button", show=False, id="command.left"),
        Binding("right", "app.focus_next", "Next button", show=False, id="command.right"),
    ]

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    DEFAULT_CSS = """
    CommandApprovalScreen { align: center middle; }
    CommandApprovalScreen > #command-dialog {
        width: 84; max-width: 95%; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 1 2;
    }
    CommandApprovalScreen #command-title { text-style: bold; }
    CommandApprovalScreen #command-text {
        background: $boost; padding: 0 1; margin: 1 0; height: auto; max-height: 12;
    }
    CommandApprovalScreen #command-reason { height: auto; color: $text-muted; }
    CommandApprovalScreen #command-buttons { height: auto; align-horizontal: right; margin-top: 1; }
    CommandApprovalScreen Button { margin-left: 1; }
    CommandApprovalScreen #arming { margin-top: 1; }
    /* Four full buttons need about 80 columns inside the dialog: on a narrow
       terminal they go two by two so every label, the safe one too, stays whole. */
    CommandApprovalScreen.-narrow #command-buttons {
        layout: grid; grid-size: 2; grid-gutter: 0 1; grid-rows: 3;
    }
    CommandApprovalScreen.-narrow Button { width: 100%; margin-left: 0; }
    """

    def __init__(self, command: str, reason: str, *, by_user: bool = False) -> None:
        super().__init__()
        self.command = command
        self.reason = reason
        self.by_user = by_user  # the user's own `!command`, not the agent's

    def compose(self) -> ComposeResult:
        with Vertical(id="command-dialog"):
            title = (
                "Your command (typed with !) asks before it runs"
                if self.by_user
                else "The agent wants to run a command"
            )
            yield Static(title, id="command-title")
            yield Static(f"$ {self.command}", id="command-text", markup=False)
            yield Static(f"Why it needs you: {self.reason}", id="command-reason", markup=False)
            with Horizontal(id="command-buttons"):
                yield Button("Allow once (y)", id="command-once", variant="warning")
                yield Button("Allow for session (a)", id="command-session", variant="warning")
                yield Button("With network (w)", id="command-network", variant="warning")
                yield Button("Deny (n)", id="command-deny", variant="primary")
            yield self.arming_line()

    def on_armed(self) -> None:
        self.query_one("#command-deny", Button).focus()

    def action_answer(self, verdict: CommandVerdict) -> None:
        self.dismiss(verdict)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        verdicts: dict[str, CommandVerdict] = {
            "command-once": "once",
            "command-session": "session",
            "command-network": "network",
            "command-deny": "deny",
        }
        if event.button.id in verdicts:
            self.dismiss(verdicts[event.button.id])
