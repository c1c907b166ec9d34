"""Sessions on disk: the display record, the model history, usage; resumable and listable.

One JSON file per session in `.helloagents/sessions/<id>.json`, written
atomically (temp file + os.replace) after every turn and on cancel, so a
crash or Ctrl-C never leaves half a file. A file that cannot be read is moved
aside (`<id>.json.corrupt-<timestamp>`), never deleted, and reported with
`SessionCorrupt` so the caller can start a new session.

The display record is typed (`core.display`); older files with untyped
`{role, content}` entries still load. The small fields (id, title, dates,
turns, model) come first in the file, so the session list reads only the
head of each file. Saving takes a snapshot on the caller's thread and writes
it on another (`save_async`), so the event loop never waits for the disk.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import os
import re
import secrets
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hello_tui.config import StatePaths
from hello_tui.core.display import ChatMessage, DisplayEntry, entries_from_dicts, entry_to_dict
from hello_tui.store.atomic import write_text_atomic
from hello_tui.store.history import HISTORY_LIMIT, repair_history, trim_history

__all__ = ["HISTORY_LIMIT", "Session", "SessionStore", "open_session", "trim_history"]

DISPLAY_LIMIT = 2000
FORMAT_VERSION = 2
TITLE_CHARS = 120
# The session list reads at most this much of each file: the head fields come first.
HEADER_BYTES = 8192
_HEADER_LINE = re.compile(
    r'^ "(session_id|title|model|turns|created_at|updated_at)": (.*?),?$', re.MULTILINE
)


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
        }


@dataclass(frozen=True)
class SessionInfo:
    """One line of the session list: what a picker shows."""

    id: str
    title: str  # the first prompt
    created_at: str
    updated_at: str
    turns: int
    model: str


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_session_id() -> str:
    return datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


@dataclass
class Session:
    id: str
    path: Path
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    turns: int = 0
    display: list[DisplayEntry] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    usage: UsageTotals = field(default_factory=UsageTotals)
    evidence: list[str] = field(default_factory=list)
    protocol: str | None = None
    model: str = ""
    mode: str = "ask"

    @property
    def title(self) -> str:
        """The first prompt of the session, on one line."""
        for entry in self.display:
            if isinstance(entry, ChatMessage) and entry.role == "user":
                line = " ".join(entry.text.split())
                return line[: TITLE_CHARS - 1] + "…" if len(line) > TITLE_CHARS else line
        return ""

    def info(self) -> SessionInfo:
        return SessionInfo(
            self.id, self.title, self.created_at, self.updated_at, self.turns, self.model
        )

    def to_dict(self) -> dict[str, Any]:
        return _payload(self._fields())

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
            display=entries_from_dicts(display),
            # Whatever an interrupted write or an older version left, replay a valid history.
            history=repair_history(history)[0],
            usage=UsageTotals(
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                completion_tokens=int(usage.get("completion_tokens", 0)),
                cost=usage.get("cost"),
            ),
            evidence=[str(e) for e in data.get("evidence") or []],
            protocol=data.get("protocol"),
            model=str(data.get("model") or ""),
            mode=str(data.get("mode") or "ask"),
        )

    def _snapshot(self) -> dict[str, Any]:
        """Trim, stamp, and take the fields to save (cheap, and safe to write on a thread)."""
        self.updated_at = _now()
        self.history = trim_history(self.history)
        if len(self.display) > DISPLAY_LIMIT:
            self.display = self.display[-DISPLAY_LIMIT:]
        return self._fields()

    def _fields(self) -> dict[str, Any]:
        # The lists are copied; their items are never changed once recorded.
        return {
            "version": FORMAT_VERSION,
            "session_id": self.id,
            "title": self.title,
            "model": self.model,
            "turns": self.turns,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "protocol": self.protocol,
            "mode": self.mode,
            "usage": self.usage.to_dict(),
            "evidence": list(self.evidence),
            "display": list(self.display),
            "history": list(self.history),
        }

    def save(self) -> None:
        _write(self.path, self._snapshot())

    async def save_async(self) -> None:
        """Save without blocking the event loop: snapshot here, write on a thread."""
        snapshot = self._snapshot()
        await asyncio.to_thread(_write, self.path, snapshot)


def _payload(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {**snapshot, "display": [entry_to_dict(e) for e in snapshot["display"]]}


def _write(path: Path, snapshot: dict[str, Any]) -> None:
    text = json.dumps(_payload(snapshot), ensure_ascii=False, indent=1, default=str)
    write_text_atomic(path, text)


def read_info(path: Path) -> SessionInfo | None:
    """The list fields of one session file from its head (the whole file only if need be)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(HEADER_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    fields: dict[str, Any] = {}
    for match in _HEADER_LINE.finditer(head):
        try:
            fields[match.group(1)] = json.loads(match.group(2))
        except ValueError:
            continue
    if "title" not in fields:  # an older file: its first prompt is further down
        try:
            return Session.from_dict(json.loads(path.read_text(encoding="utf-8")), path).info()
        except (OSError, ValueError, TypeError, AttributeError):
            return None
    return SessionInfo(
        id=str(fields.get("session_id") or path.stem),
        title=str(fields.get("title") or ""),
        created_at=str(fields.get("created_at") or ""),
        updated_at=str(fields.get("updated_at") or ""),
        turns=int(fields.get("turns") or 0),
        model=str(fields.get("model") or ""),
    )


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

    def list(self) -> builtins.list[Path]:
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

    def infos(self, limit: int = 50) -> builtins.list[SessionInfo]:
        """The newest `limit` sessions, newest first (unreadable files are left out)."""
        found = []
        for path in reversed(self.list()):
            info = read_info(path)
            if info is not None:
                found.append(info)
            if len(found) >= limit:
                break
        return found


def open_session(
    state: StatePaths, *, resume: str | None = None, continue_latest: bool = False
) -> tuple[Session, list[str]]:
    """The session to work in, and notices for the user (a corrupt file set aside).

    Raises SessionNotFound when `resume` names no session: that is the user's
    typo, not something to paper over with a new session.
    """
    store = SessionStore(state)
    notices: list[str] = []
    try:
        if resume:
            return store.load(resume), notices
        if continue_latest:
            latest = store.latest()
            if latest is not None:
                return latest, notices
            notices.append("No earlier session to continue; starting a new one.")
    except SessionCorrupt as exc:
        notices.append(str(exc))
    return store.new(), notices
