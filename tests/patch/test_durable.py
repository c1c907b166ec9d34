"""The write path's own guarantees: temp files, owners, free space, hard-link backups, purity."""

from __future__ import annotations

import itertools
import json
import os
import shutil

import pytest

from hello_tui.config import load_settings
from hello_tui.patch import commit_plan, durable, plan_patch_text, records, space, undo_last
from hello_tui.patch.lines import sha256

from .conftest import snapshot, write
from .crashkit import next_command, run_killed

UPDATE_X = "*** Begin Patch\n*** Update File: x.txt\n@@\n-x\n+X\n*** End Patch\n"


def test_a_planted_temp_symlink_cannot_redirect_an_approved_write(repo, settings, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    write(repo, "x.txt", "x\n")
    os.symlink(outside, repo / ".x.txt.hello-tmp")  # the old, predictable name
    commit_plan(plan_patch_text(UPDATE_X, settings), settings)
    assert outside.read_text() == "precious\n"
    assert (repo / "x.txt").read_text() == "X\n"
    assert os.path.islink(repo / ".x.txt.hello-tmp")  # not ours: left alone


def test_even_a_guessed_temp_name_is_never_followed(repo, settings, tmp_path, monkeypatch):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    write(repo, "x.txt", "x\n")
    tokens = itertools.chain(["aaaaaaaaaaaa", "bbbbbbbbbbbb"], itertools.repeat("cccccccccccc"))
    monkeypatch.setattr(durable, "temp_token", lambda: next(tokens))
    for token in ("aaaaaaaaaaaa", "bbbbbbbbbbbb"):
        os.symlink(outside, repo / f".x.txt.{token}.hello-tmp")
    commit_plan(plan_patch_text(UPDATE_X, settings), settings)
    assert outside.read_text() == "precious\n"
    assert (repo / "x.txt").read_text() == "X\n"
    assert os.path.islink(repo / ".x.txt.aaaaaaaaaaaa.hello-tmp")


def test_recovery_removes_only_temp_files_it_made(repo, settings):
    write(repo, "x.txt", "x\n")
    write(repo, ".x.txt.hello-tmp", "someone else's file\n")
    write(repo, ".x.txt.notours.hello-tmp", "also not ours\n")
    kill = _point(settings, "replace x.txt")
    assert run_killed(
        lambda: commit_plan(plan_patch_text(UPDATE_X, settings), settings), kill
    ).killed
    ours = [p for p in os.listdir(repo) if durable.is_temp_name(p)]
    assert len(ours) == 1
    ran = next_command("recover", "--repo", str(repo))
    assert ran.code == 0 and "had not changed any file yet" in ran.out
    assert sorted(p for p in os.listdir(repo) if p.startswith(".x")) == [
        ".x.txt.hello-tmp",
        ".x.txt.notours.hello-tmp",
    ]


def _point(settings, label: str) -> int:
    """The 1-based write point `label` of committing UPDATE_X on a scratch copy of the repo."""
    scratch = settings.repo.parent / "scratch"
    shutil.copytree(settings.repo, scratch)
    s2 = load_settings(scratch, environ={})
    labels = run_killed(lambda: commit_plan(plan_patch_text(UPDATE_X, s2), s2), None).labels
    shutil.rmtree(scratch)
    return labels.index(label) + 1


needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing owners needs root"
)


@needs_root
def test_as_root_files_keep_their_owner_and_new_ones_take_the_folders(repo, settings):
    path = write(repo, "x.txt", "x\n")
    os.chown(path, 1234, 2345)
    (repo / "sub").mkdir()
    os.chown(repo / "sub", 3456, 4567)
    text = UPDATE_X.replace(
        "*** End Patch",
        "*** Add File: sub/new.txt\n+n\n*** Add File: sub/deep/d.txt\n+d\n*** End Patch",
    )
    commit_plan(plan_patch_text(text, settings), settings)
    st = os.stat(path)
    assert (st.st_uid, st.st_gid) == (1234, 2345)
    assert (os.stat(repo / "sub/new.txt").st_uid, os.stat(repo / "sub/new.txt").st_gid) == (
        3456,
        4567,
    )
    assert os.stat(repo / "sub/deep").st_uid == 3456
    assert os.stat(repo / "sub/deep/d.txt").st_uid == 3456
    undo_last(settings)
    st = os.stat(path)
    assert (st.st_uid, st.st_gid) == (1234, 2345) and path.read_text() == "x\n"


def test_not_enough_free_space_is_refused_before_the_first_write(repo, settings, monkeypatch):
    write(repo, "x.txt", "x\n")
    before = snapshot(repo)
    monkeypatch.setattr(space, "free_bytes", lambda path: 4096)
    ran = next_command("apply", "--repo", str(repo), "-", stdin=UPDATE_X)
    assert ran.code == 1
    assert ran.err.startswith("error: not enough free space to write x.txt")
    assert ran.err.strip().endswith("nothing was changed")
    assert snapshot(repo) == before
    assert records.record_folders(settings) == []


def test_the_space_needed_counts_new_bytes_backups_that_must_be_copied_and_a_margin(
    repo, settings, monkeypatch
):
    big = b"y" * (3 << 20)
    write(repo, "x.txt", "x\n")
    seen: list[int] = []
    real = space.SpaceNeeds.check

    def spy(self, label):
        seen.extend(self.by_device.values())
        return real(self, label)

    monkeypatch.setattr(space.SpaceNeeds, "check", spy)
    text = "*** Begin Patch\n*** Add File: big.txt\n+" + "y" * (3 << 20) + "\n*** End Patch\n"
    commit_plan(plan_patch_text(text, settings), settings)
    assert sum(seen) >= len(big)  # same device here: new bytes plus the records
    monkeypatch.setattr(space, "free_bytes", lambda path: len(big) + space.MARGIN_BYTES // 2)
    ran = next_command("apply", "--repo", str(repo), "-", stdin=text.replace("big.txt", "b2.txt"))
    assert ran.code == 1 and "not enough free space" in ran.err


def test_backups_are_hard_links_unless_the_file_has_other_names(repo, settings):
    a = write(repo, "x.txt", "x\n")
    inode = os.stat(a).st_ino
    b = write(repo, "y.txt", "y\n")
    os.link(b, repo / "y-alias.txt")
    text = UPDATE_X.replace("*** End Patch", "*** Update File: y.txt\n@@\n-y\n+Y\n*** End Patch")
    result = commit_plan(plan_patch_text(text, settings), settings)
    folder = repo / result.backup_dir
    assert os.stat(folder / "x.txt.bak").st_ino == inode  # the old inode, no copy
    assert os.stat(folder / "y.txt.bak").st_ino != os.stat(repo / "y-alias.txt").st_ino
    assert (repo / "y-alias.txt").read_text() == "y\n"
    manifest = records.read_manifest(folder)
    assert [e["before"]["sha256"] for e in manifest["entries"]] == [
        sha256(b"x\n"),
        sha256(b"y\n"),
    ]


def test_planning_never_writes_even_with_an_interrupted_commit(repo, settings):
    write(repo, "x.txt", "x\n")
    kill = _point(settings, "open x.txt")
    assert run_killed(
        lambda: commit_plan(plan_patch_text(UPDATE_X, settings), settings), kill + 1
    ).killed
    journal = records.journal_path(settings)
    assert journal.exists()
    state = snapshot(settings.state.root.parent)
    raw = journal.read_bytes()
    plan_patch_text(UPDATE_X, settings)
    assert journal.read_bytes() == raw
    assert snapshot(settings.state.root.parent) == state


def test_an_unexpected_exception_is_one_line_and_the_traceback_goes_to_the_log(
    repo, settings, monkeypatch
):
    import importlib

    # The module, not the package's `history` function of the same name.
    history_module = importlib.import_module("hello_tui.patch.history")

    def broken(_settings):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(history_module, "history", broken)
    ran = next_command("history", "--repo", str(repo))
    assert ran.code == 1
    lines = ran.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: unexpected RuntimeError: boom")
    log = settings.state.logs / "hello-tui.log"
    assert f"(details in {log})" in lines[0]
    text = log.read_text()
    assert "Traceback" in text and "RuntimeError: boom" in text


def test_recover_with_nothing_to_do(repo):
    ran = next_command("recover", "--repo", str(repo))
    assert ran.code == 0 and ran.out.strip() == "nothing to recover"
    ran = next_command("recover", "--repo", str(repo), "--json")
    payload = json.loads(ran.out)
    assert payload["status"] == "ok" and payload["blocked"] == [] and payload["done"] == []
