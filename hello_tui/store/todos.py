"""The todo board's store: `TodoStore`, one JSON file per session under `.helloagents/todos/`.

Owns the todo rules: ids are small integers as strings, statuses are
pending / in_progress / completed, and at most one item is in progress at a
time. The list belongs to a session (`todos/<session id>.json`): the `todo`
tool and the UI's board read the same file, and a new session starts with an
empty board. The board is told of changes through `TodoChanged` events.
The methods block (a file lock, file I/O): async callers run them on a thread.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from hello_tui.core.file_lock import FileLock
from hello_tui.store.atomic import write_text_atomic

TodoStatus = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[str, ...] = ("pending", "in_progress", "completed")
TODOS_FILE = "todos.json"  # the list used outside any session
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class TodoError(ValueError):
    """A todo change was refused; the message says why and what to do instead."""


@dataclass
class TodoItem:
    id: str
    title: str
    desc: str
    status: str
    created_at: str
    updated_at: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def _now() -> str:
    return datetime.now().isoformat(timespec="seconds")


class TodoStore:
    """Todos of one repository, in `<todos_dir>/todos.json`, written atomically."""

    def __init__(self, todos_dir: Path, session_id: str = "") -> None:
        self.todos_dir = Path(todos_dir)
        if session_id and not _SESSION_ID.fullmatch(session_id):
            raise TodoError(f"{session_id!r} is not a session id.")
        name = f"{session_id}.json" if session_id else TODOS_FILE
        self.path = self.todos_dir / name
        self._lock = FileLock(str(self.todos_dir / f".{name}.lock"), timeout=10)

    # ---- file --------------------------------------------------------------

    def load(self) -> list[TodoItem]:
        """All items in id order; a missing file is an empty board, a corrupt one an error."""
        if not self.path.is_file():
            return []
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            rows = raw["items"] if isinstance(raw, dict) else raw
            items = [
                TodoItem(
                    id=str(r["id"]),
                    title=str(r["title"]),
                    desc=str(r.get("desc", "")),
                    status=str(r["status"]),
                    created_at=str(r.get("created_at", "")),
                    updated_at=str(r.get("updated_at", r.get("created_at", ""))),
                )
                for r in rows
            ]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise TodoError(
                f"The todo file {self.path.name} is unreadable ({type(exc).__name__}). "
                "Use todo action 'clear' to start a new list; the old file is kept aside."
            ) from None
        for item in items:
            if item.status not in STATUSES:
                item.status = "pending"
        return sorted(items, key=lambda i: (int(i.id) if i.id.isdigit() else 10**9, i.id))

    def save(self, items: list[TodoItem]) -> None:
        payload = json.dumps(
            {"version": 1, "items": [i.to_dict() for i in items]}, ensure_ascii=False, indent=2
        )
        write_text_atomic(self.path, payload)

    # ---- rules -------------------------------------------------------------

    @staticmethod
    def _find(items: list[TodoItem], todo_id: str) -> TodoItem:
        for item in items:
            if item.id == todo_id:
                return item
        existing = ", ".join(i.id for i in items) or "none (the list is empty)"
        raise TodoError(f"No todo with id {todo_id!r}. Existing ids: {existing}.")

    @staticmethod
    def _check_single_in_progress(items: list[TodoItem], wanting: str | None) -> None:
        current = next((i for i in items if i.status == "in_progress" and i.id != wanting), None)
        if current is not None:
            raise TodoError(
                f"Only one todo can be in_progress; [{current.id}] {current.title!r} already is. "
                f"Mark it completed (or pending) first."
            )

    @staticmethod
    def _check_status(status: str) -> None:
        if status not in STATUSES:
            raise TodoError(f"Unknown status {status!r}. Use one of: {', '.join(STATUSES)}.")

    def add(self, title: str, desc: str = "", status: str = "pending") -> TodoItem:
        if not title.strip():
            raise TodoError("A todo needs a non-empty title.")
        self._check_status(status)
        self.todos_dir.mkdir(parents=True, exist_ok=True)
        with self._lock:
            items = self.load()
            if status == "in_progress":
                self._check_single_in_progress(items, None)
            next_id = max((int(i.id) for i in items if i.id.isdigit()), default=0) + 1
            now = _now()
            item = TodoItem(str(next_id), title.strip(), desc, status, now, now)
            items.append(item)
            self.save(items)
        return item

    def update(
        self,
        todo_id: str,
        *,
        title: str | None = None,
        desc: str | None = None,
        status: str | None = None,
    ) -> TodoItem:
        if status is not None:
            self._check_status(status)
        if title is not None and not title.strip():
            raise TodoError("A todo needs a non-empty title.")
        self.todos_dir.mkdir(parents=True, exist_ok=True)
        with self._lock:
            items = self.load()
            item = self._find(items, todo_id)
            if status == "in_progress":
                self._check_single_in_progress(items, item.id)
            if title is not None:
                item.title = title.strip()
            if desc is not None:
                item.desc = desc
            if status is not None:
                item.status = status
            item.updated_at = _now()
            self.save(items)
        return item

    def delete(self, todo_id: str) -> TodoItem:
        self.todos_dir.mkdir(parents=True, exist_ok=True)
        with self._lock:
            items = self.load()
            item = self._find(items, todo_id)
            self.save([i for i in items if i.id != item.id])
        return item

    def clear(self) -> int:
        """Remove every item; an unreadable file is moved aside rather than lost."""
        self.todos_dir.mkdir(parents=True, exist_ok=True)
        with self._lock:
            try:
                count = len(self.load())
            except TodoError:
                stamp = datetime.now().strftime("%Y%m%d_%H%M%S_%f")
                os.replace(self.path, self.path.with_name(f"{self.path.stem}.corrupt-{stamp}.json"))
                count = 0
            self.save([])
        return count


def render_board(items: list[TodoItem]) -> str:
    """Plain text for the model, grouped by status; no colour codes."""
    if not items:
        return "No todos."
    order = ("in_progress", "pending", "completed")
    groups = {s: [i for i in items if i.status == s] for s in order}
    counts = ", ".join(f"{len(v)} {k.replace('_', ' ')}" for k, v in groups.items())
    lines = [f"Todos ({counts}):"]
    for status, members in groups.items():
        if not members:
            continue
        lines.append(status.upper())
        for item in members:
            desc = " — " + " ".join(item.desc.split()) if item.desc.strip() else ""
            lines.append(f"  [{item.id}] {item.title}{desc}")
    return "\n".join(lines)
