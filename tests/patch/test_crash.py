"""Crash safety: apply, undo, redo and recovery killed with SIGKILL at every write point.

Each run kills a real child process at write point N, then runs the next
command a user would run (apply, undo or redo, through the real CLI entry
point). The tree must then be exactly the state before the killed command or
the state after it — which one is decided by whether the kill came after the
commit point — never a mix; no temp file, no open journal, no uncommitted
folder may be left, no committed backup may be lost, and no traceback shown.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hello_tui.config import Settings, load_settings
from hello_tui.patch import commit_plan, plan_patch_text, records, recover, redo_last, undo_last

from .conftest import snapshot, write
from .crashkit import count_points, leftovers, next_command, run_killed, scratch_root

# A real child process, killed at the n-th write point of the tree phase (a file
# replaced or removed). Other test modules start from it: keep its interface.
CHILD = r"""
import os, signal, sys
from hello_tui.config import load_settings
from hello_tui.patch import commit_plan, durable, plan_patch_text

kill_at = int(sys.argv[2])
state_dir = ".helloagents"
seen = []

def hook(label):
    verb, _, what = label.partition(" ")
    if verb in ("replace", "remove") and not what.startswith(state_dir):
        seen.append(label)
        if len(seen) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

durable.WRITE_POINT_HOOK = hook
settings = load_settings(sys.argv[1], environ={})
commit_plan(plan_patch_text(sys.stdin.read(), settings), settings)
print("points:", len(seen))
"""

PATCH = """*** Begin Patch
*** Update File: a.txt
@@
-a
+A
*** Update File: bin/run.sh
@@
-echo old
+echo new
*** Add File: new/deep/c.txt
+c
*** Delete File: d.txt
*** Update File: e.txt
*** Move to: moved/f.txt
@@
-e
+E
*** End Patch
"""
P0 = "*** Begin Patch\n*** Update File: z.txt\n@@\n-z\n+Z0\n*** End Patch\n"
Q = "*** Begin Patch\n*** Add File: q.txt\n+q\n*** End Patch\n"


def make_repo(root: Path) -> Path:
    root.mkdir()
    write(root, "a.txt", "a\n")
    os.chmod(write(root, "bin/run.sh", "echo old\n"), 0o755)
    write(root, "d.txt", "d\n")
    write(root, "e.txt", "e\n")
    write(root, "z.txt", "z\n")
    return root


def apply_text(settings: Settings, text: str) -> None:
    commit_plan(plan_patch_text(text, settings), settings)


def expected_after(tmp_path: Path) -> dict:
    repo = make_repo(tmp_path / "reference")
    settings = load_settings(repo, environ={})
    apply_text(settings, PATCH)
    return snapshot(repo)


class World:
    """Reference trees and prepared starting points, built once per test."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.s0 = self._state([])
        self.s1 = self._state([P0])
        self.s2 = self._state([P0, PATCH])
        self.s3 = self._state([PATCH])
        self.n = 0

    def _state(self, texts: list[str]) -> dict:
        repo = make_repo(self.root / f"ref{len(texts)}_{abs(hash(tuple(texts)))}")
        settings = load_settings(repo, environ={})
        for t in texts:
            apply_text(settings, t)
        return snapshot(repo)

    def template(self, name: str, setup: Callable[[Settings], None]) -> Path:
        repo = make_repo(self.root / f"template_{name}")
        setup(load_settings(repo, environ={}))
        return repo

    def copy(self, template: Path) -> tuple[Path, Settings]:
        self.n += 1
        repo = self.root / f"run{self.n}"
        shutil.copytree(template, repo, symlinks=True)
        return repo, load_settings(repo, environ={})


def without_q(state: dict) -> dict:
    return {k: v for k, v in state.items() if k != "q.txt"}


def committed_folders(settings: Settings) -> set[str]:
    return {f.name for f in records.record_folders(settings) if records.is_committed(f)}


def assert_clean(repo: Path, settings: Settings) -> None:
    assert not leftovers(repo), leftovers(repo)
    assert not records.journal_path(settings).exists()
    assert all(records.is_committed(f) for f in records.record_folders(settings))


def commit_index(labels: list[str]) -> int:
    """1-based index of the commit point: the replace of the COMMITTED marker."""
    for i, label in enumerate(labels, 1):
        if label.startswith("replace ") and label.endswith("/" + records.COMMITTED):
            return i
    raise AssertionError("no commit point among the write points")


NEXT = {
    "apply": ("apply", "--yes", "-"),
    "undo": ("undo",),
    "redo": ("redo",),
}


def record_index(labels: list[str]) -> int:
    """1-based index of the write point that puts the transaction's manifest in place."""
    for i, label in enumerate(labels, 1):
        if label.startswith("replace ") and label.endswith("/" + records.MANIFEST):
            return i
    raise AssertionError("no manifest among the write points")


def run_matrix(
    world: World,
    template: Path,
    action: Callable[[Settings], object],
    expect: dict[str, tuple[dict, dict]],
    before_record: dict[str, dict] | None = None,
) -> list[bool]:
    """Kill `action` at every write point; after each, run every next command of `expect`.

    expect[next] = (tree if the killed action rolled back, tree if it committed);
    before_record[next], when given: the tree if it was killed before its manifest existed.
    """
    _, probe = world.copy(template)
    labels = count_points(lambda: action(probe))
    cut = commit_index(labels)
    recorded = record_index(labels)
    outcomes = []
    for n in range(1, len(labels) + 1):
        for cmd, (if_rolled_back, if_committed) in expect.items():
            if n <= recorded and cmd in (before_record or {}):
                if_rolled_back = (before_record or {})[cmd]
            repo, settings = world.copy(template)
            kept = committed_folders(settings)
            run = run_killed(lambda s=settings: action(s), n)
            assert run.killed, f"point {n} ({labels[n - 1]}) was not reached: {run.outcome}"
            committed = n > cut
            ran = next_command(*NEXT[cmd][:1], "--repo", str(repo), *NEXT[cmd][1:], stdin=Q)
            state = snapshot(repo)
            want = if_committed if committed else if_rolled_back
            if cmd == "apply":
                assert ran.code == 0, (n, labels[n - 1], ran.err)
                assert (repo / "q.txt").read_text() == "q\n"
                state = without_q(state)
            assert state == want, f"after a kill at {labels[n - 1]} (#{n}) and `{cmd}`: {ran.err}"
            assert_clean(repo, settings)
            assert kept <= committed_folders(settings), "a committed backup was lost"
            outcomes.append(committed)
    return outcomes


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Iterator[World]:
    with scratch_root(tmp_path_factory.mktemp("crash")) as root:
        yield World(root)


def test_apply_killed_at_every_point_then_apply_undo_redo(world: World):
    after_p0 = world.template("p0", lambda s: apply_text(s, P0))
    outcomes = run_matrix(
        world,
        after_p0,
        lambda s: apply_text(s, PATCH),
        # Undo first after the kill: a rolled-back patch is the undo, P0 stays applied.
        {"apply": (world.s1, world.s2), "undo": (world.s1, world.s1)},
    )
    assert outcomes[0] is False and outcomes[-1] is True
    p0_undone = world.template("p0u", lambda s: (apply_text(s, P0), undo_last(s)))
    run_matrix(world, p0_undone, lambda s: apply_text(s, PATCH), {"redo": (world.s1, world.s3)})


def test_undo_killed_at_every_point_then_apply_undo_redo(world: World):
    applied = world.template("p0p", lambda s: (apply_text(s, P0), apply_text(s, PATCH)))
    run_matrix(
        world,
        applied,
        undo_last,
        {
            "apply": (world.s2, world.s1),
            "undo": (world.s1, world.s0),
            "redo": (world.s2, world.s2),
        },
        # Killed before its record said it was an undo: the next undo only cleans it up.
        before_record={"undo": world.s2},
    )


def test_redo_killed_at_every_point_then_apply_undo_redo(world: World):
    undone = world.template(
        "p0pu", lambda s: (apply_text(s, P0), apply_text(s, PATCH), undo_last(s))
    )
    run_matrix(
        world,
        undone,
        redo_last,
        {
            "apply": (world.s1, world.s2),
            "undo": (world.s1, world.s1),  # a rolled-back redo is the undo
            "redo": (world.s2, world.s2),
        },
    )


@pytest.mark.parametrize("where", ["first tree write", "middle", "before the commit point"])
def test_recovery_killed_at_every_point_is_finished_by_the_next_command(world: World, where):
    base = world.template(f"rec_{where}", lambda s: apply_text(s, P0))
    _, probe = world.copy(base)
    labels = count_points(lambda: apply_text(probe, PATCH))
    tree = _tree_points(labels)
    kill_apply = {
        "first tree write": tree[0] + 1,
        "middle": tree[len(tree) // 2],
        "before the commit point": commit_index(labels),
    }[where]
    # how many write points recovery passes for this interrupted state
    repo, settings = world.copy(base)
    assert run_killed(lambda: apply_text(settings, PATCH), kill_apply).killed
    rec_points = count_points(lambda: recover(settings))
    assert rec_points, "recovery had nothing to do"
    for m in range(1, len(rec_points) + 1):
        repo, settings = world.copy(base)
        assert run_killed(lambda s=settings: apply_text(s, PATCH), kill_apply).killed
        run = run_killed(lambda s=settings: recover(s), m)
        assert run.killed, run.outcome
        second = run_killed(lambda s=settings: recover(s), m)  # killed again, same point or earlier
        assert second.killed or second.outcome == "ok", second.outcome
        ran = next_command("apply", "--repo", str(repo), "--yes", "-", stdin=Q)
        assert ran.code == 0, ran.err
        assert without_q(snapshot(repo)) == world.s1, f"recovery killed at {rec_points[m - 1]}"
        assert_clean(repo, settings)


def _tree_points(labels: list[str]) -> list[int]:
    """1-based indices of the write points that replace or remove a file of the tree."""
    return [
        i
        for i, label in enumerate(labels, 1)
        if label.startswith(("replace ", "remove "))
        and not label.split(" ", 1)[1].startswith(".helloagents")
    ]


def test_recovery_is_idempotent(world: World):
    base = world.template("idem", lambda s: apply_text(s, P0))
    _, probe = world.copy(base)
    middle = _tree_points(count_points(lambda: apply_text(probe, PATCH)))[3]
    repo, settings = world.copy(base)
    assert run_killed(lambda: apply_text(settings, PATCH), middle).killed
    assert snapshot(repo) not in (world.s1, world.s2)
    first = recover(settings)
    assert len(first) == 1 and first[0].startswith("rolled back the interrupted patch ")
    assert snapshot(repo) == world.s1
    assert recover(settings) == []
    assert snapshot(repo) == world.s1


def test_kill_keeps_the_executable_bit_and_is_finished_by_agent_start(tmp_path: Path):
    repo = make_repo(tmp_path / "r")
    before = snapshot(repo)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(repo), "3"],
        input=PATCH,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert snapshot(repo) != before
    ran = next_command("apply", "--repo", str(repo), "--dry-run", "-", stdin=Q)
    assert ran.code == 0 and "recovered: rolled back the interrupted patch" in ran.err
    assert snapshot(repo) == before
    assert stat.S_IMODE(os.stat(repo / "bin/run.sh").st_mode) == 0o755


def test_child_counts_tree_points(tmp_path: Path):
    repo = make_repo(tmp_path / "r")
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(repo), "99"],
        input=PATCH,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    # a.txt, run.sh, c.txt, f.txt replaced; d.txt, e.txt removed
    assert proc.stdout.strip() == "points: 6"
    assert snapshot(repo) == expected_after(tmp_path)


def test_undo_over_a_record_missing_its_marker_reverts_nothing(world: World):
    # PATCH was applied, then its folder lost COMMITTED: undo must not take the newest
    # committed record (P0) for the top and revert it while PATCH stays in the tree.
    applied = world.template("lost_marker", lambda s: (apply_text(s, P0), apply_text(s, PATCH)))
    repo, settings = world.copy(applied)
    newest = records.record_folders(settings)[-1]
    (newest / records.COMMITTED).unlink()
    ran = next_command("undo", "--repo", str(repo))
    assert ran.code == 1
    assert "no COMMITTED marker" in ran.err and newest.name in ran.err
    assert snapshot(repo) == world.s2
    assert newest.is_dir()  # the record is kept for the user to decide
    (newest / records.COMMITTED).write_text("restored by hand\n")  # the way out it names
    assert next_command("undo", "--repo", str(repo)).code == 0
    assert snapshot(repo) == world.s1


def test_undo_first_after_a_kill_mid_commit_says_recovery_was_the_undo(world: World):
    after_p0 = world.template("says", lambda s: apply_text(s, P0))
    _, probe = world.copy(after_p0)
    middle = _tree_points(count_points(lambda: apply_text(probe, PATCH)))[2]
    repo, settings = world.copy(after_p0)
    assert run_killed(lambda: apply_text(settings, PATCH), middle).killed
    ran = next_command("undo", "--repo", str(repo), "--json")
    assert ran.code == 0, ran.err
    payload = json.loads(ran.out)
    assert payload["by_recovery"] is True and payload["status"] == "undone"
    assert any(
        line.startswith("rolled back the interrupted patch") for line in payload["recovered"]
    )
    assert snapshot(repo) == world.s1  # P0 is still applied
    assert next_command("undo", "--repo", str(repo)).code == 0  # and the next undo takes it
    assert snapshot(repo) == world.s0
