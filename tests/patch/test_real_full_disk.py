"""A real full disk: a small tmpfs, filled up before a commit and in the middle of one.

Needs root (to mount); skipped cleanly elsewhere. The middle-of-commit case
fills the filesystem from the write hook at a chosen point, so the kernel's own
ENOSPC hits the next write, and the roll-back must then work on a disk with no
free block at all.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.patch import commit_plan, plan_patch_text, records

from .conftest import snapshot, write
from .crashkit import hook, leftovers, next_command

SIZE = "4m"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder: Path) -> Path:
    """Write a file until the filesystem refuses another byte."""
    filler = folder / "filler.bin"
    chunk = b"\0" * 65536
    with open(filler, "wb", buffering=0) as fh:
        while True:
            try:
                fh.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
        for size in (4096, 512, 1):
            try:
                while True:
                    fh.write(chunk[:size])
            except OSError:
                continue
    return filler


def make(repo: Path) -> str:
    write(repo, "a.txt", "".join(f"a{i}\n" for i in range(1000)))
    write(repo, "b.txt", "".join(f"b{i}\n" for i in range(1000)))
    write(repo, "c.txt", "c\n")
    return (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a500\n+A500\n"
        "*** Add File: new/n.txt\n+" + "n" * 200_000 + "\n"
        "*** Update File: b.txt\n@@\n-b7\n+B7\n*** Delete File: c.txt\n*** End Patch\n"
    )


def test_a_full_disk_is_refused_before_the_first_write(small_disk: Path):
    repo = small_disk / "repo"
    repo.mkdir()
    text = make(repo)
    load_settings(repo, environ={}).state.backups.mkdir(parents=True)
    before = snapshot(repo)
    filler = fill(small_disk)
    ran = next_command("apply", "--repo", str(repo), "--yes", "-", stdin=text)
    assert ran.code == 1 and "not enough free space" in ran.err
    assert len(ran.err.strip().splitlines()) == 1
    assert snapshot(repo) == before and not leftovers(repo)
    filler.unlink()
    assert next_command("apply", "--repo", str(repo), "--yes", "-", stdin=text).code == 0


@pytest.mark.parametrize("when", ["open new/n.txt", "open b.txt", "open a.txt"])
def test_the_disk_filling_up_mid_commit_rolls_back_without_new_space(small_disk: Path, when):
    repo = small_disk / "repo"
    repo.mkdir()
    text = make(repo)
    settings = load_settings(repo, environ={})
    plan = plan_patch_text(text, settings)
    before = snapshot(repo)
    filled: list[Path] = []

    def fill_at(label: str) -> None:
        if label == when and not filled:
            filled.append(fill(small_disk))

    with hook(fill_at):
        try:
            commit_plan(plan, settings)
        except Exception as exc:  # noqa: BLE001 - inspected below
            message = str(exc)
        else:
            message = ""
    assert filled, f"the write point {when} was never reached"
    assert message.startswith("no space left on device while writing "), message
    assert message.endswith("; nothing was changed")
    assert snapshot(repo) == before
    assert not leftovers(repo)
    assert not records.journal_path(settings).exists()
    assert records.record_folders(settings) == []
    filled[0].unlink()
    assert next_command("apply", "--repo", str(repo), "--yes", "-", stdin=text).code == 0
