"""SIGTERM and SIGHUP (the terminal closed) end the app as ctrl+q does: the session is saved.

The app's own way out ends in restoring the terminal, and with the terminal gone that
can wait forever (the driver's writer waits on a terminal nobody reads). So the signal
also starts a deadline: if the process is still there `STOP_GRACE` seconds later, it ends
at once with the same status. The session is saved long before that (`on_unmount`). Only
an app on a real terminal sets one: a headless app (a test's, an embedder's) shares its
process with others, which its way out must never end.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)
# Signals that end the app the way ctrl+q does: exit 128 + N.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
# Seconds the app's own way out may take after such a signal before the process just ends.
STOP_GRACE = 10.0


class StopSignals:
    def __init__(
        self,
        exit_app: Callable[..., Any],
        *,
        on_terminal: Callable[[], bool],
        grace: float = STOP_GRACE,
        hard_exit: Callable[[int], Any] = os._exit,
    ) -> None:
        self._exit = exit_app
        self._on_terminal = on_terminal
        self._grace = grace
        self._hard_exit = hard_exit
        self._installed: list[signal.Signals] = []
        self.deadline: threading.Timer | None = None

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            try:
                loop.add_signal_handler(sig, self._stop, sig)
            except (NotImplementedError, RuntimeError, ValueError):
                continue  # not on this platform or not the main thread: the default stands
            self._installed.append(sig)

    def remove(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._installed:
            loop.remove_signal_handler(sig)
        self._installed = []

    def _stop(self, sig: signal.Signals) -> None:
        log.info("ending on %s: the session is saved on the way out", sig.name)
        code = 128 + int(sig)
        if self.deadline is None and self._on_terminal():
            # A daemon thread: a process that ends in time is not kept waiting for it.
            self.deadline = threading.Timer(self._grace, self._hard_exit, args=(code,))
            self.deadline.daemon = True
            self.deadline.start()
        self._exit(code)
