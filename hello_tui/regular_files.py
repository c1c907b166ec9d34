"""Reading a file a repository names: a regular file, a bounded number of bytes, never blocking.

A repository decides what a name is. `AGENTS.md -> /dev/zero` would be read until
memory runs out, a FIFO would never answer, and `/proc/self/environ` is a regular
file holding the app's own environment (the model's key): so callers also judge
where a name leads before they read it. This is the read itself, in one place,
at the bottom of the layers so that every part that reads a repository's file
at start-up (settings, prompts, MCP config, AGENTS.md) can use it.
"""

from __future__ import annotations

import os
import stat


class NotARegularFile(OSError):
    """The name leads to a FIFO, a device, a folder or a socket, or the file is too big."""


def read_regular_file(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of `path` when it is a regular file of at most `limit` bytes; OSError
    otherwise (NotARegularFile for what it leads to). Opening does not wait on a FIFO."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotARegularFile(f"{os.fspath(path)} is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise NotARegularFile(f"{os.fspath(path)} is larger than {limit} bytes")
    return data


def leads_inside(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """`path`, followed through every link, is inside `folder` (followed too)."""
    real, root = os.path.realpath(path), os.path.realpath(folder)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)
