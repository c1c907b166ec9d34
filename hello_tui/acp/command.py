"""`hello-tui acp`: serve the Agent Client Protocol on stdin/stdout until the client hangs up.

Logging goes to the log file of the repository given with --repo (default:
the current folder); so does anything else that would have reached stdout
(see `stdio_guard`). Exit codes: 0 the client closed the connection; 2 a
configuration error before serving (said on stderr).

When the client closes stdin, even mid-turn, the process is gone within 2 s: the
connection's close cancels every running prompt (its turn is closed and its
session saved), the engines get `CLOSE_WITHIN` to stop their MCP servers and
model clients, and then the process exits without waiting for what is still
stopping (an MCP server's grace period, a tool's worker thread): the client
that would have read the rest has left.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import logging
import os
import sys
from typing import NoReturn, cast

EXIT_OK = 0
EXIT_USAGE = 2
# Prompts with embedded files can be large: one JSON-RPC line may hold several megabytes.
# A longer line is refused (see `stdio_guard.GuardedTransport`) without being held whole.
LINE_LIMIT = 64 * 1024 * 1024
# What the stdin reader buffers at a time; lines longer than this are read in pieces.
READ_BUFFER = 1024 * 1024
# Seconds the sessions' engines get to close once the client has hung up (their turns are
# cancelled and saved before): with the detection and the saves, inside the 2 s promised.
CLOSE_WITHIN = 1.0


class _IntoOurLog(logging.Handler):
    """Records of other libraries (the ACP SDK logs on the root logger) go to our log file."""

    def emit(self, record: logging.LogRecord) -> None:
        # Our own records reach the root logger too (propagation), and so does a forwarded one.
        if record.name.startswith("hello_tui") or getattr(record, "forwarded", False):
            return
        record.forwarded = True
        logging.getLogger("hello_tui.acp.libraries").handle(record)


async def _serve(args: argparse.Namespace, protocol_fd: int) -> None:
    from acp import Agent, run_agent

    from hello_tui.acp.server import HelloTuiAgent
    from hello_tui.acp.stdio_guard import GuardedTransport, protocol_streams

    reader, writer = await protocol_streams(protocol_fd, READ_BUFFER)
    agent = HelloTuiAgent(args)
    # The SDK's connection sees only valid JSON-RPC: the guard answers everything else.
    transport = GuardedTransport(reader, writer, line_limit=LINE_LIMIT)
    # The SDK's Agent protocol lists every method; those we lack answer "method not found".
    try:
        # Returns when the client hangs up; the connection's close cancels a running prompt
        # (its turn is closed and saved), then the engines close.
        await run_agent(cast("Agent", agent), transport)
    except BaseException:
        await agent.close()
        raise
    await agent.close(within=CLOSE_WITHIN)
    _leave(EXIT_OK)


def _leave(code: int) -> NoReturn:
    """Exit now: the exit handlers run (the log is flushed, commands' folders removed), but
    nobody waits for worker threads or tasks still stopping, as interpreter exit would."""
    sys.stdout.flush()
    sys.stderr.flush()
    atexit._run_exitfuncs()
    os._exit(code)


def run_acp(args: argparse.Namespace) -> int:
    from hello_tui.acp.stdio_guard import guard_stdout
    from hello_tui.config import ConfigError, settings_from_args
    from hello_tui.core import logs

    try:
        settings = settings_from_args(args)
    except ConfigError as exc:
        from hello_tui.core.terminal_text import safe_text

        # A repository can put escape sequences in it (its state folder's link target).
        sys.stderr.write(safe_text(f"hello-tui acp: {exc}") + "\n")
        return EXIT_USAGE
    log_file = logs.configure(settings)
    protocol_fd = guard_stdout(log_file)
    root = logging.getLogger()
    root.addHandler(_IntoOurLog())
    # Other libraries' warnings and errors only: their debug lines can carry request details.
    root.setLevel(logging.WARNING)
    logging.captureWarnings(True)
    try:
        asyncio.run(_serve(args, protocol_fd))
    except KeyboardInterrupt:
        pass
    return EXIT_OK
