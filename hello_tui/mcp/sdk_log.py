"""What the MCP SDK logs goes to hello-tui's log file, never onto the user's terminal.

The SDK logs through `logging` under `mcp.*` and two bare names (`client`,
`server`): a server's stdout line that is not an MCP message is logged with
its traceback (and the line, escape codes and all), a killed HTTP server
leaves "Session termination failed". With no handler of their own those
records reach Python's last-resort handler, which prints them on stderr: nine
tracebacks over `exec`'s output, or over the screen the app draws. Routed
here, they are handed to the `hello_tui` logger, whose handler writes the log
file (`core.logs`); what the user reads is the one line the MCP code says
about it.
"""

from __future__ import annotations

import logging

SDK_LOGGERS = ("mcp", "client", "server")
_TARGET = "hello_tui.mcp.sdk"


class _ToHelloTuiLog(logging.Handler):
    """Passes each record on to hello-tui's own logger (and so to its log file)."""

    def emit(self, record: logging.LogRecord) -> None:
        target = logging.getLogger(_TARGET)
        # Before hello-tui's log is set up there is nowhere quiet to write it: Python's
        # last-resort handler would print it on the terminal, which is what this prevents.
        if target.hasHandlers():
            target.handle(record)


_handler = _ToHelloTuiLog()


def route_sdk_logging() -> None:
    """Route the SDK's loggers to hello-tui's log (once; later calls change nothing)."""
    for name in SDK_LOGGERS:
        logger = logging.getLogger(name)
        if _handler not in logger.handlers:
            logger.addHandler(_handler)
        logger.propagate = False
