"""Undo people can trust: a stack of undo and redo, checks before undoing, history, damaged records."""

from __future__ import annotations

import json
import os
import stat

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from hello_tui.config import load_settings
from hello_tui.patch import (
    PatchError,
    UndoRefused,
    commit_plan,
    plan_patch_text,
    read_backup,
    records,
    redo_last,
    restore_from_backup,
    undo_last,
)
from hello_tui.patch.history import history
from hello_tui.patch.transaction import Write, run_transaction
from hello_tui.patch.undo_stack import current_state, patch_fields

from .conftest import snapshot, write
from .crashkit import next_command, scratch_root


def patch(*body: str) -> str:
    return "*** Begin Patch\n" + "\n".join(body) + "\n*** End Patch\n"


def step(settings, path: str, old: str, new: str, task: str = "") -> str:
    result = commit_plan(
        plan_patch_text(patch(f"*** Update File: {path}", f"-{old}", f"+{new}"), settings),
        settings,
        user_task=task,
    )
    assert result.backup_dir
    return result.backup_dir.rsplit("/", 1)[1]


@pytest.fixture
def three(repo, settings):
    """x.txt through three patches: states 0, 1, 2, 3."""
    write(repo, "x.txt", "0\n")
    states = [snapshot(repo)]
    names = []
    for i in range(3):
        names.append(step(settings, "x.txt", str(i), str(i + 1), task=f"step {i + 1}"))
        states.append(snapshot(repo))
    return states, names


def test_each_undo_steps_back_one_more_and_each_redo_forward(repo, settings, three):
    states, names = three
    for k in (2, 1, 0):
        done = undo_last(settings)
        assert snapshot(repo) == states[k] and done.patch == names[k]
    with pytest.raises(PatchError, match="Nothing to undo"):
        undo_last(settings)
    for k in (1, 2, 3):
        done = redo_last(settings)
        assert snapshot(repo) == states[k] and done.patch == names[k - 1]
    with pytest.raises(PatchError, match="Nothing to redo"):
        redo_last(settings)


def test_a_new_patch_after_undo_ends_what_redo_could_bring_back(repo, settings, three):
    states, _names = three
    undo_last(settings)
    undo_last(settings)
    assert snapshot(repo) == states[1]
    step(settings, "x.txt", "1", "new")
    with pytest.raises(PatchError, match="Nothing to redo"):
        redo_last(settings)
    undo_last(settings)
    assert snapshot(repo) == states[1]
    undo_last(settings)
    assert snapshot(repo) == states[0]


def test_undo_refuses_when_a_file_changed_since_and_names_it(repo, settings):
    write(repo, "a.txt", "a\n")
    write(repo, "b.txt", "b\n")
    commit_plan(
        plan_patch_text(
            patch("*** Update File: a.txt", "-a", "+A", "*** Update File: b.txt", "-b", "+B"),
            settings,
        ),
        settings,
    )
    write(repo, "b.txt", "my own edit\n")
    edited = snapshot(repo)
    with pytest.raises(UndoRefused) as info:
        undo_last(settings)
    assert info.value.paths == ["b.txt"]
    assert "b.txt changed since the patch wrote it" in str(info.value)
    assert "a.txt" not in str(info.value) and "--force" in str(info.value)
    assert snapshot(repo) == edited
    ran = next_command("undo", "--repo", str(repo))
    assert ran.code == 3 and "b.txt" in ran.err and len(ran.err.strip().splitlines()) == 1
    ran = next_command("undo", "--repo", str(repo), "--json")
    assert ran.code == 3 and json.loads(ran.out)["changed"] == ["b.txt"]


def test_forced_undo_backs_up_the_edits_first_and_redo_brings_them_back(repo, settings):
    write(repo, "a.txt", "a\n")
    write(repo, "b.txt", "b\n")
    commit_plan(
        plan_patch_text(
            patch("*** Update File: a.txt", "-a", "+A", "*** Update File: b.txt", "-b", "+B"),
            settings,
        ),
        settings,
    )
    write(repo, "b.txt", "my own edit\n")
    edited = snapshot(repo)
    ran = next_command("undo", "--repo", str(repo), "--force")
    assert ran.code == 0, ran.err
    assert "your edits to b.txt were backed up first" in ran.out
    assert (repo / "a.txt").read_text() == "a\n" and (repo / "b.txt").read_text() == "b\n"
    undo_folder = ran.out.split("backed up first in ")[1].strip().rsplit("/", 1)[1]
    assert read_backup(settings, undo_folder, "b.txt") == b"my own edit\n"
    redo_last(settings)
    assert snapshot(repo) == edited  # exactly the state the undo left


def test_a_file_already_back_as_before_is_no_conflict(repo, settings):
    write(repo, "a.txt", "a\n")
    write(repo, "b.txt", "b\n")
    before = snapshot(repo)
    commit_plan(
        plan_patch_text(
            patch("*** Update File: a.txt", "-a", "+A", "*** Update File: b.txt", "-b", "+B"),
            settings,
        ),
        settings,
    )
    write(repo, "b.txt", "b\n")  # reverted by hand
    undo_last(settings)
    assert snapshot(repo) == before


def test_undo_when_every_file_is_already_as_before_still_steps_back(repo, settings, three):
    states, names = three
    write(repo, "x.txt", "2\n")  # the last patch reverted by hand
    done = undo_last(settings)
    assert done.patch == names[2] and done.summary_lines() == []
    assert snapshot(repo) == states[2]
    undo_last(settings)
    assert snapshot(repo) == states[1]


def test_undo_removes_the_folders_a_patch_created_and_redo_recreates_them(repo, settings):
    write(repo, "keep.txt", "k\n")
    before = snapshot(repo)
    commit_plan(plan_patch_text(patch("*** Add File: a/b/c.txt", "+c"), settings), settings)
    after = snapshot(repo)
    undo_last(settings)
    assert snapshot(repo) == before and not (repo / "a").exists()
    redo_last(settings)
    assert snapshot(repo) == after
    undo_last(settings)
    assert snapshot(repo) == before


@pytest.mark.parametrize("mode", [0o4755, 0o2755, 0o1755, 0o6755, 0o4644, 0o2775], ids=oct)
def test_special_mode_bits_survive_apply_undo_and_redo(repo, settings, mode):
    # git records only 644 or 755, but a patch that changes a file's text leaves its
    # permissions as they were, setuid, setgid and sticky included, and undo restores
    # the real mode from the backup (as root, a chown after the chmod used to clear them).
    path = write(repo, "tool", "a\n")
    os.chmod(path, mode)
    patch = "--- a/tool\n+++ b/tool\n@@ -1 +1 @@\n-a\n+b\n"
    commit_plan(plan_patch_text(patch, settings), settings)
    assert (path.read_text(), stat.S_IMODE(os.stat(path).st_mode)) == ("b\n", mode)
    undo_last(settings)
    assert (path.read_text(), stat.S_IMODE(os.stat(path).st_mode)) == ("a\n", mode)
    redo_last(settings)
    assert (path.read_text(), stat.S_IMODE(os.stat(path).st_mode)) == ("b\n", mode)


def test_undo_of_a_mode_only_change(repo, settings):
    path = write(repo, "run.sh", "echo\n")
    os.chmod(path, 0o644)
    data = path.read_bytes()
    from hello_tui.patch.lines import sha256

    run_transaction(
        settings,
        [Write("run.sh", data, 0o755, sha256(data))],
        kind="patch",
        stack=lambda name: patch_fields(current_state(settings), name),
    )
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o755
    undo_last(settings)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    redo_last(settings)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o755


def _damage(settings, name: str) -> None:
    manifest = settings.state.backups / name / records.MANIFEST
    manifest.write_bytes(manifest.read_bytes()[:40])


def test_undo_never_skips_a_damaged_newest_record(repo, settings, three):
    states, names = three
    _damage(settings, names[2])
    for argv in (("undo",), ("undo", "--force"), ("redo",)):
        ran = next_command(argv[0], "--repo", str(repo), *argv[1:])
        assert ran.code == 1, ran.err
        assert len(ran.err.strip().splitlines()) == 1
        if argv[0] == "undo":
            assert f".helloagents/backups/{names[2]}" in ran.err and "damaged" in ran.err
        assert snapshot(repo) == states[3], "an older patch was reverted instead"
    assert (settings.state.backups / names[2]).is_dir()


def test_undo_stops_at_a_damaged_record_further_down(repo, settings, three):
    states, names = three
    _damage(settings, names[1])
    undo_last(settings)
    assert snapshot(repo) == states[2]
    with pytest.raises(PatchError, match=f"backups/{names[1]} is damaged"):
        undo_last(settings)
    assert snapshot(repo) == states[2]
    redo_last(settings)  # the way forward is intact
    assert snapshot(repo) == states[3]


def test_a_patch_on_top_of_a_damaged_record_can_be_undone_then_undo_stops(repo, settings, three):
    states, names = three
    _damage(settings, names[2])
    step(settings, "x.txt", "3", "4")
    undo_last(settings)
    assert snapshot(repo) == states[3]
    with pytest.raises(PatchError, match=names[2]):
        undo_last(settings)
    assert snapshot(repo) == states[3]


def test_history_newest_first_with_undone_and_redo_state(repo, settings, three):
    _states, names = three
    undo_last(settings)
    entries = history(settings)
    assert [e.name for e in entries] == list(reversed(names))
    assert [(e.undone, e.redoable) for e in entries] == [
        (True, True),
        (False, False),
        (False, False),
    ]
    assert entries[0].task == "step 3" and entries[0].files == ["M x.txt"]
    assert entries[0].created_at
    step(settings, "x.txt", "2", "other")
    entries = history(settings)
    assert [(e.undone, e.redoable) for e in entries[:2]] == [(False, False), (True, False)]
    ran = next_command("history", "--repo", str(repo), "--json")
    rows = json.loads(ran.out)["history"]
    assert [r["undone"] for r in rows] == [False, True, False, False]
    assert set(rows[0]) == {
        "name",
        "time",
        "kind",
        "files",
        "task",
        "undone",
        "redoable",
        "damaged",
        "patch",  # what the patch's note's diff changed (unidiff's counts)
    }
    text = next_command("history", "--repo", str(repo)).out
    assert text.count("undone") == 1 and text.count("applied") == 3


def test_history_shows_restores_and_damaged_records(repo, settings, three):
    states, names = three
    restore_from_backup(settings, names[0], "x.txt")
    assert snapshot(repo) == states[0]
    _damage(settings, names[1])
    entries = history(settings)
    assert entries[0].kind == "restore" and entries[0].undone is False
    damaged = [e for e in entries if e.damaged]
    assert [e.name for e in damaged] == [names[1]]
    # the applied stack runs through the damaged record: what lies below it is unknown
    assert [e.undone for e in entries if e.name == names[0]] == [None]
    text = next_command("history", "--repo", str(repo)).out
    assert f"{names[1]}  damaged record" in text and "[restore]" in text


def test_restore_is_a_step_of_its_own(repo, settings, three):
    states, names = three
    restore_from_backup(settings, names[0])
    assert snapshot(repo) == states[0]
    undo_last(settings)
    assert snapshot(repo) == states[3]
    undo_last(settings)
    assert snapshot(repo) == states[2]


def test_restore_from_a_damaged_record_refuses(repo, settings, three):
    states, names = three
    bak = settings.state.backups / names[0] / "x.txt.bak"
    os.unlink(bak)
    bak.write_bytes(b"tampered\n")
    with pytest.raises(PatchError, match="the backup of x.txt in .* is damaged"):
        restore_from_backup(settings, names[0])
    assert read_backup(settings, names[0], "x.txt") is None
    assert snapshot(repo) == states[3]


def test_order_survives_a_clock_going_back_and_foreign_folders(repo, settings, monkeypatch):
    from datetime import datetime

    write(repo, "x.txt", "0\n")
    first = step(settings, "x.txt", "0", "1")
    (settings.state.backups / "zz-not-ours").mkdir()
    (settings.state.backups / "zz-not-ours" / "keep.txt").write_text("mine\n")

    class Past(datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime(2001, 1, 1)

    monkeypatch.setattr(records, "datetime", Past)
    second = step(settings, "x.txt", "1", "2")
    assert second > first
    assert undo_last(settings).patch == second
    assert undo_last(settings).patch == first
    assert (settings.state.backups / "zz-not-ours" / "keep.txt").read_text() == "mine\n"


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("apply"), st.sampled_from(["a", "b", "c", "d"]), st.booleans()),
        st.just(("undo",)),
        st.just(("redo",)),
    ),
    min_size=1,
    max_size=10,
)


@given(OPS)
@hyp_settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_undo_and_redo_follow_a_plain_two_stack_model(tmp_path_factory, ops):
    """Random apply / undo / redo sequences against a list-based model of the two stacks."""
    with scratch_root(tmp_path_factory.mktemp("model")) as root:
        repo = root / "repo"
        repo.mkdir()
        s = load_settings(repo, environ={})
        write(repo, "f.txt", "start\n")
        write(repo, "g.txt", "g\n")
        applied: list[dict] = []
        undone: list[dict] = []
        for op in ops:
            if op[0] == "apply":
                _, word, touch_g = op
                old = (repo / "f.txt").read_text().strip()
                if old == word:
                    continue
                body = ["*** Update File: f.txt", f"-{old}", f"+{word}"]
                if touch_g:
                    g = (repo / "g.txt").read_text().strip()
                    body += ["*** Update File: g.txt", f"-{g}", f"+{g}{word}"]
                before = snapshot(repo)
                commit_plan(plan_patch_text(patch(*body), s), s)
                applied.append(before)
                undone.clear()
            elif op[0] == "undo":
                if not applied:
                    with pytest.raises(PatchError, match="Nothing to undo"):
                        undo_last(s)
                    continue
                now = snapshot(repo)
                undo_last(s)
                assert snapshot(repo) == applied.pop()
                undone.append(now)
            else:
                if not undone:
                    with pytest.raises(PatchError, match="Nothing to redo"):
                        redo_last(s)
                    continue
                now = snapshot(repo)
                redo_last(s)
                assert snapshot(repo) == undone.pop()
                applied.append(now)
        states = [e.undone for e in history(s)]
        assert states.count(False) == len(applied)
