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
    return resolve_patch_paths(repo, [raw], state_dir)[0]


def resolve_patch_paths(repo: Path, raws: list[str], state_dir: str) -> list[tuple[str, Path]]:
    """`resolve_patch_path` of each path in turn, the repository's real path and each
    folder's found once for all of them (many files of a patch share a folder)."""
    root = os.path.realpath(repo)
    real_parents: dict[str, str] = {}
    return [_resolve(root, raw, state_dir, real_parents) for raw in raws]


def _resolve(root: str, raw: str, state_dir: str, real_parents: dict[str, str]) -> tuple[str, Path]:
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
    # Strings, not pathlib: `rel` is normalised and relative, `root` a real path.
    target = posixpath.join(root, rel)
    if os.path.islink(target):
        raise _refuse(raw, "it is a symbolic link; patch the file it points to instead")
    parent, name = posixpath.split(target)
    real_parent = real_parents.get(parent)
    if real_parent is None:
        real_parent = real_parents[parent] = os.path.realpath(parent)
    if real_parent == root:
        real_rel_parent = "."
    elif real_parent.startswith(root.rstrip("/") + "/"):
        real_rel_parent = real_parent[len(root.rstrip("/")) + 1 :]
    else:
        raise _refuse(raw, "a folder on its way is a symbolic link leading outside the repository")
    real_rel = posixpath.normpath(posixpath.join(real_rel_parent, name))
    _check_parts(raw, real_rel, state_dir)
    return rel, Path(target)


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
