"""Atomic text writes for hello-tui's own state files (sessions, todos, notes).

A temp file in the same folder, fsync, then os.replace: a reader (or a crash)
sees the old file or the new one, never half of either.

The temp file is made here rather than with `tempfile.mkstemp`, whose import (and
`random`'s behind it) every applied patch paid for its note: an unpredictable name,
created with O_EXCL and O_NOFOLLOW, readable by the user only, as mkstemp does.
"""

from __future__ import annotations

import os
from pathlib import Path

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_ATTEMPTS = 32


def _open_temp(path: Path) -> tuple[int, Path]:
    for _ in range(_ATTEMPTS):
        tmp = path.with_name(f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, _FLAGS, 0o600), tmp
        except FileExistsError:
            continue  # a name someone planted (perhaps a symlink): never touched
    raise FileExistsError(f"no fresh temporary name for {path}")


def write_text_atomic(path: Path, text: str, *, sync: bool = True) -> None:
    """`sync` False for a cache that is checked when read and rebuilt when wrong: a crash
    may then leave it empty or old, never half of one version (the rename is atomic)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _open_temp(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
