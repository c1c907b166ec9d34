"""`hello-tui apply`, `undo`, `redo`, `history` and `recover`: the patch engine from the command line.

Exit codes: 0 done (or a clean dry run), 1 refused or failed with nothing
changed, 2 usage error, 3 needs confirmation with nothing changed (apply: a
high-risk patch without --yes; undo / redo: files changed since, without --force).
Every command that touches the repository's state first completes or rolls back
an interrupted transaction, under the write lock. Nothing here imports textual
or openai, and each command imports the part of the engine it uses when it runs
(`apply` never loads the undo history, `history` never loads the planner).
"""

from __future__ import annotations

import json
import sys

from hello_tui.config import ConfigError, Settings, load_settings
from hello_tui.patch.types import CommitResult, PatchError

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command

if TYPE_CHECKING:
    from typing import Any

    from hello_tui.patch.history import HistoryEntry
    from hello_tui.patch.recovery import RecoveryReport

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NEEDS_CONFIRMATION = 0, 1, 2, 3


def _emit(as_json: bool, payload: dict[str, Any], text: str, *, error: bool = False) -> None:
    if as_json:
        print(json.dumps(payload, ensure_ascii=False, indent=1))
    elif text:
        print(text, file=sys.stderr if error else sys.stdout)


def _emit_done(as_json: bool, payload: dict[str, Any], text: str) -> None:
    """Say what a command changed. The tree is changed already, so the exit status must
    stay "done" even when the output cannot be written (stdout on a full disk, a closed
    pipe): a warning goes to stderr if it can, and nothing is left buffered to fail again
    at exit (which would make the interpreter exit with status 120)."""
    try:
        _emit(as_json, payload, text)
        sys.stdout.flush()
    except OSError as exc:
        sys.stdout = None  # type: ignore[assignment]  # print() then writes nowhere
        try:
            print(
                f"warning: done, but its report could not be written ({exc.strerror or exc})",
                file=sys.stderr,
            )
            sys.stderr.flush()
        except OSError:
            sys.stderr = None  # type: ignore[assignment]


def _fail(as_json: bool, status: str, message: str, **extra: Any) -> None:
    _emit(as_json, {"status": status, "error": message, **extra}, f"error: {message}", error=True)


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


def _settings(args, as_json: bool) -> Settings | None:
    try:
        return load_settings(args.repo)
    except ConfigError as exc:
        _fail(as_json, "usage_error", str(exc))
        return None


def recover_first(settings: Settings) -> tuple[list[str], str | None]:
    """Complete or roll back an interrupted transaction: (what was done, why it is blocked)."""
    from hello_tui.patch.transaction import recover

    try:
        return recover(settings), None
    except PatchError as exc:
        return done_before_block(exc), str(exc)


def done_before_block(exc: PatchError) -> list[str]:
    """What recovery did before it stopped at a record it cannot verify.

    It resolves every folder it can before it stops (an interrupted patch beside a record
    that lost its marker is rolled back): the command fails with nothing of its own
    done, and says what recovery changed, so that "failed" never hides a change.
    """
    report = getattr(exc, "report", None)  # a RecoveryBlocked (not imported: its cost)
    return list(getattr(report, "actions", None) or [])


def _fail_blocked(as_json: bool, message: str, recovered: list[str]) -> None:
    _say_recovered(as_json, recovered)
    _fail(as_json, "failed", message, recovered=recovered)


def _say_recovered(as_json: bool, actions: list[str]) -> None:
    if actions and not as_json:
        try:
            for line in actions:
                print(f"recovered: {line}", file=sys.stderr)
        except OSError:
            sys.stderr = None  # type: ignore[assignment]  # recovery is done; say it nowhere


def run_apply(args) -> int:
    from hello_tui.patch.commit import commit_plan, note_failure, plan_file_lines
    from hello_tui.patch.planner import plan_patch_text

    as_json = bool(getattr(args, "json", False))
    settings = _settings(args, as_json)
    if settings is None:
        return EXIT_USAGE
    try:
        text = _read_patch(args.patch)
    except OSError as exc:
        _fail(as_json, "usage_error", f"cannot read the patch {args.patch}: {exc.strerror or exc}")
        return EXIT_USAGE
    recovered, blocked = recover_first(settings)
    if blocked is not None:
        _fail_blocked(as_json, blocked, recovered)
        return EXIT_FAILED
    _say_recovered(as_json, recovered)
    try:
        plan = plan_patch_text(text, settings, limits=False)
    except PatchError as exc:
        if not args.dry_run:
            note_failure(settings, str(exc), text, f"hello-tui apply {args.patch}")
        _fail(as_json, "refused", str(exc), recovered=recovered)
        return EXIT_FAILED
    files = plan_file_lines(plan)
    risk = {"high": plan.risk.high, "reasons": plan.risk.reasons}
    if not as_json:
        for warning in plan.warnings:  # how hints and miscounted hunks were settled
            print(f"warning: {warning}", file=sys.stderr)
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
            {
                "status": "dry_run",
                "files": files,
                "risk": risk,
                "recovered": recovered,
                "warnings": plan.warnings,
            },
            "\n".join(files) + "\n(dry run: nothing written)",
        )
        return EXIT_OK
    try:
        result = commit_plan(plan, settings, user_task=f"hello-tui apply {args.patch}")
    except PatchError as exc:
        _fail(as_json, "failed", str(exc))
        return EXIT_FAILED
    _emit_done(
        as_json,
        {
            "status": "applied",
            "risk": risk,
            "recovered": recovered,
            "warnings": plan.warnings,
            **_result_payload(result),
        },
        "\n".join(result.summary_lines()) + f"\nbackup: {result.backup_dir}",
    )
    return EXIT_OK


def _run_step(args, direction: str) -> int:
    from hello_tui.patch.history import UndoRefused, UndoResult, redo_last, undo_last

    as_json = bool(getattr(args, "json", False))
    settings = _settings(args, as_json)
    if settings is None:
        return EXIT_USAGE
    force = bool(getattr(args, "force", False))
    step = undo_last if direction == "undo" else redo_last
    try:
        # The step recovers an interrupted transaction first, under its own lock: an undo
        # whose patch recovery rolls back must know it, so it reverts nothing more.
        result: UndoResult = step(settings, force=force)
    except UndoRefused as exc:
        _fail(as_json, "needs_force", str(exc), changed=exc.paths)
        return EXIT_NEEDS_CONFIRMATION
    except PatchError as exc:
        _fail_blocked(as_json, str(exc), done_before_block(exc))
        return EXIT_FAILED
    recovered = result.recovered
    _say_recovered(as_json, recovered)
    status = "undone" if direction == "undo" else "redone"
    lines = result.summary_lines() or ["(no file needed a change)"]
    text = "\n".join(lines) + f"\n{status}: {result.patch}"
    if result.by_recovery:
        text += (
            "\nit was interrupted before it finished, and recovery rolled it back: that was "
            "the undo, nothing else was reverted (`hello-tui undo` again goes one further back)"
        )
    else:
        text += f"\nbackup of the state before: {result.backup_dir}"
    if result.kept_edits:
        text += (
            f"\nyour edits to {', '.join(result.kept_edits)} were backed up first in "
            f"{result.backup_dir}"
        )
    _emit_done(
        as_json,
        {
            "status": status,
            "patch": result.patch,
            "kept_edits": result.kept_edits,
            "recovered": recovered,
            "by_recovery": result.by_recovery,
            **_result_payload(result),
        },
        text,
    )
    return EXIT_OK


def run_undo(args) -> int:
    return _run_step(args, "undo")


def run_redo(args) -> int:
    return _run_step(args, "redo")


def _history_state(entry: HistoryEntry) -> str:
    if entry.damaged is not None:
        return "damaged"
    if entry.undone is None:
        return "unknown"
    if entry.undone:
        return "undone (redo brings it back)" if entry.redoable else "undone"
    return "applied"


def _patch_json(entry: HistoryEntry) -> dict[str, Any] | None:
    if entry.patch is None:
        return None
    files = [
        {"path": f.path, "status": f.status, "added": f.added, "removed": f.removed}
        | ({"binary": True} if f.binary else {})
        for f in entry.patch.files
    ]
    return {
        "added": entry.patch.added,
        "removed": entry.patch.removed,
        "complete": entry.patch.complete,
        "files": files,
    }


def _file_lines(entry: HistoryEntry) -> list[str]:
    """The manifest's "M a.txt" lines, each with its +/- lines when the note's diff has them."""
    if entry.patch is None:
        return entry.files
    counts = {f.path: f for f in entry.patch.files}
    lines = []
    for line in entry.files:
        found = counts.get(line[2:].rsplit(" -> ", 1)[-1])  # "R old -> new": the new name
        if found is None:
            lines.append(line)
        else:
            lines.append(
                line + ("  binary" if found.binary else f"  +{found.added} −{found.removed}")
            )
    if not entry.patch.complete:
        lines.append("(the note's diff was clipped: counts for the files above only)")
    return lines


def _history_json(entry: HistoryEntry) -> dict[str, Any]:
    return {
        "name": entry.name,
        "time": entry.created_at,
        "kind": entry.kind,
        "files": entry.files,
        "task": entry.task,
        "undone": entry.undone,
        "redoable": entry.redoable,
        "damaged": entry.damaged,
        "patch": _patch_json(entry),
    }


def run_history(args) -> int:
    from hello_tui.patch.history import history

    as_json = bool(getattr(args, "json", False))
    settings = _settings(args, as_json)
    if settings is None:
        return EXIT_USAGE
    # Recovered first, as before apply or undo: after a crash mid-commit the tree is a
    # mix of two states, and a history read from the records alone would call the
    # interrupted patch "not applied" over files that hold half of it.
    recovered, blocked = recover_first(settings)
    if blocked is not None:
        _fail_blocked(as_json, blocked, recovered)
        return EXIT_FAILED
    _say_recovered(as_json, recovered)
    entries = history(settings)
    if as_json:
        payload = {
            "status": "ok",
            "recovered": recovered,
            "history": [_history_json(e) for e in entries],
        }
        _emit(True, payload, "")
        return EXIT_OK
    if not entries:
        print("No patch has been applied in this repository yet.")
        return EXIT_OK
    for e in entries:
        if e.damaged is not None:
            print(f"{e.name}  damaged record ({e.damaged}); `hello-tui recover` shows it")
            continue
        when = e.created_at.replace("T", " ")[:19]
        kind = "" if e.kind == "patch" else f" [{e.kind}]"
        print(f"{when}  {e.name}  {_history_state(e)}{kind}")
        if e.task:
            print(f"    task: {e.task}")
        for line in _file_lines(e):
            print(f"    {line}")
    return EXIT_OK


def _recover_payload(report: RecoveryReport, problems: list[str]) -> dict[str, Any]:
    return {
        "status": "blocked" if report.blocked else "ok",
        "found": report.findings,
        "done": report.actions,
        "blocked": report.blocked,
        "problems": problems,
    }


def run_recover(args) -> int:
    from hello_tui.patch.recovery import RecoveryReport, inspect_records, recover_locked
    from hello_tui.patch.transaction import write_lock

    as_json = bool(getattr(args, "json", False))
    settings = _settings(args, as_json)
    if settings is None:
        return EXIT_USAGE
    if not settings.state.root.exists():
        _emit(as_json, _recover_payload(RecoveryReport(), []), "nothing to recover")
        return EXIT_OK
    try:
        with write_lock(settings):
            report = recover_locked(settings, salvage=True)
            problems = inspect_records(settings)
    except PatchError as exc:
        _fail(as_json, "failed", str(exc))
        return EXIT_FAILED
    lines = [f"found: {f}" for f in report.findings]
    lines += [f"done: {a}" for a in report.actions]
    lines += [f"blocked: {b}" for b in report.blocked]
    lines += [f"problem: {p}" for p in problems]
    _emit_done(
        as_json, _recover_payload(report, problems), "\n".join(lines) or "nothing to recover"
    )
    damaged = [p for p in problems if not p.startswith("set aside earlier")]
    return EXIT_FAILED if report.blocked or damaged else EXIT_OK
