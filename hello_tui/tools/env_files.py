"""`.env` files, which hold keys: which files they are, and asking before a tool reads one.

`reaches_env_file` applies the rule for what counts (`core/env_names.py`: `.env`,
`.env.local`, `.envrc`, `prod.env`, and their backups: `.env~`, `prod.env.bak`) to
a path on disk, whose name or, through links, whose target may be one. The file
tools and the terminal policy both use it.

A hard link is the same file under a second name (`ln .env notes.txt`, or an
archive's link member extracted beside a `.env`): nothing about `notes.txt` says
which file it is but its inode. Git cannot check one out and a patch cannot make
one, so they are rare; an env file with more than one link is therefore what is
looked for (`linked_env_files`, a walk of names that stats only env files), and a
file with more than one link whose inode is one of those is that env file.

read, grep and context_fetch call `approve_env_read` before they open a
`.env`-like file the model named. The question goes through the same
approver as commands (the TUI's modal; `exec` declines unless --yes), and the
answer is reported like a command's: a "no" is an answer, not a tool failure.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from hello_tui.core.env_names import env_file_names, env_folder_in, is_env_file
from hello_tui.core.events import CommandApprovalNeeded, CommandApprovalResolved
from hello_tui.core.tools import ToolContext, ToolResult


def reaches_env_file(path: Path, repo: Path | None = None) -> bool:
    """Reading `path` reads an env file: by its own name, or by its target's when a link
    (of the file or of a folder above it) leads there (`notes.txt -> .env`), or, given
    the repo, when it lies in a folder named like one or is a hard link to one of the
    repo's env files. For many paths of one repo, `RepoEnvFiles` walks the repo once."""
    if repo is None:
        return _by_name(path) is None
    return RepoEnvFiles(repo).reaches(path)


def _by_name(path: Path) -> Path | None:
    """Where `path` leads when neither its name nor its target's is an env file's;
    None when one is (or the path cannot be resolved, which reads nothing)."""
    if is_env_file(path.name):
        return None
    try:
        target = Path(os.path.realpath(path))
    except (OSError, ValueError):
        return path  # unresolvable: nothing is read through it
    return None if target != path and is_env_file(target.name) else target


def env_folder_of(
    path: Path | str, repo: Path, *, itself: bool = False, real: Path | str | None = None
) -> str | None:
    """The folder named like an env file (`.env/production`, `prod.env.d/keys`) that
    `path` is in below the repo, as written or where it leads (`real`, when known;
    `itself`: or is)."""
    resolved = real if real is not None else os.path.realpath(path)
    for candidate in (os.path.normpath(path), resolved):
        try:
            rel = Path(candidate).relative_to(repo).as_posix()
        except ValueError:
            continue
        found = env_folder_in(rel, itself=itself) if rel != "." else None
        if found:
            return found
    return None


# A repo with more names than this is not walked for hard-linked env files: a file
# with more than one link in it then counts as one (the policy's walks have the same bound).
MAX_LINK_WALK_NAMES = 200_000
# Folders never walked: git's own (their files are git's, judged apart).
_UNWALKED = frozenset({".git"})


def linked_env_files(repo: Path) -> frozenset[tuple[int, int]] | None:
    """(device, inode) of every env file in `repo` that has another name (a hard link);
    None when the repo is too big to look (then any file with two names may be one).

    Folder listings are reused while a folder is unchanged (`folder_listings`), so a
    repeated question costs a stat per folder, and only env files are stat'ed."""
    from hello_tui.tools.shell.folder_listings import listing

    found: set[tuple[int, int]] = set()
    budget = MAX_LINK_WALK_NAMES
    stack = [os.fspath(repo)]
    while stack:
        folder = stack.pop()
        names, folders = listing(folder)
        budget -= len(names)
        if budget < 0:
            return None
        for name in env_file_names(names):
            try:
                st = os.stat(os.path.join(folder, name), follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
                found.add((st.st_dev, st.st_ino))
        stack += [os.path.join(folder, n) for n in folders if n not in _UNWALKED]
    return frozenset(found)


class RepoEnvFiles:
    """The env-file rule for the paths of one repo: the repo is looked at for env files
    with a second name (`linked_env_files`) at most once, at the first path that needs it,
    so a walk or a search judging many paths pays for it once."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._linked: list[frozenset[tuple[int, int]] | None] = []

    def linked(self) -> frozenset[tuple[int, int]] | None:
        if not self._linked:
            self._linked.append(linked_env_files(self.repo))
        return self._linked[0]

    def reaches(self, path: Path) -> bool:
        """`reaches_env_file(path, repo)`."""
        target = _by_name(path)
        if target is None:
            return True
        return env_folder_of(path, self.repo, real=target) is not None or self.is_linked(path)

    def is_linked(self, path: Path | str) -> bool:
        """`path` (followed through symbolic links) is a regular file with more than one
        name, one of which is an env file of the repo (or the repo is too big to tell)."""
        st = _many_names(path)
        if st is None:
            return False
        linked = self.linked()
        return linked is None or (st.st_dev, st.st_ino) in linked

    def walk_check(self) -> Callable[[str], bool] | None:
        """For a walk that reads what it lists: `is_linked`, or None when the repo has no
        env file with a second name (the usual case: then no walked file needs a stat)."""
        linked = self.linked()
        return None if linked is not None and not linked else self.is_linked


def linked_env_check(repo: Path) -> Callable[[str], bool] | None:
    """`RepoEnvFiles(repo).walk_check()`, for a walk of its own."""
    return RepoEnvFiles(repo).walk_check()


def has_other_names(path: Path | str) -> bool:
    """`path` is a regular file with more than one name (a hard link, made or met)."""
    return _many_names(path) is not None


def _many_names(path: Path | str) -> os.stat_result | None:
    """`path`'s status when it is a regular file with more than one name."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st if stat.S_ISREG(st.st_mode) and st.st_nlink > 1 else None


ENV_READ_REASON = "it reads {rel}, which usually holds API keys and passwords"


async def approve_env_read(ctx: ToolContext, tool: str, rel: str) -> ToolResult | None:
    """None when the user allowed it; otherwise the result to return (declined)."""
    asked = f"{tool} {rel}"
    if asked in ctx.allowed_commands:
        return None
    reason = ENV_READ_REASON.format(rel=rel)
    ctx.emit(CommandApprovalNeeded(ctx.call_id, asked, reason))
    answer = await ctx.approver.approve_command(asked, reason)
    ctx.emit(CommandApprovalResolved(ctx.call_id, asked, answer))
    if answer == "session":
        ctx.allowed_commands.add(asked)
    if answer in ("once", "session", "network"):
        return None
    return ToolResult.refused_by_user(
        f"The user declined to let {tool} read '{rel}' ({reason}). Nothing was read; "
        "do not retry it unchanged.",
        data={"path": rel, "approval": "deny"},
    )
