"""The values the engine facade hands out, re-exported so a UI imports them from here only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hello_tui.agent.compaction import CompactResult
from hello_tui.core.display import ChatMessage, DisplayEntry, ToolStep
from hello_tui.core.markdown_fence import fence
from hello_tui.core.modes import MODES, Mode, next_mode, parse_mode
from hello_tui.llm import PreflightResult
from hello_tui.llm.local_servers import LocalServer
from hello_tui.mcp import McpServerConfig, McpServerState, McpToolInfo
from hello_tui.mcp.report import render as render_mcp_servers
from hello_tui.patch.diff_summary import DiffSummary, FileSummary, diff_summary, note_patch_summary
from hello_tui.patch.history import BackupInfo, HistoryEntry, UndoRefused
from hello_tui.patch.line_diff import line_ops
from hello_tui.patch.types import CommitResult, FilePlan, Hunk, PatchError, PatchPlan, Selection
from hello_tui.patch.written_diff import text_hunks
from hello_tui.store.notes import Note, NoteError
from hello_tui.store.sessions import SessionError, SessionInfo, SessionNotFound, UsageTotals


@dataclass(frozen=True)
class ModelChoice:
    name: str
    group: str  # "in use", "recent", "endpoint", "default", or another provider's name
    usable: bool = True  # False: another provider's model (its endpoint and key are not set)


@dataclass(frozen=True)
class ModelChoices:
    """What `/model` offers; `endpoint_error` says why the endpoint's list is missing."""

    choices: list[ModelChoice]
    endpoint_error: str = ""


@dataclass(frozen=True)
class Attachment:
    """A file mentioned with `@path`, as it goes with the message (cut to a budget)."""

    path: str
    text: str
    cut: bool


def with_attachments(text: str, attachments: Sequence[Attachment]) -> str:
    """The message the model reads: the user's words, then each attached file."""
    parts = [text]
    for item in attachments:
        note = " (cut: only the beginning is shown; read the file for the rest)" if item.cut else ""
        parts.append(f"Attached file `{item.path}`{note}:\n" + fence(item.text, ""))
    return "\n\n".join(parts)


@dataclass(frozen=True)
class UserCommand:
    """A `!cmd` the user ran: its status (success, error, …) and the text the model reads."""

    command: str
    status: str
    text: str
    declined: bool  # refused by the policy or declined by the user: nothing ran


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
    "Attachment",
    "BackupComparison",
    "BackupInfo",
    "ChatMessage",
    "CommitResult",
    "CompactResult",
    "DiffSummary",
    "DisplayEntry",
    "FilePlan",
    "FileSummary",
    "HistoryEntry",
    "Hunk",
    "LocalServer",
    "McpServerConfig",
    "McpServerState",
    "McpToolInfo",
    "Mode",
    "ModelChoice",
    "ModelChoices",
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
    "UserCommand",
    "diff_summary",
    "line_ops",
    "next_mode",
    "note_patch_summary",
    "parse_mode",
    "render_mcp_servers",
    "text_hunks",
    "with_attachments",
]
