"""Sessions on disk: the conversation for display, the model history, usage; resumable.

One JSON file per session in `.helloagents/sessions/<id>.json`, written
atomically (temp file + os.replace) after every turn and on cancel, so a
crash or Ctrl-C never leaves half a file. A file that cannot be read is moved
aside (`<id>.json.corrupt-<timestamp>`), never deleted, and reported with
`SessionCorrupt` so the caller can start a new session.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hello_tui.config import StatePaths
from hello_tui.store.atomic import write_text_atomic

HISTORY_LIMIT = 50
DISPLAY_LIMIT = 2000
FORMAT_VERSION = 1


class SessionError(Exception):
    """A session could not be loaded; the message says what to do."""


class SessionCorrupt(SessionError):
    def __init__(self, path: Path, moved_to: Path | None, reason: str) -> None:
        self.path = path
        self.moved_to = moved_to
        where = f"; it was kept as {moved_to.name}" if moved_to else ""
        super().__init__(
            f"Session file {path.name} is unreadable ({reason}){where}. Starting a new session."
        )


class SessionNotFound(SessionError):
    pass


@dataclass
class UsageTotals:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def add(self, prompt: int, completion: int, cost: float | None) -> None:
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_session_id() -> str:
    return datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def trim_history(history: list[dict[str, Any]], limit: int = HISTORY_LIMIT) -> list[dict[str, Any]]:
    """The last `limit` messages, never starting with a tool result cut from its call."""
    if len(history) <= limit:
        return history
    start = len(history) - limit
    while start < len(history) and history[start].get("role") == "tool":
        start += 1
    return history[start:]


@dataclass
class Session:
    id: str
    path: Path
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    turns: int = 0
    display: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    usage: UsageTotals = field(default_factory=UsageTotals)
    todos: list[dict[str, Any]] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    protocol: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "session_id": self.id,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "turns": self.turns,
            "protocol": self.protocol,
            "usage": asdict(self.usage),
            "todos": self.todos,
            "evidence": self.evidence,
            "display": self.display,
            "history": self.history,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: Path) -> Session:
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        history = data.get("history")
        display = data.get("display", [])
        if not isinstance(history, list) or not all(isinstance(m, dict) for m in history):
            raise TypeError("'history' is not a list of messages")
        if not isinstance(display, list):
            raise TypeError("'display' is not a list")
        usage = data.get("usage") or {}
        return cls(
            id=str(data.get("session_id") or path.stem),
            path=path,
            created_at=str(data.get("created_at") or _now()),
            updated_at=str(data.get("updated_at") or _now()),
            turns=int(data.get("turns") or 0),
            display=display,
            history=history,
            usage=UsageTotals(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
                cost=usage.get("cost"),
            ),
            todos=list(data.get("todos") or []),
            evidence=[str(e) for e in data.get("evidence") or []],
            protocol=data.get("protocol"),
        )

    def save(self) -> None:
        self.updated_at = _now()
        self.history = trim_history(self.history)
        if len(self.display) > DISPLAY_LIMIT:
            self.display = self.display[-DISPLAY_LIMIT:]
        payload = json.dumps(self.to_dict(), ensure_ascii=False, indent=1, default=str)
        write_text_atomic(self.path, payload)


class SessionStore:
    """Creates, lists and loads the sessions of one repository's state folder."""

    def __init__(self, state: StatePaths) -> None:
        self.dir = state.sessions

    def _path(self, session_id: str) -> Path:
        return self.dir / f"{session_id}.json"

    def new(self) -> Session:
        sid = new_session_id()
        while self._path(sid).exists():
            sid = new_session_id()
        return Session(id=sid, path=self._path(sid))

    def list(self) -> list[Path]:
        """Session files, most recently written last."""
        if not self.dir.is_dir():
            return []
        files = [p for p in self.dir.glob("*.json") if p.is_file()]
        return sorted(files, key=lambda p: (p.stat().st_mtime_ns, p.name))

    def _set_aside(self, path: Path) -> Path | None:
        target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d%H%M%S')}")
        try:
            os.replace(path, target)
        except OSError:
            return None
        return target

    def load(self, session_id: str) -> Session:
        if not session_id or "/" in session_id or "\\" in session_id or session_id.startswith("."):
            raise SessionNotFound(f"'{session_id}' is not a session id.")
        path = self._path(session_id)
        if not path.is_file():
            known = ", ".join(p.stem for p in self.list()[-5:]) or "none yet"
            raise SessionNotFound(
                f"No session '{session_id}' in {self.dir}. Recent sessions: {known}."
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Session.from_dict(data, path)
        except (ValueError, TypeError, AttributeError, UnicodeDecodeError) as exc:
            raise SessionCorrupt(path, self._set_aside(path), str(exc)) from None

    def latest(self) -> Session | None:
        files = self.list()
        if not files:
            return None
        return self.load(files[-1].stem)
