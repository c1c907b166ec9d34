"""Commit, selection, user edits, backups, rollback, stale guard, lock, notes, undo and restore."""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
import sys

import pytest

from hello_tui.patch import (
    PatchError,
    commit_plan,
    durable,
    list_backups,
    plan_file_change,
    plan_patch_text,
    read_backup,
    recover,
    redo_last,
    replan_with_edits,
    restore_from_backup,
    transaction,
    undo_last,
)
from hello_tui.store.notes import NoteStore

from .conftest import snapshot, write
from .crashkit import hook, leftovers


def patch(*body: str) -> str:
    return "*** Begin Patch\n" + "\n".join(body) + "\n*** End Patch\n"


TWO_FILES = patch(
    "*** Update File: a.txt",
    "@@",
    "-a1",
    "+A1",
    "@@",
    " mid",
    "-a2",
    "+A2",
    "*** Add File: new.txt",
    "+fresh",
)


@pytest.fixture
def two(repo):
    write(repo, "a.txt", "a1\nmid\na2\n")
    return repo


def test_commit_writes_backups_and_result(two, settings):
    result = commit_plan(plan_patch_text(TWO_FILES, settings), settings, user_task="fix it")
    assert (two / "a.txt").read_text() == "A1\nmid\nA2\n"
    assert result.updated == ["a.txt"] and result.added == ["new.txt"]
    assert result.hunks_applied == 3 and result.hunks_declined == 0
    assert re.fullmatch(r"\.helloagents/backups/\d{8}_\d{6}_\d{6}", result.backup_dir)
    backup = two / result.backup_dir
    assert (backup / "a.txt.bak").read_text() == "a1\nmid\na2\n"
    assert not (backup / "new.txt.bak").exists()
    assert "Update File: a.txt" in (backup / "patch.txt").read_text()
    assert not (two / ".helloagents/journal/open.json").exists()


def test_commit_writes_a_patch_applied_note(two, settings):
    result = commit_plan(plan_patch_text(TWO_FILES, settings), settings, user_task="fix it")
    note = NoteStore(settings.state.notes).read(result.note_id)
    assert note.title == "Patch applied" and note.note_type == "action"
    assert note.tags == [settings.project, "patch_applied"]
    for part in ("fix it", "M a.txt", "A new.txt", result.backup_dir, "diff --git a/a.txt b/a.txt"):
        assert part in note.content


def test_failed_commit_writes_a_blocker_note(two, settings):
    plan = plan_patch_text(TWO_FILES, settings)
    write(two, "a.txt", "changed meanwhile\n")
    with pytest.raises(PatchError, match="Conflict, nothing was written"):
        commit_plan(plan, settings, user_task="fix it")
    notes = NoteStore(settings.state.notes).list()
    failed = [n for n in notes if n.title == "Patch failed"]
    assert (
        failed and failed[0].note_type == "blocker" and "a.txt changed on disk" in failed[0].content
    )


def test_stale_guard_writes_nothing(two, settings):
    plan = plan_patch_text(TWO_FILES, settings)
    write(two, "a.txt", "edited by the user\n")
    before = snapshot(two)
    with pytest.raises(PatchError, match="a.txt changed on disk"):
        commit_plan(plan, settings)
    assert snapshot(two) == before
    assert list_backups(settings) == []


def test_added_file_appearing_before_commit_is_a_conflict(two, settings):
    plan = plan_patch_text(TWO_FILES, settings)
    write(two, "new.txt", "someone else\n")
    with pytest.raises(PatchError, match="new.txt now exists"):
        commit_plan(plan, settings)
    assert (two / "new.txt").read_text() == "someone else\n"
    assert (two / "a.txt").read_text() == "a1\nmid\na2\n"


def test_permission_bits_are_kept(repo, settings):
    path = write(repo, "run.sh", "echo a\n")
    os.chmod(path, 0o751)
    commit_plan(
        plan_patch_text(patch("*** Update File: run.sh", "-echo a", "+echo b"), settings), settings
    )
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751
    commit_plan(
        plan_patch_text(
            patch("*** Update File: run.sh", "*** Move to: bin/run.sh", "-echo b", "+echo c"),
            settings,
        ),
        settings,
    )
    assert stat.S_IMODE(os.stat(repo / "bin/run.sh").st_mode) == 0o751


def test_failure_midway_restores_every_file(two, settings):
    write(two, "b.txt", "b\n")
    text = TWO_FILES + patch("*** Update File: b.txt", "-b", "+B")
    plan = plan_patch_text(text, settings)
    before = snapshot(two)

    def fail_on_b(label: str) -> None:
        if label == "replace b.txt":
            raise OSError(errno.EIO, "Input/output error")

    with hook(fail_on_b), pytest.raises(PatchError) as info:
        commit_plan(plan, settings)
    assert str(info.value) == "input/output error while writing b.txt; nothing was changed"
    assert snapshot(two) == before
    assert list_backups(settings) == []
    assert not (two / ".helloagents/journal/open.json").exists()
    assert not leftovers(two)


def test_two_commits_in_the_same_second_get_distinct_folders(repo, settings):
    write(repo, "x.txt", "0\n")
    names = set()
    for i in range(3):
        result = commit_plan(
            plan_patch_text(patch("*** Update File: x.txt", f"-{i}", f"+{i + 1}"), settings),
            settings,
        )
        names.add(result.backup_dir)
    assert len(names) == 3


def test_lock_held_by_another_writer_refuses(two, settings, monkeypatch):
    monkeypatch.setattr(transaction, "LOCK_TIMEOUT_SECONDS", 0.05)
    plan = plan_patch_text(TWO_FILES, settings)
    settings.state.root.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time, filelock\n"
                f"lock = filelock.FileLock({str(settings.state.lock_file)!r})\n"
                "lock.acquire()\nprint('locked', flush=True)\ntime.sleep(60)\n"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(PatchError, match="Another hello-tui is writing"):
            commit_plan(plan, settings)
    finally:
        holder.kill()
        holder.wait()
    assert (two / "a.txt").read_text() == "a1\nmid\na2\n"
    commit_plan(plan, settings)
    assert (two / "a.txt").read_text() == "A1\nmid\nA2\n"


# ---- partial acceptance and edits ---------------------------------------------


def test_select_applies_only_accepted_hunks_in_one_transaction(two, settings):
    plan = plan_patch_text(TWO_FILES, settings)
    result = commit_plan(plan, settings, selection={"a.txt": {1}})
    assert (two / "a.txt").read_text() == "a1\nmid\nA2\n"
    assert not (two / "new.txt").exists()
    assert result.hunks_applied == 1 and result.hunks_declined == 2


def test_everything_declined_is_an_error(two, settings):
    with pytest.raises(PatchError, match="declined"):
        commit_plan(plan_patch_text(TWO_FILES, settings), settings, selection={})


def test_replan_with_edits(two, settings):
    plan = plan_patch_text(TWO_FILES, settings)
    edited = replan_with_edits(plan, settings, {"a.txt": "user\nmid\na2\n", "new.txt": "mine\n"})
    commit_plan(edited, settings)
    assert (two / "a.txt").read_text() == "user\nmid\na2\n"
    assert (two / "new.txt").read_text() == "mine\n"
    with pytest.raises(PatchError, match="not part of the patch"):
        replan_with_edits(plan, settings, {"other.txt": "x"})


def test_plan_file_change_hunks_keep_crlf_and_can_be_selected(repo, settings):
    write(repo, "c.txt", b"one\r\ntwo\r\nthree\r\nfour\r\n")
    plan = plan_file_change(settings, "c.txt", "ONE\ntwo\nthree\nFOUR\n")
    assert len(plan.files[0].hunks) == 2 and not plan.risk.high
    assert "-one" in plan.source_text and "+ONE" in plan.source_text
    commit_plan(plan, settings, selection={"c.txt": {1}})
    assert (repo / "c.txt").read_bytes() == b"one\r\ntwo\r\nthree\r\nFOUR\r\n"


def test_plan_file_change_add_delete_and_whole_file(repo, settings):
    commit_plan(plan_file_change(settings, "n/new.txt", "hi"), settings)
    assert (repo / "n/new.txt").read_bytes() == b"hi"
    whole = plan_file_change(settings, "n/new.txt", "all new\n", whole_file=True)
    assert whole.risk.high and whole.files[0].whole_file_rewrite
    deletion = plan_file_change(settings, "n/new.txt", None)
    assert deletion.files[0].op == "delete" and deletion.risk.reasons == ["deletes n/new.txt"]
    commit_plan(deletion, settings)
    assert not (repo / "n/new.txt").exists()


def test_plan_file_change_final_newline_changes(repo, settings):
    write(repo, "f.txt", "a\nb\n")
    commit_plan(plan_file_change(settings, "f.txt", "a\nb"), settings)
    assert (repo / "f.txt").read_bytes() == b"a\nb"
    commit_plan(plan_file_change(settings, "f.txt", "a\nb\n"), settings)
    assert (repo / "f.txt").read_bytes() == b"a\nb\n"


# ---- undo and restore --------------------------------------------------------------


def test_undo_restores_and_removes_added_files_and_redo_brings_them_back(two, settings):
    before = snapshot(two)
    commit_plan(plan_patch_text(TWO_FILES, settings), settings)
    after = snapshot(two)
    undo = undo_last(settings)
    assert snapshot(two) == before
    assert undo.updated == ["a.txt"] and undo.deleted == ["new.txt"]
    assert (
        undo.note_id and NoteStore(settings.state.notes).read(undo.note_id).title == "Patch undone"
    )
    with pytest.raises(PatchError, match="Nothing to undo"):
        undo_last(settings)  # a second undo goes further back, never forward
    assert snapshot(two) == before
    redo = redo_last(settings)
    assert snapshot(two) == after and redo.patch == undo.patch
    assert NoteStore(settings.state.notes).read(redo.note_id).title == "Patch redone"


def test_undo_of_delete_and_move(repo, settings):
    write(repo, "d.txt", "d\n")
    write(repo, "m.txt", "m\n")
    before = snapshot(repo)
    commit_plan(
        plan_patch_text(
            patch(
                "*** Delete File: d.txt",
                "*** Update File: m.txt",
                "*** Move to: sub/m2.txt",
                "-m",
                "+M",
            ),
            settings,
        ),
        settings,
    )
    undo_last(settings)
    assert snapshot(repo) == before


def test_undo_with_nothing_recorded(repo, settings):
    with pytest.raises(PatchError, match="Nothing to undo"):
        undo_last(settings)


def test_list_backups_and_restore_one_file(two, settings):
    write(two, "b.txt", "b\n")
    first = commit_plan(
        plan_patch_text(TWO_FILES + patch("*** Update File: b.txt", "-b", "+B"), settings), settings
    )
    commit_plan(plan_patch_text(patch("*** Update File: b.txt", "-B", "+BB"), settings), settings)
    backups = list_backups(settings)
    assert len(backups) == 2 and backups[1].name == first.backup_dir.rsplit("/", 1)[1]
    assert sorted(backups[1].files) == ["a.txt", "b.txt"] and backups[1].added == ["new.txt"]
    assert read_backup(settings, backups[1].name, "a.txt") == b"a1\nmid\na2\n"
    assert read_backup(settings, backups[1].name, "new.txt") is None
    restored = restore_from_backup(settings, backups[1].name, "a.txt")
    assert (two / "a.txt").read_text() == "a1\nmid\na2\n"
    assert (two / "b.txt").read_text() == "BB\n"
    assert restored.updated == ["a.txt"]
    undo_last(settings)  # the restore itself is undoable
    assert (two / "a.txt").read_text() == "A1\nmid\nA2\n"
    undo_last(settings)  # then the second patch
    assert (two / "b.txt").read_text() == "B\n"
    with pytest.raises(PatchError, match="No committed backup"):
        restore_from_backup(settings, "nope")


def test_note_failure_never_undoes_a_commit(two, settings, monkeypatch):
    import hello_tui.store.notes as ns

    def broken(*args, **kwargs):
        raise OSError("disk full for notes")

    monkeypatch.setattr(ns.NoteStore, "create", broken)
    result = commit_plan(plan_patch_text(TWO_FILES, settings), settings)
    assert result.note_id is None
    assert (two / "a.txt").read_text() == "A1\nmid\nA2\n"


def test_recover_without_state_folder_is_a_no_op(repo, settings):
    assert recover(settings) == []
    assert not (repo / ".helloagents").exists()


def test_move_with_every_hunk_declined_is_a_plain_rename(repo, settings):
    write(repo, "old.txt", "a\n")
    plan = plan_patch_text(
        patch("*** Update File: old.txt", "*** Move to: new.txt", "-a", "+b"), settings
    )
    result = commit_plan(plan, settings, selection={"old.txt": set()})
    assert result.moved == [("old.txt", "new.txt")] and result.hunks_declined == 1
    assert (repo / "new.txt").read_text() == "a\n" and not (repo / "old.txt").exists()


def test_the_write_point_hook_can_also_be_set_on_the_transaction_module(two, settings, monkeypatch):
    seen: list[str] = []
    monkeypatch.setattr(durable, "WRITE_POINT_HOOK", seen.append)
    commit_plan(plan_patch_text(TWO_FILES, settings), settings)
    assert "replace a.txt" in seen and seen[-1] == "closed"
