"""What the terminal shows when a bug ends the app: one line naming the log file.

Textual prints what ends an app on `App.error_console` as it closes; after an
unhandled error that is a full-screen traceback with the frames' locals (the
settings, and so the API key, among them). The app logs the error itself and
installs this console, which prints one line in its place.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from hello_tui.core import logs


class CrashReport(Console):
    def __init__(self) -> None:
        super().__init__(markup=False, highlight=False, stderr=True)
        self.crashed = False  # set by the app once an unhandled error is logged
        self._said = False

    def print(self, *objects: Any, **kwargs: Any) -> None:
        if not self.crashed:
            super().print(*objects, **kwargs)  # an ordinary exit message
            return
        if self._said:
            return  # one line, however many errors followed the first
        self._said = True
        where = logs.current_log_file() or "the log (run with --debug)"
        super().print(Text(f"hello-tui: internal error; details are in {where}", style="bold red"))
