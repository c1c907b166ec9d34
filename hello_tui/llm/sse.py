"""A bounded decoder for server-sent events (the WHATWG event-stream rules).

Lines end in CRLF, LF or CR; a line starting with ":" is a comment; a line
`field: value` sets a field (one leading space of the value is dropped, a
line without a colon is a field with an empty value); `data` lines are joined
with newlines; a blank line dispatches the event. Only `data` and `event`
matter for chat completions, so `id` and `retry` are read and ignored.

Two departures from the standard, both for the model streams we read:
- memory is bounded: a line or an event longer than `max_event_bytes` raises
  `EventTooLarge` instead of buffering without end;
- at the end of the stream an event whose last line arrived whole is still
  dispatched (some servers end with `data: [DONE]\\n` and close), while a
  line cut off mid-way is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FIELD_LINE = re.compile(r"^(?::|(?:data|event|id|retry)(?::|$))")
FIRST_LINE_SNIFF_BYTES = 4096


class EventTooLarge(Exception):
    """One line or event of the stream exceeded the decoder's bound."""


@dataclass(frozen=True)
class ServerSentEvent:
    event: str  # "message" unless the stream named it
    data: str


def looks_like_event_stream(line: str) -> bool:
    """Whether a stream's first non-blank line is shaped like SSE (a field or a comment)."""
    return bool(_FIELD_LINE.match(line.lstrip("\ufeff")))


class SSEDecoder:
    """Feed bytes, get complete events; `first_line` is the first non-blank line seen."""

    def __init__(self, max_event_bytes: int) -> None:
        self.max_event_bytes = max_event_bytes
        self.first_line: str | None = None
        self._pending = bytearray()  # bytes of the line not yet terminated
        self._data: list[str] = []
        self._data_size = 0
        self._event = ""
        self._started = False  # the BOM is only stripped at the very start
        self._last_line_whole = True

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        events: list[ServerSentEvent] = []
        self._pending += chunk
        start = 0
        buf = self._pending
        size = len(buf)
        # Each search runs again only once passed: one scan of the buffer in all.
        cr = buf.find(b"\r")
        lf = buf.find(b"\n")
        while cr >= 0 or lf >= 0:
            if lf < 0 or (0 <= cr < lf):
                end = cr
                if end == size - 1:
                    break  # a CR at the end may be the first half of CRLF: wait
                after = end + 2 if buf[end + 1 : end + 2] == b"\n" else end + 1
            else:
                end, after = lf, lf + 1
            self._line(bytes(buf[start:end]), events)
            start = after
            if 0 <= cr < start:
                cr = buf.find(b"\r", start)
            if 0 <= lf < start:
                lf = buf.find(b"\n", start)
        del self._pending[:start]
        if self.first_line is None and len(self._pending) >= FIRST_LINE_SNIFF_BYTES:
            # A body with no line break for this long is not an event stream,
            # but let the caller decide from what it starts with.
            self.first_line = bytes(self._pending[:FIRST_LINE_SNIFF_BYTES]).decode(
                "utf-8", "replace"
            )
        if len(self._pending) > self.max_event_bytes:
            raise EventTooLarge(f"a line of the stream passed {self.max_event_bytes} bytes")
        self._last_line_whole = not self._pending
        return events

    def close(self) -> list[ServerSentEvent]:
        """End of stream: dispatch a pending event whose lines all arrived whole."""
        events: list[ServerSentEvent] = []
        if self.first_line is None and self._pending.strip():
            self.first_line = (
                bytes(self._pending[:FIRST_LINE_SNIFF_BYTES])
                .decode("utf-8", "replace")
                .lstrip("\ufeff")
            )
        if self._pending.endswith(b"\r"):
            self._line(bytes(self._pending[:-1]), events)
            self._pending.clear()
            self._last_line_whole = True
        if self._pending:
            self._pending.clear()  # a line cut off mid-way is not data
        elif self._data and self._last_line_whole:
            self._dispatch(events)
        self._data.clear()
        return events

    def _line(self, raw: bytes, events: list[ServerSentEvent]) -> None:
        line = raw.decode("utf-8", "replace")
        if not self._started:
            self._started = True
            line = line.removeprefix("\ufeff")
        if self.first_line is None and line.strip():
            self.first_line = line
        if not line:
            self._dispatch(events)
            return
        if line.startswith(":"):
            return
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data_size += len(value) + 1
            if self._data_size > self.max_event_bytes:
                raise EventTooLarge(f"an event of the stream passed {self.max_event_bytes} bytes")
            self._data.append(value)
        elif name == "event":
            self._event = value

    def _dispatch(self, events: list[ServerSentEvent]) -> None:
        if self._data:
            events.append(ServerSentEvent(self._event or "message", "\n".join(self._data)))
        self._data = []
        self._data_size = 0
        self._event = ""
