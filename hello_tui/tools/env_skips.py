"""The env files a search over a folder leaves out, and the note that says so.

grep and context_fetch asked to search a folder (or the whole repo) never read
an env file: a named one asks the user first (`approve_env_read`), and a walk
has nobody to ask. They skip them, and tell the model how many and how to
search one (name it, which asks). The list comes from the tree, never from
what matched, so the note says nothing about what the files hold.
"""

from __future__ import annotations

from pathlib import Path

from hello_tui.tools.env_files import env_file_names, reaches_env_file
from hello_tui.tools.paths import VisibleTree

NOTE_NAMES = 5  # env files named in the note; the rest are counted


def walked_env_files(repo: Path, state_dir: str, start_rel: str) -> list[str]:
    """The env files a walk of `start_rel` would read (what rg and the fallback see).

    A walk follows no link, so a walked file's target is the file itself and its
    name is what `reaches_env_file` would judge."""
    tree = VisibleTree(repo, state_dir, include_hidden=False)
    tree.open_explicit(start_rel)
    return tree.files_named(start_rel, env_file_names)


class EnvFilter:
    """Decides, for each path a search printed, whether it is an env file to drop.

    Paths the model named (and the user allowed) stay; any other is judged by
    `reaches_env_file`, once per path."""

    def __init__(self, repo: Path, named: set[str]) -> None:
        self.repo = repo
        self.named = named
        self._seen: dict[str, bool] = {}

    def drops(self, rel: str) -> bool:
        if rel in self.named:
            return False
        if rel not in self._seen:
            self._seen[rel] = reaches_env_file(self.repo / rel)
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
