"""Removing a folder tree that a command built, however it built it.

A command may leave a tree in its private HOME or TMPDIR that `shutil.rmtree` cannot
remove: thousands of levels deep (Python 3.11's rmtree recurses, and paths that deep are
longer than PATH_MAX), folders without write or search permission, names that are not
UTF-8. `remove_contents` walks with one directory descriptor at a time, relative to it
(`openat`, `unlinkat`), climbing back through `..`, so neither the stack, the descriptor
table nor the path length grows with the depth. Links are removed, never followed. What
cannot be removed (a busy mount point) is left and skipped, so the walk always ends.

The folders it is used on belong to commands that have ended: every process of theirs
is gone (the spawner's PID namespace or its subreaper), so nothing moves the tree while
it is walked.
"""

from __future__ import annotations

import contextlib
import os
import stat

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_contents(folder: str | os.PathLike[str]) -> None:
    """Empty `folder` (keeping it); never raises for what is inside."""
    try:
        top = os.open(folder, _DIR_FLAGS)
    except OSError:
        return
    skipped: set[tuple[int, int]] = set()
    names: list[str] = []  # the path from `folder` down to the current directory
    current = top
    try:
        while True:
            child = _clear_files(current, skipped)
            if child is not None:
                entered = _enter(current, child, skipped)
                if entered is not None:  # only the current folder is held open
                    names.append(child)
                    os.close(current)
                    current = entered
                continue
            if not names:
                return
            parent = os.open("..", _DIR_FLAGS, dir_fd=current)
            name = names.pop()
            os.close(current)
            current = parent
            try:
                os.rmdir(name, dir_fd=current)
            except OSError:
                with contextlib.suppress(OSError):
                    st = os.stat(name, dir_fd=current, follow_symlinks=False)
                    skipped.add((st.st_dev, st.st_ino))
    except OSError:
        return  # the tree changed under us after all: leave the rest
    finally:
        os.close(current)


def remove_tree(folder: str | os.PathLike[str]) -> None:
    """Remove `folder` and everything in it; never raises."""
    remove_contents(folder)
    with contextlib.suppress(OSError):
        os.rmdir(folder)


def _clear_files(directory: int, skipped: set[tuple[int, int]]) -> str | None:
    """Unlink every non-folder in `directory`; the name of a folder still to empty, if any."""
    _allow_changes(directory)
    with os.scandir(directory) as entries:
        listed = [(e.name, e.is_dir(follow_symlinks=False), e.inode()) for e in entries]
    device = os.fstat(directory).st_dev
    for name, is_dir, inode in listed:
        if (device, inode) in skipped:
            continue
        if is_dir:
            return name
        try:
            os.unlink(name, dir_fd=directory)
        except OSError:
            skipped.add((device, inode))
    return None


def _enter(directory: int, name: str, skipped: set[tuple[int, int]]) -> int | None:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=directory)
    except PermissionError:  # a folder its command made unreadable: it was ours to begin with
        with contextlib.suppress(OSError):
            os.chmod(name, stat.S_IRWXU, dir_fd=directory)
            return os.open(name, _DIR_FLAGS, dir_fd=directory)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        st = os.stat(name, dir_fd=directory, follow_symlinks=False)
        skipped.add((st.st_dev, st.st_ino))
    return None


def _allow_changes(directory: int) -> None:
    """Give the owner write and search permission, which removing the entries needs."""
    with contextlib.suppress(OSError):
        mode = os.fstat(directory).st_mode
        if mode & stat.S_IRWXU != stat.S_IRWXU:
            os.fchmod(directory, mode | stat.S_IRWXU)
