"""The main screen's keys: one `Binding` each, with an id, a description and a tooltip.

The app installs them as its `BINDINGS`; the help page (F1) lists them from
here, so what the help says a key does is what the key does. Which of them
apply at a given moment is the app's `check_action`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.binding import Binding, BindingType

from hello_tui.screens.main.host import Host
from hello_tui.screens.main.turns import TurnController

CTRL_C_WINDOW = 2.0

MAIN_BINDINGS: list[BindingType] = [
    Binding(
        "escape", "cancel_turn", "Cancel turn", id="app.cancel", tooltip="Stop the running turn"
    ),
    Binding(
        "ctrl+b",
        "toggle_sidebar",
        "Sidebar",
        id="app.sidebar",
        tooltip="Notes and backups",
        priority=True,
    ),
    Binding(
        "shift+tab",
        "cycle_mode",
        "Mode",
        id="app.mode",
        tooltip="Cycle the permission mode: ask, auto-edit, read-only",
        priority=True,
    ),
    Binding(
        "pageup",
        "page_chat(-1)",
        "Scroll chat",
        show=False,
        id="app.chat_page_up",
        tooltip="Scroll the chat a page (the prompt keeps the focus)",
    ),
    Binding(
        "pagedown",
        "page_chat(1)",
        "Scroll chat",
        show=False,
        id="app.chat_page_down",
        tooltip="Scroll the chat a page (the prompt keeps the focus)",
    ),
    Binding(
        "ctrl+o",
        "toggle_fold",
        "Fold/unfold",
        show=False,
        id="app.toggle_fold",
        tooltip="Show or fold the newest applied diff in the chat (a click on it does too)",
    ),
    Binding("f1", "help", "Help", id="app.help", tooltip="Keys and commands"),
    Binding(
        "ctrl+q",
        "quit",
        "Quit",
        id="app.quit",
        tooltip="Leave hello-tui, the session saved (ctrl+c twice on an empty prompt too)",
        priority=True,
    ),
    Binding(
        "ctrl+c",
        "ctrl_c",
        "Interrupt",
        show=False,
        id="app.ctrl_c",
        tooltip="Interrupt the running turn; else clear the prompt; twice on an empty one, quit",
        priority=True,
    ),
    Binding(
        "ctrl+x",
        "drop_queued",
        "Drop queued",
        id="app.drop_queued",
        tooltip="Drop the newest queued message (only while one waits; it is not sent)",
        priority=True,  # before the prompt's own ctrl+x (cut); only while a message waits
    ),
]


class CtrlC:
    """ctrl+c: interrupt the running turn; else clear the prompt; on an empty prompt, twice
    within `CTRL_C_WINDOW` quits."""

    def __init__(
        self,
        host: Host,
        turns: TurnController,
        cancel: Callable[[], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.host = host
        self.turns = turns
        self._cancel = cancel
        self._clock = clock
        self._last = -CTRL_C_WINDOW * 2

    def press(self) -> None:
        prompt = self.host.views.prompt
        if self.turns.interruptible:
            self._cancel()
            self._last = -CTRL_C_WINDOW * 2
            self.host.notify("Interrupting the turn…", timeout=CTRL_C_WINDOW)
            return
        if prompt.text:
            prompt.clear_keeping_history()
            self._last = -CTRL_C_WINDOW * 2
            return
        now = self._clock()
        if now - self._last <= CTRL_C_WINDOW:
            self.host.exit(0)
            return
        self._last = now
        self.host.notify("Press ctrl+c again to quit.", timeout=CTRL_C_WINDOW)
