"""Where a patch may write: repo-relative paths only, never outside, never into a git repository's
control files or the state folder.

Refused: empty paths, NUL bytes, absolute paths, `~`, `..` escapes, any `.git`
component at any depth (also `.GIT`, `.git.`, `git~1`: names that filesystems
treat as `.git`), the state folder, a symlinked file, and a symlinked parent
folder that leads outside the repository (or into .git/ or the state folder).

Nested repositories: a patch must not create or change the control files of a
git repository inside the tree, since running git there (which tools and
users do without a second thought) executes what its config and hooks say. A
folder is a repository's control folder when its name ends in `.git`
(`fixtures/repo.git/`) or when, after the patch, it holds `HEAD`, `objects/`
and `refs/` (a bare layout); inside one, `config`, `HEAD`, `hooks/`,
`objects/`, `refs/` and git's other control names are refused.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path

from hello_tui.patch.types import PatchError


def _refuse(raw: str, why: str) -> PatchError:
    return PatchError(f"Refused path {raw!r}: {why}. Paths are relative to the repository root.")


GIT_CONTROL_NAMES = frozenset(
    {
        "head",
        "config",
        "config.worktree",
        "hooks",
        "objects",
        "refs",
        "info",
        "packed-refs",
        "index",
        "commondir",
        "gitdir",
        "worktrees",
        "modules",
        "logs",
        "description",
        "branches",
        "shallow",
        "fetch_head",
        "orig_head",
        "merge_head",
    }
)


def is_dot_git(name: str) -> bool:
    """`.git` as git itself refuses it: any case, with NTFS's ignored trailing dots and
    spaces, or as its 8.3 short name."""
    low = name.lower()
    return low.rstrip(". ") == ".git" or low == "git~1"


def _check_parts(raw: str, rel: str, state_dir: str) -> None:
    parts = rel.split("/")
    if any(is_dot_git(p) for p in parts):
        raise _refuse(raw, "nothing inside .git/ may be patched")
    if parts[0] == state_dir:
        raise _refuse(raw, f"the state folder {state_dir}/ is not writable through patches")


def resolve_repo_path(repo: Path, raw: str, state_dir: str) -> tuple[str, Path]:
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


def _is_control_folder(repo: Path, folder: str, after: dict[str, bool]) -> bool:
    """Whether `folder` (repo-relative, "" for the root) is a git control folder after the patch.

    `after` maps each path the patch writes (True) or removes (False).
    """
    name = folder.rsplit("/", 1)[-1]
    if name.lower().endswith(".git") and folder:
        return True
    prefix = f"{folder}/" if folder else ""

    def present(rel: str, want_dir: bool) -> bool:
        if not want_dir and rel in after:
            return after[rel]
        if want_dir and any(p.startswith(rel + "/") and w for p, w in after.items()):
            return True
        full = repo / rel
        return full.is_dir() if want_dir else full.is_file()

    return (
        present(prefix + "HEAD", False)
        and present(prefix + "objects", True)
        and present(prefix + "refs", True)
    )


def check_git_control_files(repo: Path, after: dict[str, bool]) -> None:
    """Refuse a patch that creates or changes control files of a repository inside the tree."""
    root = Path(os.path.realpath(repo))
    checked: dict[str, bool] = {}
    for rel in after:
        parts = rel.split("/")
        for k in range(len(parts)):
            if parts[k].lower() not in GIT_CONTROL_NAMES:
                continue
            folder = "/".join(parts[:k])
            if folder not in checked:
                checked[folder] = _is_control_folder(root, folder, after)
            if checked[folder]:
                where = f"{folder}/" if folder else "the repository root"
                raise _refuse(
                    rel,
                    f"{where} is a git repository's control folder (a bare layout: HEAD, "
                    "objects/, refs/, or a name ending in .git), and its "
                    f"{parts[k]!r} is not writable through patches: running git there "
                    "would execute what it says",
                )
