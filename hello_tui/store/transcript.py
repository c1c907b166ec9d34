"""The JSONL transcript: every event of a session, one JSON object per line.

Lives in `.helloagents/logs/<session id>.jsonl`. A log that cannot be written
(disk full, read-only) must not stop the agent, so write errors switch the
log off and are reported once through `error`.
"""

from __future__ import annotations

import json
from pathlib import Path

from hello_tui.core.events import Event


class TranscriptLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: str | None = None

    def write(self, event: Event) -> None:
        if self.error is not None:
            return
        line = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line + "\n")
        except OSError as exc:
            self.error = f"transcript log disabled: {exc}"

    def read(self) -> list[dict]:
        if not self.path.is_file():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
        return out
