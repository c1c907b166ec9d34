"""The repository's file list for `@` completion: built once in the background, searched fast.

The list is what the tools see (`VisibleTree`: .gitignore files at every level,
git's rules, `.git/` and the state folder left out), minus `.env`-style files,
whose secrets must never ride along with a message. Searching never waits for
the walk: it looks at what has been found so far.

A search ranks in tiers and stops once it has enough: file names starting with
the query, then paths containing it, then paths containing its characters in
order (fuzzy). All paths are joined into one lower-cased string, and the
scanning is `str.find` and one unanchored regular expression over it, both in
C; that keeps the first results of a 100,000-file repository inside a keystroke.
"""

from __future__ import annotations

import bisect
import re
import threading
from pathlib import Path

from hello_tui.core.env_names import is_env_file
from hello_tui.tools.env_files import reaches_env_file
from hello_tui.tools.paths import PathError, VisibleTree, hidden_area, resolve_repo_path

# How much of an attached file goes with a message (characters); the rest is cut.
ATTACH_BUDGET_CHARS = 12_000


class FileIndex:
    def __init__(self, repo: Path, state_dir_name: str) -> None:
        self.repo = repo
        self.state_dir_name = state_dir_name
        self._paths: list[str] = []
        self._lock = threading.Lock()
        self._joined = ""
        self._joined_count = -1
        self._originals: list[str] = []
        self._starts: list[int] = []
        self.ready = False
        self.error = ""

    def build(self) -> None:
        """Walk the repository (blocking: run it on a thread). Shallow files come first."""
        tree = VisibleTree(self.repo, self.state_dir_name, include_hidden=True)
        try:
            batch: list[str] = []
            for entry in tree.walk("."):
                # A walk follows no link, so an entry's own name is where it leads.
                if entry.kind != "file" or is_env_file(entry.rel) or "\n" in entry.rel:
                    continue
                batch.append(entry.rel)
                if len(batch) >= 2000:
                    self._add(batch)
                    batch = []
            self._add(batch)
        except OSError as exc:
            self.error = str(exc)
        with self._lock:
            self._paths.sort(key=lambda p: (p.count("/"), p))
        self.ready = True

    def _add(self, paths: list[str]) -> None:
        with self._lock:
            self._paths.extend(paths)

    @property
    def count(self) -> int:
        return len(self._paths)

    def __contains__(self, rel: str) -> bool:
        with self._lock:
            return rel in self._paths

    def _haystack(self) -> str:
        """All paths, lower-cased, one a line (rebuilt only when the walk found more)."""
        with self._lock:
            if self._joined_count != len(self._paths):
                self._joined = "\n" + "\n".join(self._paths).lower() + "\n"
                self._originals = list(self._paths)
                self._starts = _line_starts(self._joined)
                self._joined_count = len(self._paths)
            return self._joined

    def search(self, query: str, limit: int = 20) -> list[str]:
        """Up to `limit` paths for what was typed after `@`, best first ("" lists the top)."""
        haystack = self._haystack()
        query = query.strip().lower()
        if not query or "\n" in query:
            return self._originals[:limit] if not query else []
        # File names starting with the query: after a slash or a line start, no slash after.
        name_start = re.compile(f"[/\n]{re.escape(query)}[^/\n]*(?=\n)")
        found: list[int] = []
        for match in name_start.finditer(haystack):
            found.append(bisect.bisect_right(self._starts, match.start() + 1) - 1)
            if len(found) >= limit:
                return [self._originals[n] for n in found]
        named = set(found)
        # Paths containing it: one hit per line, stopping once there are enough.
        at = haystack.find(query)
        while at != -1 and len(found) < limit:
            line = bisect.bisect_right(self._starts, at) - 1
            if line not in named:
                found.append(line)
                named.add(line)
            next_line = self._starts[line + 1] if line + 1 < len(self._starts) else len(haystack)
            at = haystack.find(query, next_line)
        if len(found) < limit:
            found += self._fuzzy(haystack, query, limit - len(found), named)
        return [self._originals[n] for n in found[:limit]]

    def _fuzzy(self, haystack: str, query: str, want: int, skip: set[int]) -> list[int]:
        """Lines holding the query's characters in order (the regex scans in C, within a line)."""
        pattern = re.compile("[^\n]*?".join(re.escape(ch) for ch in query))
        lines: list[int] = []
        position = 0
        while len(lines) < want:
            match = pattern.search(haystack, position)
            if match is None:
                break
            line = bisect.bisect_right(self._starts, match.start()) - 1
            if line not in skip:
                lines.append(line)
            # Go on from the next line: one hit per path.
            position = self._starts[line + 1] if line + 1 < len(self._starts) else len(haystack)
        return lines


def _line_starts(joined: str) -> list[int]:
    """Where each path's line starts in `joined` (which begins with a newline)."""
    starts = []
    at = joined.find("\n")
    while at != -1 and at + 1 < len(joined):
        starts.append(at + 1)
        at = joined.find("\n", at + 1)
    return starts


def read_attachment(
    repo: Path, rel: str, budget: int = ATTACH_BUDGET_CHARS, *, state_dir_name: str = ".helloagents"
) -> tuple[str, bool]:
    """A file's text for a message, cut to `budget` characters: (text, was it cut).

    Raises ValueError for a path outside the repo or inside .git/ or the state folder,
    an env file (by name or, through links, by target: `notes.txt -> .env`, or a hard link), or a
    binary file: the same lines the file tools keep."""
    try:
        target = resolve_repo_path(repo, rel)
    except PathError:
        raise ValueError(f"{rel} is not a file in the repository") from None
    if hidden_area(target, state_dir_name) is not None:
        raise ValueError(f"{rel} is inside .git/ or the state folder; it is not attached")
    path = target.path
    if not path.is_file():
        raise ValueError(f"{rel} is not a file in the repository")
    if reaches_env_file(path, repo):
        raise ValueError(f"{rel} may hold secrets; it is not attached")
    with path.open("rb") as handle:
        raw = handle.read(budget * 4 + 4)
    if b"\0" in raw[:8192]:
        raise ValueError(f"{rel} is a binary file; it is not attached")
    text = raw.decode("utf-8", errors="replace")
    cut = len(text) > budget or path.stat().st_size > len(raw)
    return text[:budget], cut
