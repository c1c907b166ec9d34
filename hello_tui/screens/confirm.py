"""Yes/no modals: a generic ConfirmScreen and the high-risk patch confirmation.

Both are DecisionModals (only a lone key after a moment of quiet answers them).
Focus starts on the safe choice ("No"), so a stray Enter never confirms; `y`
confirms, `n` and escape cancel.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from hello_tui.screens.decision import DecisionModal


class ConfirmScreen(DecisionModal[bool]):
    """Ask one question; dismisses with True (y) or False (n, escape, the No button)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes", tooltip="Confirm"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no", tooltip="Cancel"),
        Binding("left", "app.focus_previous", "Previous button", show=False, id="confirm.left"),
        Binding("right", "app.focus_next", "Next button", show=False, id="confirm.right"),
    ]

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > #confirm-dialog {
        width: 76; max-width: 95%; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    ConfirmScreen.-danger > #confirm-dialog { border: thick $error; }
    ConfirmScreen #confirm-title { text-style: bold; margin-bottom: 1; }
    ConfirmScreen #confirm-message { height: auto; }
    ConfirmScreen #confirm-buttons { height: auto; align-horizontal: right; margin-top: 1; }
    ConfirmScreen Button { margin-left: 2; }
    ConfirmScreen #arming { margin-top: 1; }
    """

    def __init__(
        self,
        title: str,
        message: str,
        yes_label: str = "Yes (y)",
        no_label: str = "No (n)",
        danger: bool = False,
    ) -> None:
        super().__init__(classes="-danger" if danger else None)
        self.title_text = title
        self.ready_text = f"Ready: {yes_label} · {no_label}"
        self.message = message
        self.yes_label = yes_label
        self.no_label = no_label

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(self.title_text, id="confirm-title", markup=False)
            yield Static(self.message, id="confirm-message", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button(self.yes_label, id="confirm-yes", variant="error")
                yield Button(self.no_label, id="confirm-no", variant="primary")
            yield self.arming_line()

    def on_armed(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    @on(Button.Pressed, "#confirm-yes")
    def _yes(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#confirm-no")
    def _no(self) -> None:
        self.dismiss(False)


class HighRiskConfirmScreen(ConfirmScreen):
    """The second, explicit confirmation a high-risk patch needs, saying why."""

    def __init__(self, reasons: list[str]) -> None:
        lines = [f"• {reason}" for reason in reasons] or [
            "• the patch engine flagged it as high risk"
        ]
        message = (
            "This patch is high risk:\n"
            + "\n".join(lines)
            + "\n\nApply it anyway? Nothing is written if you cancel; you return to the review."
        )
        super().__init__(
            "⚠ Confirm a high-risk patch",
            message,
            yes_label="Apply (y)",
            no_label="Back to review (n)",
            danger=True,
        )
        self.reasons = list(reasons)
