"""The JSONL transcript: every event of a session, one JSON object per line.

Lives in `.helloagents/logs/<session id>.jsonl`. Events are buffered in memory
and serialised and written in one append per flush (the engine flushes after every step and
at exit, off the event loop), not one open/close per token. A log that cannot
be written (disk full, read-only) must not stop the agent, so a write error
switches the log off and is reported once through `error`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path
from typing import Any

from hello_tui.core.events import Event

log = logging.getLogger(__name__)


class TranscriptLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: str | None = None
        # Events wait here as they are (frozen, so safe to serialise on the writing thread).
        self._pending: list[Event] = []
        # A flush on a worker thread and one at exit must not interleave their lines.
        self._write_lock = threading.Lock()
        self._order: asyncio.Lock | None = None

    def write(self, event: Event) -> None:
        """Buffer one event (no disk access, no serialising)."""
        if self.error is None:
            self._pending.append(event)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def flush(self) -> None:
        """Append every buffered line in one write (on this thread)."""
        self._append(self._take())

    async def flush_async(self) -> None:
        """The same, with the disk write on a worker thread; flushes keep their order."""
        if self._order is None:
            self._order = asyncio.Lock()
        async with self._order:
            lines = self._take()
            if lines:
                await asyncio.to_thread(self._append, lines)

    def _take(self) -> list[Event]:
        # Taken on the thread that buffers, so no event slips between read and reset.
        lines, self._pending = self._pending, []
        return lines

    def _append(self, events: list[Event]) -> None:
        if not events or self.error is not None:
            return
        lines = [json.dumps(e.to_dict(), ensure_ascii=False, default=str) for e in events]
        with self._write_lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write("\n".join(lines) + "\n")
            except OSError as exc:
                self.error = f"transcript log disabled: {exc}"
                log.warning("transcript %s could not be written", self.path, exc_info=True)

    def read(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
        return out
