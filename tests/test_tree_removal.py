"""Removing what a command left: any depth, any permissions, links never followed."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from hello_tui.core.tree_removal import remove_contents, remove_tree


def deep(root, levels: int) -> None:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):  # relative steps: the full path is far past PATH_MAX
        os.mkdir("d" * 200, dir_fd=fd)
        inner = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    with open(os.open("planted", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
        f.write("x")
    os.close(fd)


def test_a_tree_deeper_than_the_stack_and_path_max_is_emptied(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    deep(home, max(3000, sys.getrecursionlimit() + 100))
    with pytest.raises((RecursionError, OSError)):
        shutil.rmtree(home / ("d" * 200))  # what the command's folder was emptied with
    remove_contents(home)
    assert home.is_dir() and os.listdir(home) == []
    assert open_below(home) == []


def open_below(folder) -> list[str]:
    """This process's descriptors on the folder or anything in it: none may stay open.

    Counting descriptors would race with other threads of the test process; where each
    one points does not."""
    inside = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile, or the listing's own descriptor
            continue
        if target == str(folder) or target.startswith(f"{folder}/"):
            inside.append(target)
    return inside


def test_locked_folders_go_and_links_are_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    home = tmp_path / "home"
    (home / "locked" / "inner").mkdir(parents=True)
    (home / "locked" / "inner" / "f").write_text("x")
    (home / "to-outside").symlink_to(outside)
    (home / "locked" / "link").symlink_to(outside / "keep.txt")
    os.chmod(home / "locked" / "inner", 0)
    os.chmod(home / "locked", 0o500)
    remove_tree(home)
    assert not home.exists()
    assert (outside / "keep.txt").read_text() == "keep\n"


def test_a_missing_folder_is_nothing_to_do(tmp_path):
    remove_contents(tmp_path / "missing")
    remove_tree(tmp_path / "missing")
