"""Stdio belongs to JSON-RPC alone: stray output goes to the log, stray input gets its error.

Stdout:
`guard_stdout(path)` moves the process's real stdout to a private file
descriptor, points fd 1 (and `sys.stdout`) at the log file, and returns the
private descriptor. Every `print`, every library that writes to stdout, and
every child process that inherits fd 1 then lands in the log, while the ACP
connection writes to the descriptor it was handed. `protocol_streams` wraps
stdin and that descriptor as the asyncio streams the SDK's connection reads
and writes.

Stdin: `GuardedTransport` reads the client's lines and hands the SDK's
connection only well-formed JSON-RPC 2.0 messages (its reader assumes every
line is an object and dies on `[]`, `42` or `null`). The rest is answered as
JSON-RPC says: a line that is not JSON, -32700 with id null; JSON that is no
request, notification or response, -32600 (with the id when one can be told,
else null); an empty array, one -32600. A batch (a non-empty array) gets an
array of -32600 errors, one per request in it: ACP has no batches and the SDK
answers each request on its own line, so running them would break the rule
that a batch is answered by one array; refusing each element keeps to it and
says why. A line longer than `line_limit` is skipped without being kept in
memory and answered -32600 (its id taken from the head of the line when it
leads, as clients write it). Long lines are parsed on a worker thread, so a
large prompt never stalls the loop.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
# Lines longer than this are parsed on a worker thread.
THREAD_PARSE_BYTES = 1 << 20
# The id of an over-long line, when it comes before the params (as clients write it).
_LEADING_ID = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"[^"\\]{0,200}")'
)


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


def _valid_id(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int | float) and not isinstance(value, bool))
    )


def _problem(message: Any) -> str | None:
    """Why `message` is not a JSON-RPC 2.0 request, notification or response; None if it is."""
    if not isinstance(message, dict):
        return f"a JSON-RPC message is an object, not {_kind(message)}"
    if message.get("jsonrpc") != "2.0":
        return 'the "jsonrpc" member must be "2.0"'
    if "id" in message and not _valid_id(message["id"]):
        return "an id is a string, a number or null"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "a method name is a string"
        if "params" in message and not isinstance(message["params"], dict | list):
            return "params are an object or an array"
        return None
    if "id" not in message or message["id"] is None and "error" not in message:
        return "neither a request (no method) nor a response (no id)"
    if ("result" in message) == ("error" in message):
        return "a response has either a result or an error"
    error = message.get("error")
    if "error" in message and not (
        isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and isinstance(error.get("message"), str)
    ):
        return "an error is an object with an integer code and a message"
    return None


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if value is None:
        return "null"
    return {bool: "a boolean", str: "a string"}.get(type(value), "a number")


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _id_of(message: Any) -> Any:
    if isinstance(message, dict) and _valid_id(message.get("id")):
        return message.get("id")
    return None


class GuardedTransport:
    """The SDK's `Transport` over stdio, letting through valid JSON-RPC messages only."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, line_limit: int
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._line_limit = line_limit
        self._lock = asyncio.Lock()
        self._closed = False

    async def send(self, message: Any) -> None:
        data = (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        async with self._lock:  # one whole line at a time
            if self._closed:
                raise ConnectionError("the client's connection is closed")
            self._writer.write(data)
            await self._writer.drain()

    async def close(self) -> None:
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            # Every line was drained when sent; the pipe's protocol has no close waiter.
            self._writer.close()

    async def receive(self) -> dict[str, Any] | None:
        """The next valid message; None when the client closed its end."""
        while True:
            line = await self._read_line()
            if line is None:
                return None
            if isinstance(line, _TooLong):
                await self._refuse(line.request_id, INVALID_REQUEST, "Invalid Request", line.why)
                continue
            line = line.strip()
            if not line:
                continue
            try:
                if len(line) > THREAD_PARSE_BYTES:
                    message = await asyncio.to_thread(json.loads, line)
                else:
                    message = json.loads(line)
            except ValueError as exc:  # not JSON, or not UTF-8
                await self._refuse(None, PARSE_ERROR, "Parse error", str(exc))
                continue
            if isinstance(message, list) and message:
                await self._refuse_batch(message)
                continue
            problem = _problem(message)
            if problem is None:
                return message
            await self._refuse(_id_of(message), INVALID_REQUEST, "Invalid Request", problem)

    async def _refuse(self, request_id: Any, code: int, text: str, why: str) -> None:
        log.warning("ACP input refused (%s): %s", code, why)
        await self._send_quietly(_error(request_id, code, text, {"details": why}))

    async def _refuse_batch(self, batch: list[Any]) -> None:
        why = "ACP does not use JSON-RPC batches: send each message on its own line"
        replies = [
            _error(_id_of(item), INVALID_REQUEST, "Invalid Request", {"details": why})
            for item in batch
            # A notification in a batch is answered by nothing, as in any batch.
            if not (isinstance(item, dict) and "method" in item and "id" not in item)
        ]
        log.warning("ACP batch of %d refused", len(batch))
        if replies:
            await self._send_quietly(replies)

    async def _send_quietly(self, payload: Any) -> None:
        try:
            await self.send(payload)
        except (ConnectionError, OSError):
            log.info("the client left before its error could be sent")

    async def _read_line(self) -> bytes | _TooLong | None:
        """One line, kept only up to `line_limit` bytes; None at the end of input."""
        kept: list[bytes] = []
        size = 0
        head = b""
        while True:
            ended = False
            try:
                chunk = await self._reader.readuntil(b"\n")
                ended = True
            except asyncio.LimitOverrunError as exc:
                chunk = await self._reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError as exc:
                chunk, ended = exc.partial, True
                if not chunk and not kept and size == 0:
                    return None
            if not head:
                head = chunk[:512]
            size += len(chunk)
            if size <= self._line_limit:
                kept.append(chunk)
            else:
                kept.clear()  # skipped, never held whole
            if ended:
                break
        if size > self._line_limit:
            match = _LEADING_ID.match(head)
            request_id = json.loads(match.group(1)) if match else None
            why = f"a message of {size:,} bytes is longer than the {self._line_limit:,} allowed"
            return _TooLong(request_id, why)
        return b"".join(kept)


class _TooLong:
    def __init__(self, request_id: Any, why: str) -> None:
        self.request_id = request_id
        self.why = why
