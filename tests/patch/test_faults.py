"""Faults: ENOSPC and EIO at every write point, and corrupt journals and manifests at every step.

Faults are injected through the durable write hook (not a real full disk):
ENOSPC the way a full disk fails (every later step needing new blocks fails
too), EIO once, or EIO for good (then even rolling back fails, and the next
command must finish it). Corruption is garbage, truncation, or a valid-looking
record with a wrong checksum, written over the journal or the manifest after
a kill at every write point. After the next command the tree is exactly before
or after, nothing committed is lost, nothing damaged is deleted, no traceback.
"""

from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hello_tui.config import Settings
from hello_tui.patch import records, undo_last

from .conftest import snapshot
from .crashkit import Fault, count_points, hook, leftovers, next_command, run_killed, scratch_root
from .test_crash import P0, PATCH, Q, World, apply_text, commit_index, without_q

ONE_LINE = re.compile(
    r"error: (no space left on device|input/output error) while writing (\S.*); "
    r"nothing was changed"
)


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Iterator[World]:
    with scratch_root(tmp_path_factory.mktemp("faults")) as root:
        yield World(root)


def assert_clean(repo: Path, settings: Settings) -> None:
    assert not leftovers(repo), leftovers(repo)
    assert not records.journal_path(settings).exists()
    assert all(records.is_committed(f) for f in records.record_folders(settings))
    assert not (settings.state.root / records.TRASH).exists() or not os.listdir(
        settings.state.root / records.TRASH
    )


def _labels(world: World, template: Path, argv: tuple[str, ...]) -> list[str]:
    _, settings = world.copy(template)
    fault = Fault(at=10**9)
    with hook(fault):
        ran = next_command(argv[0], "--repo", str(settings.repo), *argv[1:], stdin=PATCH)
    assert ran.code == 0, ran.err
    return fault.seen


CASES = {
    # command, setup, tree before, tree after
    "apply": (("apply", "--yes", "-"), "p0", "s1", "s2"),
    "undo": (("undo",), "p0p", "s2", "s1"),
    "redo": (("redo",), "p0pu", "s1", "s2"),
}
SETUPS = {
    "p0": lambda s: apply_text(s, P0),
    "p0p": lambda s: (apply_text(s, P0), apply_text(s, PATCH)),
    "p0pu": lambda s: (apply_text(s, P0), apply_text(s, PATCH), undo_last(s)),
}


@pytest.mark.parametrize("command", sorted(CASES))
@pytest.mark.parametrize(
    "kind", ["enospc", "eio once", "eio for good"], ids=["ENOSPC", "EIO-once", "EIO-for-good"]
)
def test_fault_at_every_write_point(world: World, command: str, kind: str):
    argv, setup, before_key, after_key = CASES[command]
    template = world.template(f"{command}_{kind}", SETUPS[setup])
    before, after = getattr(world, before_key), getattr(world, after_key)
    labels = _labels(world, template, argv)
    # The commit point: the replace of the COMMITTED marker (staged, fsynced, before).
    cut = labels.index(
        next(
            lab
            for lab in labels
            if lab.startswith("replace ") and lab.endswith("/" + records.COMMITTED)
        )
    )
    assert cut > 0
    for n in range(1, len(labels) + 1):
        repo, settings = world.copy(template)
        fault = Fault(
            at=n,
            errno_=errno.ENOSPC if kind == "enospc" else errno.EIO,
            sticky=kind != "eio once",
        )
        with hook(fault):
            ran = next_command(argv[0], "--repo", str(repo), *argv[1:], stdin=PATCH)
        where = f"{kind} at {labels[n - 1]} (#{n})"
        state = snapshot(repo)
        if n > cut + 1:  # after the commit marker's replace: the command succeeded
            assert ran.code == 0, (where, ran.err)
            assert state == after, where
        elif kind == "eio for good" and ran.code == 1 and "rolling back failed too" in ran.err:
            # Even the roll-back could not write: the next command finishes it.
            assert len(ran.err.strip().splitlines()) == 1, ran.err
            ran2 = next_command("history", "--repo", str(repo))
            assert ran2.code == 0
            ran2 = next_command("recover", "--repo", str(repo))
            assert ran2.code == 0, (where, ran2.out, ran2.err)
            assert snapshot(repo) == before, where
        else:
            assert ran.code == 1, (where, ran.out, ran.err)
            assert len(ran.err.strip().splitlines()) == 1, (where, ran.err)
            assert ONE_LINE.fullmatch(ran.err.strip()), (where, ran.err)
            assert state == before, where
        next_command("recover", "--repo", str(repo))
        assert snapshot(repo) in (before, after)
        assert_clean(repo, settings)


def test_enospc_message_names_the_file_being_written(world: World):
    template = world.template("enospc_name", SETUPS["p0"])
    labels = _labels(world, template, ("apply", "--yes", "-"))
    n = labels.index("open bin/run.sh") + 1
    repo, _ = world.copy(template)
    with hook(Fault(at=n)):
        ran = next_command("apply", "--repo", str(repo), "--yes", "-", stdin=PATCH)
    assert ran.code == 1
    assert ran.err.strip() == (
        "error: no space left on device while writing bin/run.sh; nothing was changed"
    )
    assert snapshot(repo) == world.s1


# ---- corrupt records ------------------------------------------------------------------


def _garbage(raw: bytes) -> bytes:
    return os.urandom(max(16, len(raw) // 3))


def _truncated(raw: bytes) -> bytes:
    return raw[: len(raw) // 2]


def _wrong_checksum(raw: bytes) -> bytes:
    data = json.loads(raw)
    data["created_at"] = "1999-01-01T00:00:00"  # still valid JSON, checksum no longer matches
    return json.dumps(data).encode()


CORRUPTIONS = {"garbage": _garbage, "truncated": _truncated, "wrong checksum": _wrong_checksum}


def _newest_folder(settings: Settings) -> Path | None:
    folders = records.record_folders(settings)
    return folders[-1] if folders else None


def _points_where_it_exists(labels: list[str], target: str) -> list[int]:
    """Kill points (1-based) after which the record to corrupt exists on disk."""
    name = "/" + (records.JOURNAL if target == "journal" else records.MANIFEST)
    numbered = list(enumerate(labels, 1))
    written = next(i for i, lab in numbered if lab.startswith("replace ") and lab.endswith(name))
    last = len(labels)
    if target == "journal":
        last = next(i for i, lab in numbered if lab.startswith("remove ") and lab.endswith(name))
    return list(range(written + 1, last + 1))


@pytest.mark.parametrize("target", ["journal", "manifest"])
@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_corrupt_record_after_a_kill_at_every_point(world: World, target: str, corruption: str):
    template = world.template(f"corrupt_{target}_{corruption}", SETUPS["p0"])
    _, probe = world.copy(template)
    labels = count_points(lambda: apply_text(probe, PATCH))
    cut = commit_index(labels)
    damaged_any = 0
    for n in _points_where_it_exists(labels, target):
        repo, settings = world.copy(template)
        old_folder = _newest_folder(settings)
        assert run_killed(lambda s=settings: apply_text(s, PATCH), n).killed
        committed = n > cut
        folder = _newest_folder(settings)
        journal_open = records.journal_path(settings).exists()
        victim = (
            records.journal_path(settings)
            if target == "journal"
            else (folder / records.MANIFEST if folder and folder != old_folder else None)
        )
        if victim is None or not victim.exists():
            continue
        victim.write_bytes(CORRUPTIONS[corruption](victim.read_bytes()))
        damaged_any += 1
        where = f"{corruption} {target} after a kill at {labels[n - 1]} (#{n})"
        ran = next_command("apply", "--repo", str(repo), "--yes", "-", stdin=Q)
        assert ran.code == 0, (where, ran.err)
        assert without_q(snapshot(repo)) == (world.s2 if committed else world.s1), where
        assert not leftovers(repo) and not records.journal_path(settings).exists(), where
        if committed:
            assert folder is not None and records.is_committed(folder), "committed backup lost"
        elif target == "manifest":
            # never journaled or rolled back: its damaged record is kept, set aside
            kept = settings.state.root / records.SET_ASIDE / folder.name
            assert journal_open or kept.is_dir(), where
        # undo steps back Q, then the killed patch (or P0) — never past a damaged record
        assert next_command("undo", "--repo", str(repo)).code == 0
        assert snapshot(repo) == (world.s2 if committed else world.s1), where
        ran = next_command("undo", "--repo", str(repo))
        lost = committed and target == "manifest" and not journal_open
        if lost:
            assert ran.code == 1 and folder.name in ran.err, (where, ran.err)
            assert len(ran.err.strip().splitlines()) == 1
            assert snapshot(repo) == world.s2, "undo skipped a damaged record"
            assert folder.is_dir(), "a damaged record was deleted"
        else:
            assert ran.code == 0, (where, ran.err)
            assert snapshot(repo) == (world.s1 if committed else world.s0), where
    assert damaged_any >= 5


def test_both_records_damaged_blocks_with_one_line_and_deletes_nothing(world: World):
    template = world.template("both", SETUPS["p0"])
    _, probe = world.copy(template)
    labels = count_points(lambda: apply_text(probe, PATCH))
    middle = next(i for i, lab in enumerate(labels, 1) if lab == "replace bin/run.sh") + 1
    repo, settings = world.copy(template)
    assert run_killed(lambda: apply_text(settings, PATCH), middle).killed
    mixed = snapshot(repo)
    folder = _newest_folder(settings)
    assert folder is not None
    (folder / records.MANIFEST).write_bytes(b"{garbage")
    records.journal_path(settings).write_bytes(b"\x00\x01")
    contents = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))
    for argv in (("apply", "--yes", "-"), ("undo",), ("redo",), ("apply", "--dry-run", "-")):
        ran = next_command(argv[0], "--repo", str(repo), *argv[1:], stdin=Q)
        assert ran.code == 1, (argv, ran.err)
        assert len(ran.err.strip().splitlines()) == 1
        assert folder.relative_to(repo).as_posix() in ran.err
        assert snapshot(repo) == mixed
    ran = next_command("recover", "--repo", str(repo))
    assert ran.code == 1 and "blocked:" in ran.out and folder.name in ran.out
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) == contents
    assert records.journal_path(settings).exists()
    # The user moves the folder out of the way: the files stay as they are, writes work again.
    (settings.state.root / "kept").mkdir()
    folder.rename(settings.state.root / "kept" / folder.name)
    ran = next_command("apply", "--repo", str(repo), "--yes", "-", stdin=Q)
    assert ran.code == 0, ran.err
    assert (settings.state.root / records.SET_ASIDE).is_dir()


def test_damaged_backup_file_blocks_the_rollback_but_recover_restores_the_rest(world: World):
    template = world.template("badbak", SETUPS["p0"])
    _, probe = world.copy(template)
    labels = count_points(lambda: apply_text(probe, PATCH))
    before_commit = commit_index(labels)
    repo, settings = world.copy(template)
    assert run_killed(lambda: apply_text(settings, PATCH), before_commit).killed
    folder = _newest_folder(settings)
    assert folder is not None
    bak = folder / "a.txt.bak"
    os.unlink(bak)
    bak.write_bytes(b"not what was there\n")
    ran = next_command("undo", "--repo", str(repo))
    assert ran.code == 1 and "a.txt.bak" in ran.err and "does not match its sha256" in ran.err
    assert snapshot(repo) == world.s2  # every file written, nothing changed since
    ran = next_command("recover", "--repo", str(repo))
    assert ran.code == 1
    assert "done: put back bin/run.sh, new/deep/c.txt, d.txt, moved/f.txt, e.txt" in ran.out
    state = snapshot(repo)
    assert state["a.txt"] == b"A\n"  # its backup cannot be verified: left as the patch wrote it
    assert state["bin/run.sh"] == b"echo old\n" and state["d.txt"] == b"d\n"
    assert bak.exists() and folder.is_dir()
