"""Whether a folder is a git repository, and whose: git's own rules, in one place.

git runs what a repository's config names (diff drivers, filters, pagers,
hooks), so "is this a repository?" is a safety question for the terminal
policy (may `git log` run here?) and the patch engine (may a patch build
one?). Both ask it here, and both get git's answer (setup.c):

- `.git` in any spelling git itself refuses to check out (`is_dot_git`):
  any case, NTFS's ignored trailing dots and spaces and streams (`.git:x`), the
  8.3 name `git~1`, HFS+'s ignored zero-width code points (`.g\u200cit`);
- a folder is a git directory (`is_git_directory`) when it has `HEAD` and
  its common directory has `objects/` and `refs/`; the common directory is
  the folder itself, or what its `commondir` file names (`../y`: then `x/`
  with `HEAD` and `commondir` plus `y/objects/` and `y/refs/` is a
  repository, though neither folder looks like one alone);
- discovery (`discover`) walks up from the working folder: `D/.git` (a
  folder, or a gitfile `gitdir: <path>`) first, then `D` itself as a bare
  repository, then the parent.

Deliberately stricter than git in one respect: any `HEAD` file counts (git
also checks that it reads `ref: refs/...` or an object id), since a later
write can make its content valid. `GIT_DIR`-style variables are not read:
commands never get them (the policy refuses them).

Paths are absolute; a `Tree` answers what exists, so the patch engine can
ask about the tree as it will be after a patch (`OverlayTree`).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Literal, Protocol

# Names git keeps in a repository's control folder; a patch may not write them inside one.
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
# What a common directory holds that decides whether, and how, git runs things there.
COMMON_DIR_NAMES = frozenset({"config", "objects", "refs", "hooks", "info"})
# The longest `commondir` or gitfile git reads is far below this; more is not a path.
_POINTER_LIMIT = 4096


# Code points HFS+ ignores in names (git's `next_hfs_char`): `.g\u200cit` is `.git` there.
_HFS_IGNORED = dict.fromkeys(
    [0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]
)


def is_dot_git(name: str) -> bool:
    """`.git` as git itself refuses it (`is_ntfs_dotgit`, `is_hfs_dotgit`), whatever the
    file system: any case; NTFS's view, where a name ends at `:` (an alternate data
    stream: `.git::$INDEX_ALLOCATION` is the folder) or `\\`, trailing dots and spaces are
    dropped and `git~1` is the 8.3 short name; HFS+'s, which ignores zero-width and
    direction code points. The union is stricter than git on any one system."""
    low = name.translate(_HFS_IGNORED).lower()
    for end in ":\\":
        low = low.split(end, 1)[0]
    return low.rstrip(". ") in (".git", "git~1")


def is_git_control_path(rel: str) -> bool:
    """True when any component of the repo-relative POSIX path `rel` is a `.git`."""
    return any(is_dot_git(part) for part in rel.split("/") if part)


# The parts of a git folder that hold files' contents: the object store (loose objects and
# packs, also a submodule's under `modules/`), LFS's copies, rerere's conflicts and a
# rebase's patches. Staged-then-unstaged files stay there with no commit naming them.
GIT_CONTENT_NAMES = frozenset({"objects", "lfs", "rr-cache", "rebase-apply", "rebase-merge"})


def is_git_content_path(rel: str) -> bool:
    """True when the repo-relative POSIX path `rel` is in, or is, a part of a `.git` that
    holds files' contents (`.git/objects/ab/cdef...`, `.git/modules/m/objects`)."""
    parts = [part for part in rel.split("/") if part]
    inside = next((i for i, part in enumerate(parts) if is_dot_git(part)), None)
    return inside is not None and any(p.lower() in GIT_CONTENT_NAMES for p in parts[inside + 1 :])


def named_like_git_dir(name: str) -> bool:
    """`repo.git`: the name git gives bare repositories, treated as one whatever it holds."""
    return len(name) > 4 and name.lower().endswith(".git")


# ---------------------------------------------------------------- what exists


if TYPE_CHECKING:

    class Tree(Protocol):
        """What exists at an absolute path: the disk, or the disk as a patch will leave it."""

        def kind(self, path: str) -> Literal["file", "dir", "link"] | None: ...

        def read(self, path: str) -> bytes | None: ...


class DiskTree:
    """The file system as it is."""

    def kind(self, path: str) -> Literal["file", "dir", "link"] | None:
        try:
            if os.path.islink(path):
                return "link"
            if os.path.isdir(path):
                return "dir"
            return "file" if os.path.lexists(path) else None
        except OSError:
            return None

    def read(self, path: str) -> bytes | None:
        try:
            with open(path, "rb") as handle:
                return handle.read(_POINTER_LIMIT)
        except OSError:
            return None


class OverlayTree:
    """The disk with a patch's writes (bytes) and removals (None) laid over it."""

    def __init__(self, root: Path, after: Mapping[str, bytes | None]) -> None:
        base = os.path.realpath(root)
        self._files = {posixpath.join(base, rel): data for rel, data in after.items()}
        self._dirs: set[str] = set()
        for path, data in self._files.items():
            if data is None:
                continue
            parent = posixpath.dirname(path)
            while parent.startswith(base) and parent not in self._dirs:
                self._dirs.add(parent)
                parent = posixpath.dirname(parent)
        self._disk = DiskTree()

    def kind(self, path: str) -> Literal["file", "dir", "link"] | None:
        if path in self._files:
            return "file" if self._files[path] is not None else None
        if path in self._dirs:
            return "dir"
        return self._disk.kind(path)

    def read(self, path: str) -> bytes | None:
        if path in self._files:
            data = self._files[path]
            return None if data is None else data[:_POINTER_LIMIT]
        return self._disk.read(path)


DISK = DiskTree()


# ---------------------------------------------------------------- git's rules


def _pointer(tree: Tree, path: str) -> str | None:
    data = tree.read(path)
    if data is None:
        return None
    return data.decode("utf-8", errors="surrogateescape").rstrip()


def has_head(tree: Tree, folder: str) -> bool:
    """A `HEAD` git would try (a file or a symbolic link; its content is not trusted)."""
    return tree.kind(posixpath.join(folder, "HEAD")) in ("file", "link")


def common_dir(tree: Tree, folder: str) -> str:
    """The common directory of git directory `folder`: what `commondir` names, else itself."""
    named = _pointer(tree, posixpath.join(folder, "commondir"))
    if not named:
        return folder
    return posixpath.normpath(posixpath.join(folder, named))


def is_git_directory(tree: Tree, folder: str) -> bool:
    """git's is_git_directory(): HEAD here, objects/ and refs/ in the common directory."""
    if not has_head(tree, folder):
        return False
    common = common_dir(tree, folder)
    return all(tree.kind(posixpath.join(common, n)) is not None for n in ("objects", "refs"))


def gitfile_target(tree: Tree, dotgit: str) -> str | None:
    """The folder a gitfile (`.git` holding `gitdir: <path>`) names, relative to its folder."""
    text = _pointer(tree, dotgit)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:") :].strip()
    return posixpath.normpath(posixpath.join(posixpath.dirname(dotgit), target)) if target else None


@dataclass(frozen=True)
class Found:
    """The repository git finds from a folder: where, and how it was found."""

    folder: str  # the folder holding `.git`, or the bare repository itself
    how: Literal["dotgit", "bare"]


def discover(start: Path, ceiling: Path, tree: Tree = DISK) -> Found | None:
    """The repository git uses from `start`, looking no higher than `ceiling` (inclusive).

    Any `.git` entry stops the walk, even one git would reject: git then
    either uses it or fails, and neither is the repository further up.
    """
    current = os.path.realpath(start)
    top = os.path.realpath(ceiling)
    while True:
        if tree.kind(posixpath.join(current, ".git")) is not None:
            return Found(current, "dotgit")
        if is_git_directory(tree, current):
            return Found(current, "bare")
        if current == top or not current.startswith(top.rstrip("/") + "/"):
            return None
        current = posixpath.dirname(current)


def foreign_repository(cwd: Path, repo: Path) -> Path | None:
    """The repository git would use from `cwd` when it is not `repo`'s own, else None.

    `repo`'s own is its top-level `.git` (a folder or a gitfile: a linked
    worktree or a submodule the user made). A folder outside `repo` is
    foreign by definition.
    """
    root = os.path.realpath(repo)
    here = os.path.realpath(cwd)
    if here != root and not here.startswith(root.rstrip("/") + "/"):
        return Path(here)
    found = discover(Path(here), Path(root))
    if found is None or (found.folder == root and found.how == "dotgit"):
        return None
    return Path(found.folder)


def own_git_dirs(repo: Path, tree: Tree = DISK) -> tuple[str, str] | None:
    """(git directory, common directory) of `repo`'s own `.git`, or None without one."""
    dotgit = posixpath.join(os.path.realpath(repo), ".git")
    kind = tree.kind(dotgit)
    if kind == "dir":
        git_dir = dotgit
    elif kind in ("file", "link"):
        target = gitfile_target(tree, dotgit) if kind == "file" else os.path.realpath(dotgit)
        if target is None:
            return None
        git_dir = target
    else:
        return None
    return git_dir, common_dir(tree, git_dir)


def linked_git_dirs(repo: Path, tree: Tree = DISK) -> list[str]:
    """The git and common directories outside `repo` that its gitfile names, when they are
    what the gitfile claims: a linked worktree's (`<main>/.git/worktrees/<id>`, whose
    `gitdir` file names this `.git`) or a submodule's (`<super>/.git/modules/<name>`, whose
    `core.worktree` is this folder). The command sandbox lets commands read them.

    Anything else is not the repo's own data, whatever it holds: a hand-made `.git` with
    `gitdir: /` must not open the file system to every read-only command (a clone cannot
    make one, an archive can). A target with no such pointer back is left out, and git then
    fails in the sandbox instead of reading elsewhere.
    """
    root = os.path.realpath(repo)
    dotgit = posixpath.join(root, ".git")
    if tree.kind(dotgit) != "file":
        return []
    named = gitfile_target(tree, dotgit)
    if named is None:
        return []
    git_dir = os.path.realpath(named)
    if not is_git_directory(tree, git_dir) or not _points_back(tree, git_dir, dotgit, root):
        return []
    common = os.path.realpath(common_dir(tree, git_dir))
    found = [d for d in dict.fromkeys((git_dir, common)) if not _contains(d, root)]
    return found


def _contains(folder: str, path: str) -> bool:
    """`folder` is `path` or one of its ancestors (`/` holds everything)."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _points_back(tree: Tree, git_dir: str, dotgit: str, root: str) -> bool:
    back = _pointer(tree, posixpath.join(git_dir, "gitdir"))
    if back is not None:  # a linked worktree: `gitdir` names the worktree's `.git` file
        named = back.splitlines()[0].strip() if back else ""
        return bool(named) and os.path.realpath(posixpath.join(git_dir, named)) == dotgit
    config = _pointer(tree, posixpath.join(git_dir, "config"))
    worktree = _core_worktree(config or "")
    return worktree is not None and os.path.realpath(posixpath.join(git_dir, worktree)) == root


def _core_worktree(config: str) -> str | None:
    """`core.worktree` of a git config text (the last one wins, as in git)."""
    section, found = "", None
    for raw in config.splitlines():
        line = raw.split("#", 1)[0].split(";", 1)[0].strip()
        if line.startswith("["):
            section = line.strip("[]").strip().lower()
        elif section == "core" and "=" in line:
            key, value = (part.strip() for part in line.split("=", 1))
            if key.lower() == "worktree":
                found = value.strip('"')
    return found


def config_files(repo: Path) -> list[Path]:
    """The repository config files git reads for `repo` (system and global are switched off
    for commands): the common directory's `config` and the worktree's `config.worktree`."""
    dirs = own_git_dirs(repo)
    if dirs is None:
        return []
    git_dir, common = dirs
    found = [Path(common) / "config"]
    if git_dir != common or (Path(git_dir) / "config.worktree").exists():
        found.append(Path(git_dir) / "config.worktree")
    return [p for p in found if p.is_file()]


# ---------------------------------------------------------------- what a patch may build


def _under_root(path: str, root: str) -> str | None:
    if path == root:
        return ""
    if path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1 :]
    return None


def control_folder(tree: Tree, folder: str) -> str | None:
    """Why `folder` is (or holds the worktree half of) a repository's control folder."""
    if named_like_git_dir(posixpath.basename(folder)):
        return "a name ending in .git"
    if not has_head(tree, folder):
        return None
    if tree.kind(posixpath.join(folder, "commondir")) is not None:
        return "HEAD and a commondir file, which makes git use another folder's objects and config"
    if is_git_directory(tree, folder):
        return "a bare layout: HEAD, objects/, refs/"
    return None


def commondir_users(root: Path, tree: Tree, skip: frozenset[str], budget: int) -> dict[str, str]:
    """{common directory: folder naming it} for every `commondir` file below `root`.

    Walks the tree on disk (the patch's own `commondir` files are folders it
    writes into, found apart). Raises OverflowError past `budget` entries.
    """
    base = os.path.realpath(root)
    users: dict[str, str] = {}
    stack = [base]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        budget -= len(entries)
        if budget < 0:
            raise OverflowError(str(root))
        for entry in entries:
            if entry.name == "commondir" and entry.is_file(follow_symlinks=False):
                if has_head(tree, folder):
                    users[common_dir(tree, folder)] = folder
            elif entry.is_dir(follow_symlinks=False) and not is_dot_git(entry.name):
                rel = _under_root(entry.path, base)
                if rel not in skip:
                    stack.append(entry.path)
    return users


MAX_LAYOUT_SCAN = 200_000


def patch_builds_repository(
    repo: Path, after: Mapping[str, bytes | None], skip: frozenset[str] = frozenset()
) -> tuple[str, str, str] | None:
    """(path, folder, why) when writing `after` would create or change a repository's
    control files inside `repo`; None when it does not.

    `after` maps each repo-relative path the patch writes to its new bytes
    (None: removed). `skip` names top-level folders never scanned (the state folder).
    """
    root = os.path.realpath(repo)
    tree = OverlayTree(Path(root), after)
    verdicts: dict[str, str | None] = {}
    commons: dict[str, str] | None = None
    for rel in after:
        parts = rel.split("/")
        for k, part in enumerate(parts):
            name = part.lower()
            folder = posixpath.join(root, *parts[:k]) if k else root
            if name not in GIT_CONTROL_NAMES:
                continue
            if folder not in verdicts:
                verdicts[folder] = control_folder(tree, folder)
            why = verdicts[folder]
            if why:
                return rel, _under_root(folder, root) or "", why
            if name in COMMON_DIR_NAMES:
                if commons is None:
                    try:
                        commons = commondir_users(Path(root), tree, skip, MAX_LAYOUT_SCAN)
                    except OverflowError:
                        return (
                            rel,
                            _under_root(folder, root) or "",
                            (
                                "the tree holds too many files to check that no commondir "
                                "file makes it a repository's common directory"
                            ),
                        )
                    for written in after:
                        if written.rsplit("/", 1)[-1] == "commondir":
                            holder = posixpath.dirname(posixpath.join(root, written))
                            if has_head(tree, holder):
                                commons[common_dir(tree, holder)] = holder
                user = commons.get(folder)
                if user is not None:
                    return (
                        rel,
                        _under_root(folder, root) or "",
                        (
                            f"the common directory of the repository in "
                            f"{_under_root(user, root) or '.'}/ (its commondir file names it)"
                        ),
                    )
    return None


def policy_git_env(repo: Path, git_dir: str) -> dict[str, str]:
    """The environment of hello-tui's own git runs (the terminal policy's, the patch engine's): no user or system config, no
    fsmonitor or hook, and the repository's own git dir and work tree (core.worktree is
    not followed), so that nothing the repository configures can start a program or reach
    the network."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/nonexistent",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_OPTIONAL_LOCKS": "0",
        # A partial clone's missing objects: never a fetch, whose transport the repository's
        # config names (an `ext::` URL is a command); no transport may run either, for a git
        # that does not know GIT_NO_LAZY_FETCH.
        "GIT_NO_LAZY_FETCH": "1",
        "GIT_ALLOW_PROTOCOL": "",
        "GIT_SSH_COMMAND": "false",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_DIR": git_dir,
        "GIT_WORK_TREE": str(repo),
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": "false",
        "GIT_CONFIG_KEY_1": "core.hooksPath",
        "GIT_CONFIG_VALUE_1": "/dev/null",
    }
