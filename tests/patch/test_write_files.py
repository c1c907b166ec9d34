"""durable.write_files: several files' fsyncs issued together, with atomic_write's promise
for each (its data durable before its name is replaced) and nothing of ours left behind
when one of them fails."""

from __future__ import annotations

import errno
import os

import pytest

from hello_tui.patch import durable


def _files(tmp_path, n):
    return [
        durable.FileWrite(tmp_path / f"f{i}.txt", f"new {i}\n".encode(), what=f"f{i}.txt")
        for i in range(n)
    ]


def _ours(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir() if durable.is_temp_name(p.name))


def _record_syncs_and_replaces(monkeypatch) -> list[str]:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(durable.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd)))
    monkeypatch.setattr(
        durable.os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))
    )
    return events


def test_every_file_is_fsynced_before_any_name_is_replaced(tmp_path, monkeypatch):
    for i in range(20):
        (tmp_path / f"f{i}.txt").write_text("old\n")
    events = _record_syncs_and_replaces(monkeypatch)
    durable.write_files(_files(tmp_path, 20))
    assert events == ["fsync"] * 20 + ["replace"] * 20
    assert all((tmp_path / f"f{i}.txt").read_text() == f"new {i}\n" for i in range(20))
    assert _ours(tmp_path) == []


def test_a_failed_fsync_names_its_file_and_replaces_nothing(tmp_path, monkeypatch):
    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text("old\n")
    failing = set()
    real_fsync = os.fsync

    def fsync(fd):
        if os.readlink(f"/proc/self/fd/{fd}").split("/")[-1].startswith(".f3.txt."):
            failing.add(fd)
            raise OSError(errno.EIO, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(durable.os, "fsync", fsync)
    with pytest.raises(durable.WriteError) as caught:
        durable.write_files(_files(tmp_path, 5))
    assert caught.value.what == "f3.txt" and caught.value.describe() == "input/output error"
    assert failing and all((tmp_path / f"f{i}.txt").read_text() == "old\n" for i in range(5))
    assert _ours(tmp_path) == []


def test_stopped_between_two_replaces_the_rest_leaves_no_temp_file(tmp_path, monkeypatch):
    def stop_at(label):
        if label == "replace f2.txt":
            raise KeyboardInterrupt

    monkeypatch.setattr(durable, "WRITE_POINT_HOOK", stop_at)
    with pytest.raises(KeyboardInterrupt):
        durable.write_files(_files(tmp_path, 4))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f0.txt", "f1.txt"]
    assert _ours(tmp_path) == []


def test_batches_bound_the_open_files(tmp_path, monkeypatch):
    monkeypatch.setattr(durable, "WRITE_BATCH", 3)
    events = _record_syncs_and_replaces(monkeypatch)
    durable.write_files(_files(tmp_path, 8))
    batches = [3, 3, 2]
    assert events == [e for n in batches for e in ["fsync"] * n + ["replace"] * n]
    assert len(list(tmp_path.iterdir())) == 8 and _ours(tmp_path) == []
