"""The order of a transaction's durable steps, as the disk sees them.

fsyncs are grouped (several files, or several folders, synced at once), so this
holds the order that makes a crash safe: the backups, the attachments and the
manifest durable (their folders synced) before the journal is in place, the
journal's folder synced before the first file of the tree is replaced, each file
synced before its name is replaced, the tree's folders synced before the commit
marker is in place, the marker synced before it is, and its folder after.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from hello_tui.patch import commit_plan, durable, plan_patch_text, records

from .conftest import write

PATCH = """*** Begin Patch
*** Update File: a.txt
@@
-a
+A
*** Update File: sub/b.txt
@@
-b
+B
*** Add File: new/c.txt
+c
*** End Patch
"""


def _record(monkeypatch) -> list[tuple[str, str]]:
    """(step, real path) of every fsync, replace, link and unlink, in the order they ended."""
    events: list[tuple[str, str]] = []
    lock = threading.Lock()
    real = {name: getattr(os, name) for name in ("fsync", "replace", "link", "unlink")}

    def note(step: str, path: str) -> None:
        with lock:
            events.append((step, os.path.realpath(path)))

    def fsync(fd: int) -> None:
        path = os.readlink(f"/proc/self/fd/{fd}")
        real["fsync"](fd)
        note("fsync", path)

    def replace(src, dst) -> None:
        src_path = os.path.realpath(src)
        real["replace"](src, dst)
        note("replace", str(dst))
        note("replaced-from", src_path)

    def link(src, dst, **kwargs) -> None:
        real["link"](src, dst, **kwargs)
        note("link", str(dst))

    def unlink(path, **kwargs) -> None:
        real_path = os.path.realpath(path)
        real["unlink"](path, **kwargs)
        note("unlink", real_path)

    for name, fn in (("fsync", fsync), ("replace", replace), ("link", link), ("unlink", unlink)):
        monkeypatch.setattr(durable.os, name, fn)
    return events


def _first(events: list[tuple[str, str]], step: str, path: Path) -> int:
    return events.index((step, os.path.realpath(path)))


def _synced_between(events: list[tuple[str, str]], path: Path, lo: int, hi: int) -> bool:
    return ("fsync", os.path.realpath(path)) in events[lo + 1 : hi]


def _temp_of(events: list[tuple[str, str]], target: Path) -> str:
    """The temp file that replaced `target`."""
    i = _first(events, "replace", target)
    assert events[i + 1][0] == "replaced-from"
    return events[i + 1][1]


def test_durable_steps_keep_the_crash_safe_order(repo, settings, monkeypatch):
    write(repo, "a.txt", "a\n")
    write(repo, "sub/b.txt", "b\n")
    plan = plan_patch_text(PATCH, settings)
    events = _record(monkeypatch)
    result = commit_plan(plan, settings)
    monkeypatch.undo()
    assert result.backup_dir is not None
    folder = repo / result.backup_dir
    journal = records.journal_path(settings)
    journal_at = _first(events, "replace", journal)
    tree = [repo / "a.txt", repo / "sub/b.txt", repo / "new/c.txt"]
    first_tree_write = min(_first(events, "replace", p) for p in tree)
    last_tree_write = max(_first(events, "replace", p) for p in tree)

    # Before the journal: the backups linked, the attachments and the manifest synced and
    # in place, and every folder they were written in synced after that.
    for bak in (folder / "a.txt.bak", folder / "sub/b.txt.bak"):
        assert _first(events, "link", bak) < journal_at
    for record in (folder / records.MANIFEST, folder / "patch.txt"):
        placed = _first(events, "replace", record)
        assert _first(events, "fsync", Path(_temp_of(events, record))) < placed < journal_at
    manifest_at = _first(events, "replace", folder / records.MANIFEST)
    for d in (folder, folder / "sub", settings.state.backups):
        assert _synced_between(events, d, manifest_at, journal_at)
    assert _first(events, "fsync", Path(_temp_of(events, journal))) < journal_at

    # The journal durable before the tree changes.
    assert _synced_between(events, journal.parent, journal_at, first_tree_write)

    # Each file of the tree synced before its name is replaced; its folder after all are.
    for p in tree:
        assert _first(events, "fsync", Path(_temp_of(events, p))) < _first(events, "replace", p)
    committed = folder / records.COMMITTED
    commit_at = _first(events, "replace", committed)
    for d in (repo, repo / "sub", repo / "new"):
        assert _synced_between(events, d, last_tree_write, commit_at)

    # The commit point: the marker synced before it is in place, its folder after; then
    # the journal is closed.
    assert _first(events, "fsync", Path(_temp_of(events, committed))) < commit_at
    closed = _first(events, "unlink", journal)
    assert _synced_between(events, folder, commit_at, closed)
    assert committed.read_bytes()
    assert not journal.exists()


def test_grouped_folder_syncs_report_a_real_io_error(tmp_path, monkeypatch):
    import errno

    import pytest

    def fsync(fd: int) -> None:
        raise OSError(errno.EIO, "input/output error")

    monkeypatch.setattr(durable.os, "fsync", fsync)
    with pytest.raises(durable.WriteError) as info:
        durable.sync_dirs([tmp_path, tmp_path], what="the folder")
    assert info.value.what == "the folder" and info.value.errno == errno.EIO


def test_staged_files_are_synced_and_left_under_their_temp_names(tmp_path):
    target = tmp_path / "marker"
    staged = durable.write_files([], stage_also=[durable.FileWrite(target, b"x", what="m")])
    assert not target.exists() and [p.name for p in tmp_path.iterdir()] == [staged[0].tmp.name]
    staged[0].place()
    assert target.read_bytes() == b"x" and [p.name for p in tmp_path.iterdir()] == ["marker"]
    other = durable.write_files([], stage_also=[durable.FileWrite(target, b"y", what="m")])
    other[0].discard()
    assert target.read_bytes() == b"x" and [p.name for p in tmp_path.iterdir()] == ["marker"]
