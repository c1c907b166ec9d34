"""Where a patch may write: repo-relative paths only, never outside, never into .git/ or the state folder.

Refused: empty paths, NUL bytes, absolute paths, `~`, `..` escapes, any `.git`
component, the state folder, a symlinked file, and a symlinked parent folder
that leads outside the repository (or into .git/ or the state folder).
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from hello_tui.patch.types import PatchError


def _refuse(raw: str, why: str) -> PatchError:
    return PatchError(f"Refused path {raw!r}: {why}. Paths are relative to the repository root.")


def _check_parts(raw: str, rel: str, state_dir: str) -> None:
    parts = rel.split("/")
    if ".git" in parts:
        raise _refuse(raw, "nothing inside .git/ may be patched")
    if parts[0] == state_dir:
        raise _refuse(raw, f"the state folder {state_dir}/ is not writable through patches")


def resolve_repo_path(repo: Path, raw: str, state_dir: str) -> tuple[str, Path]:
    """(normalised POSIX relative path, absolute path) for a path named in a patch, or PatchError."""
    if not raw or not raw.strip():
        raise PatchError("Refused an empty path.")
    if "\x00" in raw:
        raise _refuse(raw, "it contains a NUL byte")
    if raw.startswith("~"):
        raise _refuse(raw, "home-relative paths (~) are not allowed")
    if os.path.isabs(raw) or raw.startswith("\\") or (len(raw) > 1 and raw[1] == ":"):
        raise _refuse(raw, "absolute paths are not allowed")
    rel = posixpath.normpath(raw)
    if rel == "." or rel == ".." or rel.startswith("../"):
        raise _refuse(raw, "it points outside the repository")
    _check_parts(raw, rel, state_dir)
    root = Path(os.path.realpath(repo))
    target = root / rel
    if target.is_symlink():
        raise _refuse(raw, "it is a symbolic link; patch the file it points to instead")
    real_parent = Path(os.path.realpath(target.parent))
    try:
        real_rel_parent = real_parent.relative_to(root).as_posix()
    except ValueError:
        raise _refuse(
            raw, "a folder on its way is a symbolic link leading outside the repository"
        ) from None
    real_rel = posixpath.normpath(posixpath.join(real_rel_parent, target.name))
    _check_parts(raw, real_rel, state_dir)
    return rel, target
