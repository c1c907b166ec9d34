"""Path safety and the visible file tree, shared by the file tools.

A model-given path is resolved inside the repository or refused with a message
the model can read: NUL bytes, `~`, absolute paths outside the repo, `..`
escapes and symlinks leading out are all refused, and so are `.git/` and the
state folder (`hidden_area`; a `.git` at any depth, in any spelling git
refuses, as `core.git_layout` decides), judged both as spelled and where
links lead (`meta -> .git`): their internals are never shown. The walker
decides which files ls / glob / grep see: `.gitignore` files (nested ones
too) are honoured, `.git/` and the state folder are hidden, symlinks are
listed but never followed, so a symlink loop cannot hang a walk. `.env`
files (`is_env_file`, from `env_files`) hold keys: the tools ask before reading one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import regex
from pathspec import GitIgnoreSpec

from hello_tui.core.git_layout import is_dot_git, is_git_control_path


class PathError(Exception):
    """A path the tools refuse or cannot find; the message is for the model."""


@dataclass(frozen=True)
class RepoPath:
    """A path inside the repository: `rel` is POSIX and lexical ("." for the root);
    `real_rel` is where it leads through symlinks (equal to `rel` when no link is on the way)."""

    rel: str
    path: Path
    real_rel: str = ""

    def spellings(self) -> tuple[str, ...]:
        """The lexical path and, if different, the resolved one: each is judged."""
        real = self.real_rel or self.rel
        return (self.rel,) if real == self.rel else (self.rel, real)


def _posix_rel(path: str, root: str) -> str:
    rel = os.path.relpath(path, root)
    return PurePosixPath(*Path(rel).parts).as_posix() if rel != "." else "."


def _inside(child: str, parent: str) -> bool:
    return child == parent or child.startswith(parent.rstrip(os.sep) + os.sep)


def resolve_repo_path(repo: Path, raw: str | None) -> RepoPath:
    """Resolve `raw` (relative to the repo, or absolute inside it) or raise PathError."""
    text = (raw or "").strip()
    if "\x00" in text:
        raise PathError("Path contains a NUL byte; give a plain file path.")
    if text in ("", "."):
        return RepoPath(".", repo, ".")
    if text.startswith("~"):
        raise PathError(
            f"Path {text!r} starts with '~'; only paths inside the repository are allowed "
            "(give them relative to the repository root)."
        )
    root = os.path.realpath(repo)
    lexical = os.path.normpath(os.path.join(root, text))
    if not _inside(lexical, root):
        raise PathError(
            f"Path {text!r} is outside the repository; only paths inside it are allowed."
        )
    # Symlinks are judged by where they lead, so a link to /etc is refused too.
    real = os.path.realpath(lexical)
    if not _inside(real, root):
        raise PathError(f"Path {text!r} leads outside the repository through a symlink; refused.")
    return RepoPath(_posix_rel(lexical, root), Path(lexical), _posix_rel(real, root))


def _under(rel: str, area: str) -> bool:
    return rel == area or rel.startswith(area.rstrip("/") + "/")


def _area(rel: str, state_dir_name: str) -> str | None:
    """ "git" or "state" when `rel` is in one of the areas the tools keep out of; else None."""
    if rel in ("", "."):
        return None
    if is_git_control_path(rel):
        return "git"
    if _under(rel, PurePosixPath(state_dir_name).as_posix()):
        return "state"
    return None


def _areas(path: str | RepoPath, state_dir_name: str) -> tuple[str, str, str] | None:
    """(area, lexical rel, the spelling that is in it) for the first spelling in an area.

    A RepoPath is judged by where it leads too: a committed link `meta -> .git`
    stays inside the repo, so only its target says that `meta/config` is .git/config."""
    spellings = path.spellings() if isinstance(path, RepoPath) else (path,)
    for spelling in spellings:
        area = _area(spelling, state_dir_name)
        if area is not None:
            return area, spellings[0], spelling
    return None


def is_protected(rel: str | RepoPath, state_dir_name: str) -> bool:
    """True for paths the agent must never write: .git/ and the state folder."""
    return _areas(rel, state_dir_name) is not None


def hidden_area(rel: str | RepoPath, state_dir_name: str) -> str | None:
    """Why the tools will not show `rel`: inside .git/ or the state folder; else None."""
    found = _areas(rel, state_dir_name)
    if found is None:
        return None
    area, shown, spelling = found
    where = (
        f"'{shown}'" if spelling == shown else f"'{shown}' leads to '{spelling}' (a symlink), so it"
    )
    if area == "git":
        return (
            f"{where} is inside .git/, whose internals the tools do not show; "
            "use git commands (git log, git show, git status) in the terminal"
        )
    return (
        f"{where} is inside hello-tui's state folder; use the note, todo and memory "
        "tools for what is kept there"
    )


# How long one .gitignore pattern may take to match one path, in seconds.
IGNORE_MATCH_SECONDS = 0.05


class _BoundedRegex:
    """A .gitignore pattern's regular expression, matched by `regex` within a deadline.

    pathspec compiles patterns with `re`, which backtracks for hours on a repository's
    `*a*a*a…*b` against a long name, in every walk (ls, glob, grep, the @ index). A
    pattern that runs out of time once never matches again: ignore rules only hide
    files, and what must never show (.git/, the state folder, env files) is judged apart."""

    __slots__ = ("_compiled", "_dead", "pattern")

    def __init__(self, source: str) -> None:
        self.pattern = source
        self._compiled = regex.compile(source)
        self._dead = False

    def search(self, text: str) -> regex.Match[str] | None:
        return self._bounded(self._compiled.search, text)

    def match(self, text: str) -> regex.Match[str] | None:
        return self._bounded(self._compiled.match, text)

    def _bounded(self, how: Callable[..., regex.Match[str] | None], text: str):
        if self._dead:
            return None
        try:
            return how(text, timeout=IGNORE_MATCH_SECONDS)
        except TimeoutError:
            self._dead = True
            return None


def ignore_spec(lines: Iterable[str]) -> GitIgnoreSpec:
    """`GitIgnoreSpec.from_lines`, each pattern matched within a deadline (`_BoundedRegex`)."""
    spec = GitIgnoreSpec.from_lines(lines)
    for pattern in spec.patterns:
        compiled = getattr(pattern, "regex", None)
        if compiled is not None and isinstance(compiled.pattern, str):
            pattern.regex = _BoundedRegex(compiled.pattern)  # type: ignore[attr-defined,assignment]
    return spec


@dataclass(frozen=True)
class Entry:
    """One visible directory entry; `rel` is relative to the repo, POSIX."""

    rel: str
    name: str
    kind: str  # dir | file | symlink | other
    path: Path


def rebase_ignore_line(line: str, base: str) -> str | None:
    """Rewrite one .gitignore line of directory `base` so it holds at the repo root."""
    stripped = line.rstrip("\n").rstrip("\r")
    if not stripped.strip() or stripped.startswith("#"):
        return None
    negate = stripped.startswith("!")
    body = stripped[1:] if negate else stripped
    if not base or base == ".":
        return stripped
    # A pattern with a slash before its end is anchored to its .gitignore's folder.
    anchored = "/" in body.rstrip("/")
    rebased = f"/{base}/{body.lstrip('/')}" if anchored else f"/{base}/**/{body}"
    return ("!" if negate else "") + rebased


class VisibleTree:
    """Which files the tools see, following .gitignore the way git and rg do."""

    def __init__(self, repo: Path, state_dir_name: str, *, include_hidden: bool) -> None:
        self.repo = Path(os.path.realpath(repo))
        self.state_dir_name = state_dir_name
        self.include_hidden = include_hidden
        self._specs: dict[str, GitIgnoreSpec | None] = {}
        self._floor = 0  # .gitignore files above this depth do not count

    def open_explicit(self, start_rel: str) -> None:
        """An ignored folder asked for by name is shown; only its own .gitignore files apply.

        This is what rg does with an ignored path given on its command line.
        """
        parts = PurePosixPath(start_rel).parts if start_rel != "." else ()
        for depth in range(1, len(parts) + 1):
            if self.is_ignored("/".join(parts[:depth]), is_dir=True):
                self._floor = len(parts)
                return

    def _spec_for(self, dir_rel: str) -> GitIgnoreSpec | None:
        if dir_rel not in self._specs:
            ignore_file = (
                (self.repo / dir_rel / ".gitignore")
                if dir_rel != "."
                else (self.repo / ".gitignore")
            )
            spec = None
            try:
                if ignore_file.is_file():
                    lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
                    spec = ignore_spec(lines)
            except OSError:
                spec = None
            self._specs[dir_rel] = spec
        return self._specs[dir_rel]

    def ignore_files_above(self, dir_rel: str) -> list[tuple[str, Path]]:
        """The .gitignore files from the repo root down to (not including) `dir_rel`."""
        found: list[tuple[str, Path]] = []
        parts = PurePosixPath(dir_rel).parts if dir_rel != "." else ()
        for depth in range(self._floor, len(parts)):
            base = "/".join(parts[:depth]) or "."
            candidate = self.repo / base / ".gitignore"
            if candidate.is_file():
                found.append((base, candidate))
        return found

    def is_ignored(self, rel: str, is_dir: bool) -> bool:
        """git's rule: the deepest .gitignore with an opinion wins."""
        parts = PurePosixPath(rel).parts
        for depth in range(len(parts) - 1, self._floor - 1, -1):
            base = "/".join(parts[:depth]) or "."
            spec = self._spec_for(base)
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            verdict = spec.check_file(sub).include
            if verdict is not None:
                return bool(verdict)
        return False

    def hidden_by_name(self, name: str) -> bool:
        if is_dot_git(name) or name == self.state_dir_name:
            return True
        return not self.include_hidden and name.startswith(".")

    def hidden_path(self, rel: str) -> bool:
        """Is any folder on the way to `rel` (or `rel` itself) one the walker hides?"""
        parts = PurePosixPath(rel).parts
        if hidden_area(rel, self.state_dir_name) is not None:
            return True
        return any(self.hidden_by_name(part) for part in parts) or any(
            self.is_ignored("/".join(parts[: i + 1]), is_dir=i < len(parts) - 1)
            for i in range(len(parts))
        )

    def children(self, dir_rel: str) -> list[Entry]:
        """Visible entries of one directory, sorted by name; unreadable folders are empty."""
        base = self.repo if dir_rel == "." else self.repo / dir_rel
        try:
            with os.scandir(base) as it:
                raw = list(it)
        except OSError:
            return []
        entries = []
        for item in raw:
            rel = item.name if dir_rel == "." else f"{dir_rel}/{item.name}"
            if self.hidden_by_name(item.name) or rel == self.state_dir_name:
                continue
            try:
                if item.is_symlink():
                    kind = "symlink"
                elif item.is_dir(follow_symlinks=False):
                    kind = "dir"
                elif item.is_file(follow_symlinks=False):
                    kind = "file"
                else:
                    kind = "other"
            except OSError:
                continue
            if self.is_ignored(rel, kind == "dir"):
                continue
            entries.append(Entry(rel, item.name, kind, Path(item.path)))
        entries.sort(key=lambda e: e.name)
        return entries

    def walk(self, start_rel: str) -> Iterator[Entry]:
        """Every visible entry below `start_rel`, depth first; symlinks are never followed."""
        stack = [start_rel]
        while stack:
            current = stack.pop()
            kids = self.children(current)
            yield from kids
            stack.extend(e.rel for e in reversed(kids) if e.kind == "dir")

    def files_named(
        self,
        start_rel: str,
        pick: Callable[[list[str]], Iterable[str]],
        listed: list[tuple[str, int]] | None = None,
    ) -> list[str]:
        """The visible regular files below `start_rel` whose names `pick` chooses, sorted.

        What `walk` would yield, but only folders and the chosen files pay for the
        .gitignore check, and a folder without subfolders is only listed: finding the
        few env files of a 10,000-file tree costs about a folder listing, so a search
        can run it beside rg without being slower. `listed` gets every folder read, with its mtime from before it was read."""
        found: list[str] = []
        root = str(self.repo)
        stack = [(start_rel, _stat(os.path.join(root, start_rel)))]
        while stack:
            current, (links, mtime) = stack.pop()
            base = root if current == "." else os.path.join(root, current)
            prefix = "" if current == "." else current + "/"
            if listed is not None:
                listed.append((base, mtime))
            try:
                if links == 2:
                    # A folder's link count is 2 + its subfolders where the file system
                    # counts them (ext4, xfs, tmpfs; btrfs says 1, so it is scanned): a
                    # leaf is listed by name only. A file system that said 2 wrongly could
                    # only make a note undercount; what a search shows is judged apart.
                    names = os.listdir(base)
                    kids = [(n, False) for n in pick(names) if _is_regular(os.path.join(base, n))]
                else:
                    with os.scandir(base) as it:
                        items = list(it)
                    chosen = set(pick([item.name for item in items]))
                    kids = [
                        (item.name, is_dir)
                        for item in items
                        # Symlinks are never followed: neither entered nor read.
                        if (is_dir := item.is_dir(follow_symlinks=False))
                        or (item.name in chosen and item.is_file(follow_symlinks=False))
                    ]
            except OSError:
                continue
            for name, is_dir in kids:
                rel = prefix + name
                if self.hidden_by_name(name) or rel == self.state_dir_name:
                    continue
                if self.is_ignored(rel, is_dir):
                    continue
                if is_dir:
                    stack.append((rel, _stat(os.path.join(base, name))))
                else:
                    found.append(rel)
        return sorted(found)


def _stat(path: str) -> tuple[int, int]:
    """(link count, mtime in ns) of a folder; (0, -1) if it cannot be read."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0, -1
    return st.st_nlink, st.st_mtime_ns


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
