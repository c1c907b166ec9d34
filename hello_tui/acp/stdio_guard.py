"""Stdout belongs to JSON-RPC alone: stray prints and child output go to the log file.

`guard_stdout(path)` moves the process's real stdout to a private file
descriptor, points fd 1 (and `sys.stdout`) at the log file, and returns the
private descriptor. Every `print`, every library that writes to stdout, and
every child process that inherits fd 1 then lands in the log, while the ACP
connection writes to the descriptor it was handed. `protocol_streams` wraps
stdin and that descriptor as the asyncio streams the SDK's connection reads
and writes.
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
from pathlib import Path


def guard_stdout(log_file: Path) -> int:
    """Returns the descriptor that now holds the real stdout (for JSON-RPC only)."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.set_inheritable(protocol_fd, False)  # commands the agent runs never see the channel
    log_file.parent.mkdir(parents=True, exist_ok=True)
    stray = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(stray, 1)
    os.close(stray)
    sys.stdout = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="replace", line_buffering=True
    )
    return protocol_fd


class _WriteProtocol(asyncio.streams.FlowControlMixin):
    """The flow control asyncio.StreamWriter needs for `drain()` on a write pipe."""


async def protocol_streams(
    protocol_fd: int, limit: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """(reader of stdin, writer of the protocol descriptor) for the ACP connection."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(0, "rb", closefd=False)
    )
    transport, protocol = await loop.connect_write_pipe(
        _WriteProtocol, os.fdopen(protocol_fd, "wb")
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer
