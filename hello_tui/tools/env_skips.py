"""The env files a search over a folder leaves out, and the note that says so.

grep and context_fetch asked to search a folder (or the whole repo) never read
an env file: a named one asks the user first (`approve_env_read`), and a walk
has nobody to ask. They skip them, and tell the model how many and how to
search one (name it, which asks). The list comes from the tree, never from
what matched, so the note says nothing about what the files hold.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path, PurePosixPath

from hello_tui.core.env_names import env_file_names, env_folder_in, is_env_file
from hello_tui.tools.env_files import RepoEnvFiles
from hello_tui.tools.paths import VisibleTree

NOTE_NAMES = 5  # env files named in the note; the rest are counted


# (repo, state folder, start) -> (what the walk depended on, what it found)
_WALKS: OrderedDict[tuple[str, str, str], tuple[tuple, list[str]]] = OrderedDict()
_WALKS_KEPT = 8


def walked_env_files(repo: Path, state_dir: str, start_rel: str) -> list[str]:
    """The env files a walk of `start_rel` would read (what rg and the fallback see).

    A walk follows no link, so a walked file's target is the file itself and its
    name is what `reaches_env_file` would judge. The answer is kept while no folder
    it read changed (an added, removed or renamed entry moves its folder's mtime)
    and no .gitignore in them or above did, so a repeated search pays a stat per
    folder instead of a listing. It only feeds the note: hits are judged apart."""
    known = known_env_files(repo, state_dir, start_rel)
    if known is not None:
        return known
    key = (str(repo), state_dir, start_rel)
    tree = VisibleTree(repo, state_dir, include_hidden=False)
    tree.open_explicit(start_rel)
    parts = PurePosixPath(start_rel).parts if start_rel != "." else ()
    above = tuple(str(tree.repo.joinpath(*parts[:depth])) for depth in range(len(parts)))
    listed: list[tuple[str, int]] = []
    found = tree.files_named(start_rel, env_file_names, listed)
    # Folder mtimes are the ones read before listing, so a change during the walk
    # shows as a difference next time.
    depends = (above, tuple(listed), _ignore_marks(above + tuple(f for f, _ in listed)))
    _WALKS[key] = (depends, found)
    while len(_WALKS) > _WALKS_KEPT:
        _WALKS.popitem(last=False)
    return found


def known_env_files(repo: Path, state_dir: str, start_rel: str) -> list[str] | None:
    """The last walk's answer if nothing it depended on changed (a stat per folder),
    cheap enough to ask inline; None when the tree must be walked again."""
    key = (str(repo), state_dir, start_rel)
    kept = _WALKS.get(key)
    if kept is None or _current(kept[0]) != kept[0]:
        return None
    _WALKS.move_to_end(key)
    return kept[1]


def _current(depends: tuple) -> tuple:
    above, listed, _ = depends
    now = tuple((folder, _mtime(folder)) for folder, _ in listed)
    return (above, now, _ignore_marks(above + tuple(f for f, _ in listed)))


def _mtime(path: str) -> int:
    try:
        return os.lstat(path).st_mtime_ns
    except OSError:
        return -1


def _ignore_marks(folders: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(_mtime(os.path.join(folder, ".gitignore")) for folder in folders)


class EnvFilter:
    """Decides, for each path a search printed, whether it is an env file to drop.

    Paths the model named (and the user allowed) stay; any other is judged by
    `reaches_env_file`, once per path: a walk reads a hard link to an env file under its
    own name, so a hit in a file with more than one name is checked for that too."""

    def __init__(self, repo: Path, named: set[str]) -> None:
        self.repo = repo
        self.root = str(repo)
        self.named = named
        self._seen: dict[str, bool] = {}
        self._env = RepoEnvFiles(repo)  # the repo is walked for hard links once, if at all

    def drops(self, rel: str) -> bool:
        if rel in self.named:
            return False
        if rel not in self._seen:
            path = os.path.join(self.root, rel)
            # rg follows no link on a walk, so a plain file's name decides; a link (rg
            # printed one it was given) is judged by its target. Saves a realpath a hit.
            if os.path.islink(path):
                self._seen[rel] = self._env.reaches(Path(path))
            else:
                # Most hits have one name and cost a stat; the first with two looks at the repo.
                self._seen[rel] = (
                    is_env_file(rel) or env_folder_in(rel) is not None or self._env.is_linked(path)
                )
        return self._seen[rel]


def skipped_note(skipped: list[str], how: str) -> str:
    """The line a result gets when env files were left out; `how` says how to name one."""
    count = len(skipped)
    names = ", ".join(skipped[:NOTE_NAMES])
    if count > NOTE_NAMES:
        names += f" and {count - NOTE_NAMES} more"
    noun = "env file" if count == 1 else "env files"
    return (
        f"[note: {count} {noun} not searched ({names}): they usually hold API keys and "
        f"passwords; to search one, {how} (the user is asked first)]"
    )
