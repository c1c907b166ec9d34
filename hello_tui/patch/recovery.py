"""Recovery: finish or roll back a transaction that was interrupted (kill -9, power loss, a full disk).

Runs under the write lock before every transaction and at the start of every
command that touches the repository's state. It is idempotent, and safe to
kill at any point: every step it takes is one the next run recognises.

What it decides from, for each backup folder without `COMMITTED`:
- the journal names it: the transaction was writing the tree. Roll it back
  from its manifest (or the journal's copy when the manifest is damaged),
  only if every file is verifiably before or after; then close the journal.
- no journal names it (and the journal is not damaged): the transaction
  stopped before touching the tree, so its backups are redundant — to the
  trash, or set aside into `<state>/damaged/` when its record is damaged.
- the journal is damaged: any folder with a verified manifest is rolled back
  the same way; a folder whose record is damaged too blocks.
A folder with `COMMITTED` whose journal is still open only needs the journal
closed (and its manifest repaired from the journal's copy, if damaged).
A folder without `COMMITTED` that no journal names, whose files hold what it
wrote, was committed and then lost its marker: it blocks (undo must not skip
it to revert an older patch), naming the files and the ways out. So does one
older than a committed folder, whatever its files hold: recovery runs before
every new record, so only the newest folder can be an interrupted transaction.

The report lists every interrupted transaction it resolved (`interrupted`:
rolled back, or removed before it changed a file), with its kind when its
record says it: an undo that finds a patch, restore or redo interrupted has
nothing more to do, since that change is not in effect any more.

Anything it cannot verify blocks: one line naming the folder, nothing changed
or deleted, and every write refused until it is resolved.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from hello_tui.config import Settings
from hello_tui.patch import durable, records
from hello_tui.patch.foreign_records import refuse_foreign_records
from hello_tui.patch.records import Damaged
from hello_tui.patch.types import PatchError

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class Interrupted:
    """An interrupted transaction recovery resolved: its folder, kind and the files put back."""

    name: str
    kind: str | None  # patch | undo | redo | restore; None: it stopped before its record
    restored: tuple[records.Entry, ...] = ()


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class RecoveryReport:
    """What recovery did, saw and could not do."""

    actions: list[str] = field(default_factory=list)  # what was done
    interrupted: list[Interrupted] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # what was seen, for `hello-tui recover`
    blocked: list[str] = field(default_factory=list)  # one line each; writes are refused


class RecoveryBlocked(PatchError):
    """An interrupted transaction whose records cannot be verified; nothing was changed."""

    def __init__(self, report: RecoveryReport) -> None:
        self.report = report
        more = f" (and {len(report.blocked) - 1} more)" if len(report.blocked) > 1 else ""
        super().__init__(report.blocked[0] + more)


def _label(settings: Settings, path: Path) -> str:
    return records.state_label(settings, path)


def recover_locked(settings: Settings, *, salvage: bool = False) -> RecoveryReport:
    """Complete or roll back what an interrupted transaction left; the caller holds the lock.

    `salvage` (the `recover` command): when a rollback cannot be verified as a
    whole, still put back the files that can be verified.
    """
    report = RecoveryReport()
    if not settings.state.root.exists():
        return report
    refuse_foreign_records(settings)  # records a clone brought are never acted on
    repo = Path(os.path.realpath(settings.repo))
    _remove_journal_temps(settings)
    journal: tuple[str, dict[str, Any]] | None = None
    journal_damage: Damaged | None = None
    try:
        journal = records.read_journal(settings)
    except Damaged as exc:
        journal_damage = exc
        report.findings.append(f"the journal is damaged ({exc.why})")
    if journal is not None:
        report.findings.append(f"an open journal for {journal[0]}")
        folder = settings.state.backups / journal[0]
        if folder.is_dir() and records.is_committed(folder):
            _close_committed(settings, folder, journal[1], report)
        elif not folder.is_dir():
            _journal_without_folder(settings, repo, journal, report)
    folders = records.record_folders(settings)
    committed = [f.name for f in folders if records.is_committed(f)]
    for folder in folders:
        if records.is_committed(folder):
            continue
        if committed and folder.name < committed[-1]:
            # Recovery runs before every new record is made, so an interrupted transaction
            # is always the newest folder: one below a committed record was committed too,
            # and lost its marker. Its backups may be all that is left of the files as they
            # were (a later patch changed them since), and a later record may stand on it.
            report.blocked.append(_marker_lost_below(settings, folder, committed[-1]))
            continue
        copy = journal[1] if journal is not None and journal[0] == folder.name else None
        _resolve_uncommitted(
            settings, repo, folder, copy, journal_damage is not None, salvage, report
        )
    if journal_damage is not None and not report.blocked:
        where = _set_journal_aside(settings)
        report.actions.append(
            f"set the damaged journal aside as {_label(settings, where)}; every backup "
            "folder was checked and nothing depends on it"
        )
    empty_trash(settings)
    return report


def _remove_journal_temps(settings: Settings) -> None:
    journal = records.journal_path(settings)
    durable.remove_temp_files(journal, what=_label(settings, journal))


def _close_committed(
    settings: Settings, folder: Path, copy: dict[str, Any], report: RecoveryReport
) -> None:
    try:
        records.read_manifest(folder)
    except (FileNotFoundError, Damaged):
        records.write_manifest(settings, folder, copy)
        report.actions.append(f"repaired the record of {folder.name} from the journal's copy")
    records.close_journal(settings)
    report.actions.append(f"completed the interrupted patch {folder.name}")


def _journal_without_folder(
    settings: Settings, repo: Path, journal: tuple[str, dict[str, Any]], report: RecoveryReport
) -> None:
    from hello_tui.patch.rollback import plan_rollback  # only for an interrupted transaction

    name, manifest = journal
    plan = plan_rollback(repo, None, manifest)
    if not plan.to_restore and not plan.changed and not plan.damaged:
        records.close_journal(settings)
        report.actions.append(
            f"closed the journal of {name}: its folder is gone and every file is as before"
        )
        report.interrupted.append(Interrupted(name, _kind(manifest)))
        return
    files = ", ".join(e.path for e in plan.changed + plan.to_restore)
    report.blocked.append(
        f"the journal names {_label(settings, settings.state.backups / name)} but that folder "
        f"is gone, and {files} are not as they were before it; nothing was changed. Put the "
        f"folder back, or move {_label(settings, records.journal_path(settings))} aside to "
        "accept the files as they are"
    )


def _resolve_uncommitted(
    settings: Settings,
    repo: Path,
    folder: Path,
    journal_copy: dict[str, Any] | None,
    journal_damaged: bool,
    salvage: bool,
    report: RecoveryReport,
) -> None:
    from hello_tui.patch.rollback import execute_rollback, plan_rollback  # only when interrupted

    label = _label(settings, folder)
    manifest: dict[str, Any] | None = None
    damage: Damaged | None = None
    try:
        manifest = records.read_manifest(folder)
    except FileNotFoundError:
        pass
    except Damaged as exc:
        damage = exc
        report.findings.append(f"{label}: its manifest is damaged ({exc.why})")
    if manifest is None and journal_copy is not None:
        manifest = journal_copy
    journaled = journal_copy is not None or journal_damaged
    if manifest is None:
        if damage is None:
            # No manifest was ever written, and the journal only follows the manifest:
            # this transaction stopped before touching the tree.
            _trash(settings, folder)
            report.actions.append(_unstarted(folder))
            report.interrupted.append(Interrupted(folder.name, None))
        elif not journaled:
            where = records.move_aside(settings, folder, records.SET_ASIDE)
            report.interrupted.append(Interrupted(folder.name, None))
            report.actions.append(
                f"set {label} aside as {_label(settings, where)}: its record is damaged "
                f"({damage.why}), and no journal names it, so it never wrote to the tree"
            )
        else:
            report.blocked.append(
                f"cannot verify the interrupted patch in {label}: its manifest is damaged "
                f"({damage.why}) and so is the journal; nothing was changed or deleted. "
                "`hello-tui recover` shows what is there"
            )
        return
    plan = plan_rollback(repo, folder, manifest)
    if not journaled:
        if plan.to_restore:
            report.blocked.append(_marker_lost(settings, folder, plan.to_restore))
            return
        _trash(settings, folder)  # never reached its journal: the tree was never touched
        report.actions.append(_unstarted(folder))
        report.interrupted.append(Interrupted(folder.name, _kind(manifest)))
        return
    if not plan.verifiable:
        if salvage and plan.to_restore:
            execute_rollback(settings, repo, folder, manifest, plan)
            report.actions.append(
                f"put back {', '.join(e.path for e in plan.to_restore)} as before, from {label}"
            )
        problems = [f"{e.path} changed since it was interrupted" for e in plan.changed]
        problems += [f"{_label(settings, d.path)}: {d.why}" for d in plan.damaged]
        report.blocked.append(
            f"cannot finish rolling back the interrupted patch in {label}: "
            + "; ".join(problems)
            + ". Nothing else was changed or deleted; `hello-tui recover` shows what is there"
        )
        return
    execute_rollback(settings, repo, folder, manifest, plan)
    if journal_copy is not None:
        records.close_journal(settings)
    _trash(settings, folder)
    if plan.to_restore:
        report.actions.append(f"rolled back the interrupted patch {folder.name}")
    else:
        report.actions.append(_unstarted(folder))
    report.interrupted.append(Interrupted(folder.name, _kind(manifest), tuple(plan.to_restore)))


def _kind(manifest: dict[str, Any]) -> str | None:
    kind = manifest.get("kind")
    return kind if isinstance(kind, str) else None


def _marker_lost(settings: Settings, folder: Path, written: list[records.Entry]) -> str:
    """A record whose files hold what it wrote but which has no commit marker and no journal."""
    label = _label(settings, folder)
    marker = _label(settings, folder / records.COMMITTED)
    return (
        f"{label} has no {records.COMMITTED} marker and no journal names it, yet "
        f"{', '.join(e.path for e in written)} hold what it wrote: it was applied and its marker "
        f"is lost. Nothing was changed, and undo will not revert an older patch past it. If "
        f"the patch is applied as you want, put the marker back (create {marker}); to drop "
        f"the record instead, move {label} out of the backups folder"
    )


def _marker_lost_below(settings: Settings, folder: Path, newer: str) -> str:
    """A record without its commit marker that is older than a committed one."""
    label = _label(settings, folder)
    marker = _label(settings, folder / records.COMMITTED)
    return (
        f"{label} has no {records.COMMITTED} marker, yet the later record {newer} is "
        f"committed: it was applied and its marker is lost. Nothing was changed, and undo "
        f"will not revert past it. Put the marker back (create {marker}) to keep it in the "
        f"history; to drop the record instead, move {label} out of the backups folder"
    )


def _unstarted(folder: Path) -> str:
    return f"removed {folder.name}, an interrupted transaction that had not changed any file yet"


def _trash(settings: Settings, folder: Path) -> None:
    records.move_aside(settings, folder, records.TRASH)


def _set_journal_aside(settings: Settings) -> Path:
    journal = records.journal_path(settings)
    dest_root = settings.state.root / records.SET_ASIDE
    dest_root.mkdir(parents=True, exist_ok=True)
    dest = dest_root / f"journal-{datetime.now().strftime(records.NAME_FORMAT)}.json"
    durable.rename(journal, dest, what=_label(settings, journal))
    return dest


def empty_trash(settings: Settings) -> None:
    """Delete what was moved to the trash: folders proven redundant (rolled back, or never used)."""
    trash = settings.state.root / records.TRASH
    try:
        names = os.listdir(trash)
    except FileNotFoundError:
        return
    import shutil  # only with something to delete: every command recovers first

    for name in names:
        shutil.rmtree(trash / name, ignore_errors=True)


def inspect_records(settings: Settings) -> list[str]:
    """Problems in the committed records: damaged manifests and backups (for `recover`)."""
    problems: list[str] = []
    for folder in records.record_folders(settings):
        if not records.is_committed(folder):
            continue
        label = _label(settings, folder)
        try:
            manifest = records.read_manifest(folder)
        except FileNotFoundError:
            problems.append(f"{label}: committed, but its manifest is missing")
            continue
        except Damaged as exc:
            problems.append(f"{label}: its manifest is damaged ({exc.why})")
            continue
        for entry in records.entries_of(manifest):
            if entry.before is None:
                continue
            try:
                records.backup_bytes(folder, entry)
            except Damaged as exc:
                problems.append(f"{label}: the backup of {entry.path} is damaged ({exc.why})")
    aside = settings.state.root / records.SET_ASIDE
    if aside.is_dir():
        for name in sorted(os.listdir(aside)):
            problems.append(f"set aside earlier, kept for you: {_label(settings, aside / name)}")
    return problems
