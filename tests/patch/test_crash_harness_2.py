"""Findings of a randomized crash and fault harness, each pinned as a deterministic case.

The harness ran sequences of patches (text, CRLF, binary, creates, deletes, renames,
mode changes, a setuid file, symlinks beside them) through the real CLI, killed or
failed them at random write points, tampered with the records as a crash could leave
them, and checked after the next command that the tree (bytes and modes) is exactly
before or after, that the exit status agrees, and that the undo stack agrees with it.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from hello_tui.config import Settings, load_settings
from hello_tui.patch import commit_plan, plan_patch_text, records

from .conftest import write
from .crashkit import Fault, count_points, hook, next_command, run_killed, scratch_root


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    with scratch_root(tmp_path) as where:
        yield where


def modes(repo: Path, *names: str) -> dict[str, tuple[bytes, int]]:
    return {n: ((repo / n).read_bytes(), stat.S_IMODE(os.lstat(repo / n).st_mode)) for n in names}


def apply_text(settings: Settings, text: str) -> None:
    commit_plan(plan_patch_text(text, settings), settings)


EDIT_BOTH = (
    "*** Begin Patch\n*** Update File: tool\n@@\n-a\n+b\n"
    "*** Update File: other.txt\n@@\n-x\n+y\n*** End Patch\n"
)


def tool_repo(root: Path, name: str, mode: int, *, second_link: bool = False) -> Path:
    repo = root / name
    os.chmod(write(repo, "tool", "a\n"), mode)
    write(repo, "other.txt", "x\n")
    if second_link:  # a file with two names is backed up as a copy, never a hard link
        os.link(repo / "tool", repo / "tool.alias")
    return repo


def _index(labels: list[str], label: str) -> int:
    return labels.index(label) + 1


@pytest.mark.parametrize("mode", [0o4755, 0o2755, 0o6755], ids=oct)
@pytest.mark.parametrize("second_link", [False, True], ids=["linked-backup", "copied-backup"])
def test_a_rolled_back_patch_keeps_setuid_and_setgid(root: Path, mode: int, second_link: bool):
    # Recovery put the backup back by hard link, then chmod, then chown: as root the
    # chown clears setuid and setgid, so the file came back 0755 with the old bytes.
    probe = tool_repo(root, "probe", mode, second_link=second_link)
    labels = count_points(lambda: apply_text(load_settings(probe, environ={}), EDIT_BOTH))
    kill_at = _index(labels, "replace other.txt")  # tool is written, the commit point not yet
    repo = tool_repo(root, "repo", mode, second_link=second_link)
    settings = load_settings(repo, environ={})
    assert run_killed(lambda: apply_text(settings, EDIT_BOTH), kill_at).killed
    ran = next_command("apply", "--repo", str(repo), "--dry-run", "-", stdin=EDIT_BOTH)
    assert ran.code == 0 and "rolled back the interrupted patch" in ran.err, ran.err
    assert modes(repo, "tool", "other.txt") == {
        "tool": (b"a\n", mode),
        "other.txt": (b"x\n", 0o644),
    }


def test_a_kill_right_after_the_rollback_puts_a_file_back_leaves_its_mode(root: Path):
    # A copied backup is kept with mode 0600. Putting it back linked it into place, then
    # set the mode: killed in between, the file held its old bytes with mode 0600, which
    # the next recovery took for "as before" and left so.
    probe = tool_repo(root, "probe", 0o755, second_link=True)
    labels = count_points(lambda: apply_text(load_settings(probe, environ={}), EDIT_BOTH))
    repo = tool_repo(root, "repo", 0o755, second_link=True)
    settings = load_settings(repo, environ={})
    assert run_killed(lambda: apply_text(settings, EDIT_BOTH), _index(labels, "replace other.txt"))
    target = os.fspath(repo / "tool")
    real_chmod, real_chown = os.chmod, os.chown

    def killed_on_the_target(real):
        def call(path, *args, **kwargs):
            if os.fspath(path) == target:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(path, *args, **kwargs)

        return call

    def recover_killed() -> None:
        os.chmod, os.chown = killed_on_the_target(real_chmod), killed_on_the_target(real_chown)
        next_command("apply", "--repo", str(repo), "--dry-run", "-", stdin=EDIT_BOTH)

    run_killed(recover_killed, None)
    ran = next_command("apply", "--repo", str(repo), "--dry-run", "-", stdin=EDIT_BOTH)
    assert ran.code == 0, ran.err


def test_an_in_process_rollback_after_a_full_disk_keeps_setuid(root: Path):
    repo = tool_repo(root, "repo", 0o4755)
    probe = tool_repo(root, "probe", 0o4755)
    labels = count_points(lambda: apply_text(load_settings(probe, environ={}), EDIT_BOTH))
    fault = Fault(at=[x for x in labels if x != "closed"].index("replace other.txt") + 1)
    with hook(fault):
        ran = next_command("apply", "--repo", str(repo), "--yes", "-", stdin=EDIT_BOTH)
    assert ran.code == 1 and "nothing was changed" in ran.err, ran.err
    assert modes(repo, "tool", "other.txt") == {
        "tool": (b"a\n", 0o4755),
        "other.txt": (b"x\n", 0o644),
    }


def _step_text(old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: a.txt\n@@\n-{old}\n+{new}\n*** End Patch\n"


@pytest.mark.parametrize("then", ["undo", "apply", "redo"])
def test_an_older_record_that_lost_its_marker_is_kept_and_blocks(root: Path, then: str):
    # Recovery took any folder without COMMITTED and without a journal, whose files do
    # not hold what it wrote, for a transaction killed before it touched the tree, and
    # deleted it. A folder older than a committed one cannot be that: here the later
    # patch changed a.txt again, and the deleted folder held the only copy of "a".
    repo = root / "repo"
    write(repo, "a.txt", "a\n")
    settings = load_settings(repo, environ={})
    apply_text(settings, _step_text("a", "b"))
    apply_text(settings, _step_text("b", "c"))
    older = records.record_folders(settings)[0]
    (older / records.COMMITTED).unlink()
    argv = {"undo": ("undo",), "redo": ("redo",), "apply": ("apply", "--yes", "-")}[then]
    ran = next_command(argv[0], "--repo", str(repo), *argv[1:], stdin=_step_text("c", "d"))
    assert ran.code == 1, ran.err
    assert "no COMMITTED marker" in ran.err and older.name in ran.err
    assert (repo / "a.txt").read_bytes() == b"c\n"
    assert older.is_dir() and (older / "a.txt.bak").read_bytes() == b"a\n"
    (older / records.COMMITTED).write_text("put back by hand\n")  # the way out it names
    assert next_command("undo", "--repo", str(repo)).code == 0
    assert next_command("undo", "--repo", str(repo)).code == 0
    assert (repo / "a.txt").read_bytes() == b"a\n"


def test_history_after_a_kill_mid_commit_recovers_first(root: Path):
    # history read the records alone: after a kill with tool written and other.txt not,
    # it listed nothing applied over a tree holding half of the patch.
    probe = tool_repo(root, "probe", 0o755)
    labels = count_points(lambda: apply_text(load_settings(probe, environ={}), EDIT_BOTH))
    repo = tool_repo(root, "repo", 0o755)
    settings = load_settings(repo, environ={})
    assert run_killed(lambda: apply_text(settings, EDIT_BOTH), _index(labels, "replace other.txt"))
    assert (repo / "tool").read_bytes() == b"b\n"  # half of the patch is in the tree
    ran = next_command("history", "--repo", str(repo), "--json")
    assert ran.code == 0, ran.err
    assert modes(repo, "tool", "other.txt") == {
        "tool": (b"a\n", 0o755),
        "other.txt": (b"x\n", 0o644),
    }
    assert not records.journal_path(settings).exists()
    payload = json.loads(ran.out)
    assert payload["history"] == []
    assert [line.split(" 2")[0] for line in payload["recovered"]] == [
        "rolled back the interrupted patch"
    ]
    text = next_command("history", "--repo", str(repo))
    assert text.code == 0 and text.err == ""  # nothing left to recover


def _failing(*prefixes: str):
    """A write hook raising EIO at every write point whose label starts with a prefix."""

    def call(label: str) -> None:
        if label.startswith(prefixes):
            raise OSError(errno.EIO, os.strerror(errno.EIO))

    return call


@pytest.mark.parametrize(
    "fails", ["open .helloagents/journal", "replace other.txt"], ids=["record", "tree"]
)
def test_undo_after_a_failed_apply_whose_folder_could_not_be_moved_undoes_the_patch_below(
    root: Path, fails: str
):
    # The apply failed and said "nothing was changed"; its record folder could not be
    # moved to the trash (the rename failed too) and was left in backups/. The next undo's
    # recovery took it for a crash-interrupted patch and called that the undo: exit 0,
    # "undone", and the patch below it still applied.
    repo = root / "repo"
    write(repo, "a.txt", "a\n")
    write(repo, "tool", "a\n")
    write(repo, "other.txt", "x\n")
    settings = load_settings(repo, environ={})
    apply_text(settings, _step_text("a", "b"))
    with hook(_failing(fails, "rename ")):
        ran = next_command("apply", "--repo", str(repo), "--yes", "-", stdin=EDIT_BOTH)
    assert ran.code == 1 and "nothing was changed" in ran.err, ran.err
    assert [f for f in records.record_folders(settings) if not records.is_committed(f)] == []
    undo = next_command("undo", "--repo", str(repo), "--json")
    assert undo.code == 0, undo.err
    assert json.loads(undo.out)["by_recovery"] is False
    assert modes(repo, "a.txt", "tool", "other.txt") == {
        "a.txt": (b"a\n", 0o644),
        "tool": (b"a\n", 0o644),
        "other.txt": (b"x\n", 0o644),
    }


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_undo_of_a_delete_and_of_a_move_gives_the_file_back_its_owner(root: Path):
    # Undo wrote a removed file again as a new one, which takes its folder's owner: a
    # file of uid 1234 came back root's (a roll-back after a crash already used the
    # owner the manifest records).
    repo = root / "repo"
    for name in ("gone", "mv"):
        path = write(repo, name, f"{name}\n")
        os.chown(path, 1234, 2345)
        os.chmod(path, 0o4750)
    settings = load_settings(repo, environ={})
    apply_text(
        settings,
        "*** Begin Patch\n*** Delete File: gone\n*** Update File: mv\n*** Move to: moved\n"
        "@@\n-mv\n+MV\n*** End Patch\n",
    )
    ran = next_command("undo", "--repo", str(repo))
    assert ran.code == 0, ran.err
    for name in ("gone", "mv"):
        st = os.lstat(repo / name)
        assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1234, 2345, 0o4750), name
    assert not (repo / "moved").exists()


@pytest.mark.parametrize("then", ["apply", "undo", "history"])
def test_a_blocked_recovery_says_what_it_rolled_back_before_it_stopped(root: Path, then: str):
    # Recovery rolls back an interrupted patch, then stops at an older record that lost
    # its marker. The command failed with "nothing was changed" and did not say that
    # recovery had just put tool and other.txt back.
    repo = tool_repo(root, "repo", 0o755)
    write(repo, "a.txt", "a\n")
    settings = load_settings(repo, environ={})
    apply_text(settings, _step_text("a", "b"))
    probe = tool_repo(root, "probe", 0o755)
    labels = count_points(lambda: apply_text(load_settings(probe, environ={}), EDIT_BOTH))
    assert run_killed(lambda: apply_text(settings, EDIT_BOTH), _index(labels, "replace other.txt"))
    older = records.record_folders(settings)[0]
    (older / records.COMMITTED).unlink()
    argv = {"apply": ("apply", "--yes", "-"), "undo": ("undo",), "history": ("history",)}[then]
    ran = next_command(argv[0], "--repo", str(repo), *argv[1:], stdin=_step_text("b", "c"))
    assert ran.code == 1, ran.err
    assert modes(repo, "tool", "other.txt", "a.txt") == {
        "tool": (b"a\n", 0o755),
        "other.txt": (b"x\n", 0o644),
        "a.txt": (b"b\n", 0o644),
    }
    lines = ran.err.splitlines()
    assert lines[0].startswith("recovered: rolled back the interrupted patch "), ran.err
    assert lines[1].startswith("error: ") and "no COMMITTED marker" in lines[1]
    assert older.is_dir()
