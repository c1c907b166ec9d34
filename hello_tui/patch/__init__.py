"""The patch engine: the one door through which hello-tui writes to the repository.

extract -> parse (Codex grammar superset, unified diffs) -> plan (dry run,
every check) -> review (select hunks, user edits) -> commit (journal,
backups, atomic writes, all or nothing) -> result and note. Undo and restore
use the backups; `redo_last` steps forward again, `history` lists the patches, and
`recover` completes or rolls back a transaction a crash interrupted.
"""

from hello_tui.patch.commit import commit_plan
from hello_tui.patch.extract import contains_patch, extract_patches
from hello_tui.patch.history import (
    BackupInfo,
    HistoryEntry,
    UndoRefused,
    UndoResult,
    history,
    list_backups,
    read_backup,
    redo_last,
    restore_from_backup,
    undo_last,
)
from hello_tui.patch.planner import plan_file_change, plan_patch_text
from hello_tui.patch.recovery import RecoveryBlocked, RecoveryReport
from hello_tui.patch.render import codex_patch_text, render_plan_diff, unified_diff_text
from hello_tui.patch.selection import replan_with_edits, select
from hello_tui.patch.transaction import recover
from hello_tui.patch.types import (
    CommitResult,
    FilePlan,
    Hunk,
    PatchError,
    PatchPlan,
    Risk,
    Selection,
)

__all__ = [
    "BackupInfo",
    "CommitResult",
    "FilePlan",
    "HistoryEntry",
    "Hunk",
    "PatchError",
    "PatchPlan",
    "RecoveryBlocked",
    "RecoveryReport",
    "Risk",
    "Selection",
    "UndoRefused",
    "UndoResult",
    "codex_patch_text",
    "commit_plan",
    "contains_patch",
    "extract_patches",
    "history",
    "list_backups",
    "plan_file_change",
    "plan_patch_text",
    "read_backup",
    "recover",
    "redo_last",
    "render_plan_diff",
    "replan_with_edits",
    "restore_from_backup",
    "select",
    "undo_last",
    "unified_diff_text",
]
