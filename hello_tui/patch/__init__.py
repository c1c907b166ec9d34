"""The patch engine: the one door through which hello-tui writes to the repository.

extract -> parse (Codex grammar superset, unified diffs) -> plan (dry run,
every check) -> review (select hunks, user edits) -> commit (journal,
backups, atomic writes, all or nothing) -> result and note. Undo and restore
use the backups; `redo_last` steps forward again, `history.history` lists the
patches, and `recover` completes or rolls back a transaction a crash interrupted.

The names below are loaded on first use (PEP 562): `hello-tui apply` imports
the planner and the transaction but neither the review's renderer nor the undo
history, and `undo` or `history` never load the parsers and the planner. The
function `history` is not among them: it shares its name with its module, which
any import of `hello_tui.patch.history` binds here, so it is imported from there.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command

_HOMES = {
    "commit_plan": "commit",
    "contains_patch": "extract",
    "extract_patches": "extract",
    "BackupInfo": "history",
    "HistoryEntry": "history",
    "UndoRefused": "history",
    "UndoResult": "history",
    "list_backups": "history",
    "read_backup": "history",
    "redo_last": "history",
    "restore_from_backup": "history",
    "undo_last": "history",
    "plan_file_change": "planner",
    "plan_patch_text": "planner",
    "RecoveryBlocked": "recovery",
    "RecoveryReport": "recovery",
    "codex_patch_text": "codex_writer",
    "replan_with_edits": "selection",
    "select": "selection",
    "recover": "transaction",
    "CommitResult": "types",
    "FilePlan": "types",
    "Hunk": "types",
    "PatchError": "types",
    "PatchPlan": "types",
    "Risk": "types",
    "Selection": "types",
}

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
    "list_backups",
    "plan_file_change",
    "plan_patch_text",
    "read_backup",
    "recover",
    "redo_last",
    "replan_with_edits",
    "restore_from_backup",
    "select",
    "undo_last",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from typing import Any

    from hello_tui.patch.codex_writer import codex_patch_text
    from hello_tui.patch.commit import commit_plan
    from hello_tui.patch.extract import contains_patch, extract_patches
    from hello_tui.patch.history import (
        BackupInfo,
        HistoryEntry,
        UndoRefused,
        UndoResult,
        list_backups,
        read_backup,
        redo_last,
        restore_from_backup,
        undo_last,
    )
    from hello_tui.patch.planner import plan_file_change, plan_patch_text
    from hello_tui.patch.recovery import RecoveryBlocked, RecoveryReport
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
