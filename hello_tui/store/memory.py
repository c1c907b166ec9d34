"""Episodic memory's store: `MemoryStore` (SQLite + FTS5 trigram search).

Owns `.helloagents/memory/memory.db`. The trigram tokenizer makes full-text
search work for text without spaces (Chinese); queries shorter than three
characters, and SQLite builds without trigram support, fall back to LIKE.
Nothing is written except on an explicit `add` (or `forget`): searching an
empty memory does not even create the database.
"""

from __future__ import annotations

import builtins
import functools
import sqlite3
from contextlib import closing
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

DB_NAME = "memory.db"
TRIGRAM_MIN_VERSION = (3, 34, 0)
MAX_CONTENT_CHARS = 20_000

SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    content TEXT NOT NULL,
    importance REAL NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
    created_at TEXT NOT NULL
);
"""
FTS_SCHEMA = """
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    content, content='memories', content_rowid='id', tokenize='trigram'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
"""


class MemoryStoreError(ValueError):
    """A memory operation was refused; the message says why."""


@dataclass
class Memory:
    id: int
    content: str
    importance: float
    created_at: str
    score: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@functools.cache
def trigram_supported() -> bool:
    """True when this SQLite has FTS5 with the trigram tokenizer (3.34+)."""
    if sqlite3.sqlite_version_info < TRIGRAM_MIN_VERSION:
        return False
    try:
        with closing(sqlite3.connect(":memory:")) as conn:
            conn.execute("CREATE VIRTUAL TABLE probe USING fts5(x, tokenize='trigram')")
        return True
    except sqlite3.OperationalError:
        return False


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _fts_phrase(term: str) -> str:
    # A quoted FTS5 string is literal: operators and punctuation lose their meaning.
    return '"' + term.replace('"', '""') + '"'


class MemoryStore:
    """Memories of one repository. `fts=False` forces the LIKE fallback (and tests it)."""

    def __init__(self, memory_dir: Path, *, fts: bool | None = None) -> None:
        self.memory_dir = Path(memory_dir)
        self.db_path = self.memory_dir / DB_NAME
        self.uses_fts = trigram_supported() if fts is None else (fts and trigram_supported())

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.db_path, timeout=10)
        conn.row_factory = sqlite3.Row
        conn.executescript(SCHEMA)
        if self.uses_fts:
            has_fts = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'memories_fts'"
            ).fetchone()
            conn.executescript(FTS_SCHEMA)
            if not has_fts:
                # Rows added by a build without trigram support get indexed now.
                conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")
            conn.commit()
        return conn

    @staticmethod
    def _row(row: sqlite3.Row, score: float | None = None) -> Memory:
        return Memory(
            id=int(row["id"]),
            content=row["content"],
            importance=float(row["importance"]),
            created_at=row["created_at"],
            score=score,
        )

    def add(self, content: str, importance: float = 0.5) -> Memory:
        text = content.strip()
        if not text:
            raise MemoryStoreError("A memory needs non-empty content.")
        if len(text) > MAX_CONTENT_CHARS:
            raise MemoryStoreError(
                f"A memory holds at most {MAX_CONTENT_CHARS} characters; this one has "
                f"{len(text)}. Store a summary instead."
            )
        if not 0.0 <= importance <= 1.0:
            raise MemoryStoreError(f"importance must be between 0 and 1, not {importance}.")
        self.memory_dir.mkdir(parents=True, exist_ok=True)
        now = datetime.now().isoformat(timespec="seconds")
        with closing(self._connect()) as conn, conn:
            cur = conn.execute(
                "INSERT INTO memories (content, importance, created_at) VALUES (?, ?, ?)",
                (text, importance, now),
            )
            assert cur.lastrowid is not None  # set by every INSERT
            return Memory(cur.lastrowid, text, importance, now)

    def list(self, limit: int = 20) -> builtins.list[Memory]:
        """Newest first."""
        if not self.db_path.is_file():
            return []
        with closing(self._connect()) as conn:
            rows = conn.execute(
                "SELECT * FROM memories ORDER BY id DESC LIMIT ?", (max(limit, 0),)
            ).fetchall()
        return [self._row(r) for r in rows]

    def search(self, query: str, limit: int = 10) -> builtins.list[Memory]:
        """Best matches first: text relevance weighted by importance."""
        needle = query.strip()
        if not needle or not self.db_path.is_file():
            return []
        terms = [t for t in needle.split() if len(t) >= 3]
        with closing(self._connect()) as conn:
            if self.uses_fts and terms:
                match = " OR ".join(_fts_phrase(t) for t in terms)
                rows = conn.execute(
                    "SELECT m.*, bm25(memories_fts) AS rank FROM memories_fts "
                    "JOIN memories m ON m.id = memories_fts.rowid "
                    "WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?",
                    (match, max(limit, 0) * 4),
                ).fetchall()
                # bm25 is lower-is-better and negative; importance scales it.
                found = [self._row(r, -float(r["rank"]) * (0.5 + r["importance"])) for r in rows]
            else:
                words = needle.split() or [needle]
                clause = " OR ".join("content LIKE ? ESCAPE '\\'" for _ in words)
                rows = conn.execute(
                    f"SELECT * FROM memories WHERE {clause}",
                    [_like_pattern(w) for w in words],
                ).fetchall()
                found = []
                for r in rows:
                    low = r["content"].lower()
                    hits = sum(low.count(w.lower()) for w in words)
                    found.append(self._row(r, hits * (0.5 + r["importance"])))
        found.sort(key=lambda m: (m.score or 0.0, m.id), reverse=True)
        return found[: max(limit, 0)]

    def forget(self, memory_id: int) -> Memory:
        if not self.db_path.is_file():
            raise MemoryStoreError(f"No memory with id {memory_id}: the memory is empty.")
        with closing(self._connect()) as conn, conn:
            row = conn.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if row is None:
                raise MemoryStoreError(
                    f"No memory with id {memory_id}. Use memory action 'list' to see ids."
                )
            conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
            return self._row(row)
