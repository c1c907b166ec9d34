"""The values the engine facade hands out, re-exported so a UI imports them from here only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from hello_tui.agent.compaction import CompactResult
from hello_tui.core.display import ChatMessage, DisplayEntry, ToolStep
from hello_tui.llm import PreflightResult
from hello_tui.patch.history import BackupInfo, HistoryEntry, UndoRefused
from hello_tui.patch.selection import replan_with_edits
from hello_tui.patch.types import CommitResult, FilePlan, Hunk, PatchError, PatchPlan, Selection
from hello_tui.store.notes import Note, NoteError
from hello_tui.store.sessions import SessionError, SessionInfo, SessionNotFound, UsageTotals

# ask: every patch and command is reviewed; auto-edit: patches apply without review;
# read-only: nothing may be written. The facade stores the mode; the tools act on it.
Mode = Literal["ask", "auto-edit", "read-only"]
MODES: tuple[str, ...] = get_args(Mode)


@dataclass(frozen=True)
class Reverted:
    """An undo or restore: what the patch engine did, and the line the chat shows for it."""

    result: CommitResult
    text: str


@dataclass(frozen=True)
class BackupComparison:
    """A backup's copy of a file next to the file as it is now ('' when it is gone)."""

    backup: str
    relpath: str
    old: str | None  # None: the backup holds no copy of this file
    current: str


__all__ = [
    "MODES",
    "BackupComparison",
    "BackupInfo",
    "ChatMessage",
    "CommitResult",
    "CompactResult",
    "DisplayEntry",
    "FilePlan",
    "HistoryEntry",
    "Hunk",
    "Mode",
    "Note",
    "NoteError",
    "PatchError",
    "PatchPlan",
    "PreflightResult",
    "Reverted",
    "Selection",
    "SessionError",
    "SessionInfo",
    "SessionNotFound",
    "ToolStep",
    "UndoRefused",
    "UsageTotals",
    "replan_with_edits",
]
