"""When ripgrep reads dotfiles it was not asked to: a whitelist in an ignore file.

rg skips hidden files and folders (`.env`, `.config/`) unless `--hidden`, but a
`!pattern` line in an ignore file it honours (`.gitignore`, `.ignore`,
`.rgignore` in the folder searched or any folder above it, above the repo too,
`.git/info/exclude`)
whitelists what it matches, hidden or not: with `!.env` in a committed
`.gitignore`, `rg KEY` prints `.env`. Matching patterns against names as rg does
is not attempted: any `!` line makes the folder and everything below it count as
showing dotfiles, so the env-file walk looks at them too.
"""

from __future__ import annotations

import os
from pathlib import Path

IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")
_MAX_BYTES = 1 << 20  # a larger ignore file is taken to whitelist something


def whitelists(folder: str, names: list[str] | None = None) -> bool:
    """Whether an ignore file in `folder` (whose entries are `names`, when known) has a
    `!` line."""
    for name in IGNORE_FILES:
        if names is not None and name not in names:
            continue
        if _has_negation(os.path.join(folder, name)):
            return True
    return False


def whitelisted_above(start: Path, repo: Path, git_dir: str | None) -> bool:
    """Whether a folder from `start` up to `repo`, or `.git/info/exclude`, whitelists; or
    a folder above the repo, whose `.ignore` and `.rgignore` rg reads too (`.gitignore`
    files only inside the repository)."""
    if git_dir is not None and _has_negation(os.path.join(git_dir, "info", "exclude")):
        return True
    folder = start
    while folder.is_relative_to(repo):
        if whitelists(os.fspath(folder)):
            return True
        if folder == repo:
            break
        folder = folder.parent
    for above in repo.parents:
        if any(_has_negation(os.path.join(above, name)) for name in _NOT_GIT_IGNORE_FILES):
            return True
    return False


_NOT_GIT_IGNORE_FILES = (".ignore", ".rgignore")


def _has_negation(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except OSError:
        return False
    if len(data) > _MAX_BYTES:
        return True
    return any(line.lstrip().startswith(b"!") for line in data.splitlines())
