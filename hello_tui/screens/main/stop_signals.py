"""SIGTERM and SIGHUP (the terminal closed) end the app as ctrl+q does: the session is saved."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)
# Signals that end the app the way ctrl+q does: exit 128 + N.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class StopSignals:
    def __init__(self, exit_app: Callable[..., Any]) -> None:
        self._exit = exit_app
        self._installed: list[signal.Signals] = []

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
        self._exit(128 + int(sig))
