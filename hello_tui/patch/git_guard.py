"""No patch may create or change a nested git repository's control files.

A `.git` file or folder at any depth, or a folder laid out like a git
directory (`HEAD`, `objects/`, `refs/` — a bare repository such as
`fixtures/repo.git/`), is read by every git command run inside it: its
`config` (core.fsmonitor, core.hooksPath, aliases) and `hooks/` turn
"read-only" commands into code execution. Refused, at any depth:
- a path component that git itself treats as `.git` (any case, trailing dots
  or spaces, the 8.3 short name `git~1`);
- a git control entry (`config`, `HEAD`, `hooks/...`, ...) inside a folder
  whose name ends in `.git`, or inside a folder that is — or with this
  transaction's files would become — a git directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

CONTROL_ENTRIES = frozenset(
    {
        "HEAD",
        "config",
        "config.worktree",
        "hooks",
        "objects",
        "refs",
        "info",
        "packed-refs",
        "commondir",
        "gitdir",
        "index",
        "worktrees",
        "modules",
        "logs",
        "shallow",
        "description",
        "FETCH_HEAD",
        "ORIG_HEAD",
        "MERGE_HEAD",
    }
)


def _is_dotgit(component: str) -> bool:
    name = component.rstrip(". ").casefold()
    return name == ".git" or name == "git~1"


def _has(repo: Path, folder: tuple[str, ...], entry: str, written: set[str], is_dir: bool) -> bool:
    rel = "/".join((*folder, entry))
    if is_dir:
        if any(w.startswith(rel + "/") for w in written):
            return True
        return os.path.isdir(repo.joinpath(*folder, entry))
    return rel in written or os.path.lexists(repo.joinpath(*folder, entry))


def _is_git_dir(repo: Path, folder: tuple[str, ...], written: set[str]) -> bool:
    """git's own test (HEAD, objects/, refs/), on the tree as it would be after the writes."""
    return (
        _has(repo, folder, "HEAD", written, False)
        and _has(repo, folder, "objects", written, True)
        and _has(repo, folder, "refs", written, True)
    )


def git_control_problem(repo: Path, rel: str, all_written: Iterable[str]) -> str | None:
    """Why writing `rel` (repo-relative, normalised) would touch git control files, or None."""
    parts = rel.split("/")
    for component in parts:
        if _is_dotgit(component):
            return f"{rel} is inside a .git folder (or is one)"
    written = set(all_written)
    for i in range(len(parts) - 1):
        folder, entry = tuple(parts[: i + 1]), parts[i + 1]
        if entry not in CONTROL_ENTRIES:
            continue
        shown = "/".join(folder)
        if folder[-1].casefold().endswith(".git"):
            return f"{rel} is a control file of the git repository {shown}/"
        if _is_git_dir(repo, folder, written):
            return f"{rel} is a control file of the nested git repository {shown}/"
    return None
