"""The review's way out: "really reject?" for escape, and an optional reason for `r`.

The reason goes back to the model with the rejection, so it can do better on
its next try; Enter with nothing typed rejects without one.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Static

from hello_tui.screens.confirm import ConfirmScreen
from hello_tui.screens.decision import DecisionModal, FieldInput


def confirm_reject_screen() -> ConfirmScreen:
    return ConfirmScreen(
        "Reject this patch?",
        "Nothing is written and the agent is told you rejected it.\n"
        "To say why, go back and press r.",
        yes_label="Reject (y)",
        no_label="Back to review (n)",
    )


class RejectReasonScreen(DecisionModal["str | None"]):
    """Dismisses with the reason (possibly empty) to reject, or None to go back to the review.

    A text field: keys typed while it arms go to the prompt; once armed, typing is its point,
    and Enter rejects only pressed on its own (a burst or a pasted line's newline does not).
    """

    takes_typing = True

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back to review", id="reject.back"),
    ]
    ready_text = "Ready: type a reason and press Enter (or just Enter) · escape goes back"

    DEFAULT_CSS = """
    RejectReasonScreen { align: center middle; }
    RejectReasonScreen > #reject-dialog {
        width: 76; max-width: 95%; height: auto;
        border: thick $warning; background: $surface; padding: 1 2;
    }
    RejectReasonScreen #reject-title { text-style: bold; margin-bottom: 1; }
    RejectReasonScreen #reject-reason { margin-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        with Vertical(id="reject-dialog"):
            yield Static("Reject the patch: why? (optional)", id="reject-title")
            yield FieldInput(placeholder="what the agent should do instead…", id="reject-reason")
            yield self.arming_line()

    def on_armed(self) -> None:
        self.query_one("#reject-reason", Input).focus()

    @on(Input.Submitted, "#reject-reason")
    def _submitted(self, event: Input.Submitted) -> None:
        if self.armed:
            self.dismiss(event.value.strip())

    def action_back(self) -> None:
        self.dismiss(None)
