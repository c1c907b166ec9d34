"""`hello-tui apply` and `hello-tui undo`: the patch engine from the command line.

Exit codes of apply: 0 applied (or a clean dry run), 1 refused or failed with
nothing changed, 2 usage error, 3 high-risk without --yes (nothing changed).
Nothing here imports textual or openai, so the commands start fast.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from hello_tui.config import ConfigError, load_settings
from hello_tui.patch.commit import commit_plan, note_failure, plan_file_lines
from hello_tui.patch.history import undo_last
from hello_tui.patch.planner import plan_patch_text
from hello_tui.patch.types import CommitResult, PatchError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NEEDS_CONFIRMATION = 0, 1, 2, 3


def _emit(as_json: bool, payload: dict[str, Any], text: str, *, error: bool = False) -> None:
    if as_json:
        print(json.dumps(payload, ensure_ascii=False, indent=1))
    elif text:
        print(text, file=sys.stderr if error else sys.stdout)


def _result_payload(result: CommitResult) -> dict[str, Any]:
    return {
        "added": result.added,
        "updated": result.updated,
        "moved": [list(pair) for pair in result.moved],
        "deleted": result.deleted,
        "hunks_applied": result.hunks_applied,
        "hunks_declined": result.hunks_declined,
        "backup_dir": result.backup_dir,
        "note_id": result.note_id,
        "files": result.summary_lines(),
    }


def _read_patch(source: str) -> str:
    if source == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="surrogateescape")
    with open(source, "rb") as fh:
        return fh.read().decode("utf-8", errors="surrogateescape")


def run_apply(args) -> int:
    as_json = bool(getattr(args, "json", False))
    try:
        settings = load_settings(args.repo)
    except ConfigError as exc:
        _emit(as_json, {"status": "usage_error", "error": str(exc)}, f"error: {exc}", error=True)
        return EXIT_USAGE
    try:
        text = _read_patch(args.patch)
    except OSError as exc:
        msg = f"cannot read the patch {args.patch}: {exc.strerror or exc}"
        _emit(as_json, {"status": "usage_error", "error": msg}, f"error: {msg}", error=True)
        return EXIT_USAGE
    try:
        plan = plan_patch_text(text, settings, limits=False)
    except PatchError as exc:
        if not args.dry_run:
            note_failure(settings, str(exc), text, f"hello-tui apply {args.patch}")
        _emit(as_json, {"status": "refused", "error": str(exc)}, f"error: {exc}", error=True)
        return EXIT_FAILED
    files = plan_file_lines(plan)
    risk = {"high": plan.risk.high, "reasons": plan.risk.reasons}
    if plan.risk.high and not args.yes:
        msg = (
            "High-risk patch, nothing changed: "
            + "; ".join(plan.risk.reasons)
            + ". Re-run with --yes to apply it."
        )
        _emit(
            as_json,
            {"status": "needs_confirmation", "files": files, "risk": risk, "error": msg},
            "\n".join(files) + "\n" + msg,
            error=True,
        )
        return EXIT_NEEDS_CONFIRMATION
    if args.dry_run:
        _emit(
            as_json,
            {"status": "dry_run", "files": files, "risk": risk},
            "\n".join(files) + "\n(dry run: nothing written)",
        )
        return EXIT_OK
    try:
        result = commit_plan(plan, settings, user_task=f"hello-tui apply {args.patch}")
    except PatchError as exc:
        _emit(as_json, {"status": "failed", "error": str(exc)}, f"error: {exc}", error=True)
        return EXIT_FAILED
    _emit(
        as_json,
        {"status": "applied", "risk": risk, **_result_payload(result)},
        "\n".join(result.summary_lines()) + f"\nbackup: {result.backup_dir}",
    )
    return EXIT_OK


def run_undo(args) -> int:
    as_json = bool(getattr(args, "json", False))
    try:
        settings = load_settings(args.repo)
    except ConfigError as exc:
        _emit(as_json, {"status": "usage_error", "error": str(exc)}, f"error: {exc}", error=True)
        return EXIT_USAGE
    try:
        result = undo_last(settings)
    except PatchError as exc:
        _emit(as_json, {"status": "failed", "error": str(exc)}, f"error: {exc}", error=True)
        return EXIT_FAILED
    _emit(
        as_json,
        {"status": "undone", **_result_payload(result)},
        "\n".join(result.summary_lines()) + f"\nbackup of the undone state: {result.backup_dir}",
    )
    return EXIT_OK
