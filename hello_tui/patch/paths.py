"""Where a patch may write: repo-relative paths only, never outside, never into a git
repository's control files or the state folder.

Refused: empty paths, NUL bytes, absolute paths, `~`, `..` escapes, any `.git`
component at any depth (in every spelling git refuses, `core.git_layout.is_dot_git`),
the state folder, a symlinked file, and a symlinked parent folder that leads
outside the repository (or into .git/ or the state folder).

Nested repositories: a patch must not create or change the control files of a
git repository inside the tree, since running git there (which tools and
users do without a second thought) executes what its config and hooks say.
Whether a folder is one after the patch is git's rule, decided in
`core.git_layout` (bare layouts, `commondir` layouts, names ending in `.git`).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from pathlib import Path

from hello_tui.core.git_layout import is_git_control_path, patch_builds_repository
from hello_tui.patch.types import PatchError


def _refuse(raw: str, why: str) -> PatchError:
    return PatchError(f"Refused path {raw!r}: {why}. Paths are relative to the repository root.")


def _check_parts(raw: str, rel: str, state_dir: str) -> None:
    if is_git_control_path(rel):
        raise _refuse(raw, "nothing inside .git/ may be patched")
    if rel.split("/")[0] == state_dir:
        raise _refuse(raw, f"the state folder {state_dir}/ is not writable through patches")


def resolve_patch_path(repo: Path, raw: str, state_dir: str) -> tuple[str, Path]:
    """(normalised POSIX relative path, absolute path) for a path named in a patch, or PatchError."""
    if not raw or not raw.strip():
        raise PatchError("Refused an empty path.")
    if "\x00" in raw:
        raise _refuse(raw, "it contains a NUL byte")
    if any("\udc80" <= ch <= "\udcff" for ch in raw):
        raise _refuse(raw, "its name is not valid UTF-8")
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


def check_git_control_files(
    repo: Path, after: Mapping[str, bytes | None], state_dir: str = ""
) -> None:
    """Refuse a patch that creates or changes control files of a repository inside the tree.

    `after` maps each path the patch writes to its new bytes (None: removed).
    """
    found = patch_builds_repository(
        repo, after, frozenset({state_dir}) if state_dir else frozenset()
    )
    if found is None:
        return
    rel, folder, why = found
    where = f"{folder}/" if folder else "the repository root"
    raise _refuse(
        rel,
        f"{where} is a git repository's control folder ({why}), and {rel!r} is not "
        "writable through patches: running git there would execute what it says",
    )
