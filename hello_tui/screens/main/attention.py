"""Calling the user back when a decision modal starts waiting and the terminal is not focused."""

from __future__ import annotations

import weakref
from typing import Any

from textual.screen import Screen

from hello_tui.notify import TerminalNotifier
from hello_tui.screens.decision import DecisionModal

# What a desktop notification says when a decision modal waits (by the modal's class, or
# the nearest base class named here).
WAITING_TEXT = {
    "PatchReviewScreen": "A patch waits for your review.",
    "CommandApprovalScreen": "A command waits for your approval.",
    "ToolApprovalScreen": "An MCP tool call waits for your approval.",
    "ServerApprovalScreen": "An MCP server waits for your approval to start.",
    "HighRiskConfirmScreen": "A high-risk patch waits for your confirmation.",
    "ConfirmScreen": "A question waits for your answer.",
}


class Attention:
    """Announces each decision modal once (one shown again after a dialog of its own is not news)."""

    def __init__(self, notifier: TerminalNotifier) -> None:
        self.notifier = notifier
        self._announced: weakref.WeakSet[Screen[Any]] = weakref.WeakSet()

    def screen_changed(self, screen: Screen[Any]) -> None:
        if not isinstance(screen, DecisionModal) or screen in self._announced:
            return
        if not screen.calls_back:
            return
        self._announced.add(screen)
        names = [cls.__name__ for cls in type(screen).__mro__]
        text = next((WAITING_TEXT[n] for n in names if n in WAITING_TEXT), None)
        text = text or "A decision waits for you."
        command = getattr(screen, "command", None)
        if isinstance(command, str) and command:
            text = f"{text.removesuffix('.')}: {command}"  # which one, at a glance
        self.notifier.notify(text)
