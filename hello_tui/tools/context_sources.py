"""The four sources `context_fetch` searches: repository files, notes, memory, test failures.

Each source turns a query into scored `Snippet`s and can give a cheap
fingerprint of what it would read, so the tool's cache notices any change.
The files source runs rg as an argv list (never a shell; the query is passed
after `-e`, so a leading `-` stays a pattern) through the terminal's runner
(read-only sandbox, timeout, cancellation), with a pure-Python fallback that
sees the same files and gives up after the same time. Test reports reached
through a symbolic link, or lying outside the repo, are never read. Env files
met on a walk are left out (`env_skips`; the fingerprint lists them, so the
tool can say so), whichever back end searches. A source
that cannot search raises `SourceFailed`, which is reported apart from
"found nothing".
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import regex

from hello_tui.core.env_names import env_folder_in, is_env_file
from hello_tui.store.memory import MemoryStore
from hello_tui.store.notes import NoteStore
from hello_tui.tools.env_files import linked_env_check
from hello_tui.tools.env_skips import EnvFilter
from hello_tui.tools.paths import VisibleTree
from hello_tui.tools.shell.runner import CommandScope, RunConfig, program_folder, run_command

CONTEXT_LINES = 5
MAX_MATCHES_PER_FILE = 10
MAX_TOTAL_MATCHES = 2000
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_LINE_CHARS = 300
RG_TIMEOUT = 30.0
JUNIT_PATTERNS = (re.compile(r"^junit.*\.xml$", re.IGNORECASE), re.compile(r"^TEST-.*\.xml$"))
JUNIT_MAX_FILES = 20
JUNIT_MAX_BYTES = 5 * 1024 * 1024
JUNIT_MAX_DEPTH = 5
# Folders never worth walking for test reports: dependencies, caches, VCS.
JUNIT_PRUNE = {".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache"}
MAX_FAILURE_CHARS = 600


class SourceFailed(Exception):
    """The source could not be searched; the message is for the model."""


@dataclass
class Snippet:
    source: str  # files | notes | memory | tests
    title: str  # where it comes from: "src/a.py:10-20", "[note_x] title", ...
    body: str
    score: float
    data: dict[str, Any] = field(default_factory=dict)


def _cut(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return line[:MAX_LINE_CHARS] + f" … [{len(line) - MAX_LINE_CHARS} more chars]"


def smart_case_pattern(query: str, is_regex: bool) -> regex.Pattern[str]:
    """rg's --smart-case in Python: case-insensitive unless the query has an upper-case letter."""
    flags = 0 if any(c.isupper() for c in query) else regex.IGNORECASE
    try:
        return regex.compile(query if is_regex else regex.escape(query), flags)
    except regex.error as exc:
        raise SourceFailed(f"invalid regular expression {query!r}: {exc}") from None


def _search_within(pattern: regex.Pattern[str], text: str, end: float) -> bool:
    """One match test that gives up at `end` (a monotonic time) instead of hanging."""
    left = end - time.monotonic()
    try:
        if left <= 0:
            raise TimeoutError
        return pattern.search(text, timeout=left, concurrent=True) is not None
    except TimeoutError:
        raise SourceFailed(
            f"the search gave up after {RG_TIMEOUT:g} s: the pattern takes too long to match "
            "(nested repetition such as (a+)+ backtracks); simplify it"
        ) from None


# --------------------------------------------------------------------------- files


@dataclass
class _FileLines:
    """Matched and context lines of one file, in line order."""

    path: str
    lines: dict[int, tuple[str, bool]] = field(default_factory=dict)  # line -> (text, is_match)

    def add(self, number: int, text: str, is_match: bool) -> None:
        old = self.lines.get(number)
        self.lines[number] = (text, is_match or (old is not None and old[1]))


def _blocks(fl: _FileLines, query: str) -> list[Snippet]:
    """Runs of consecutive lines become one snippet each."""
    snippets: list[Snippet] = []
    numbers = sorted(fl.lines)
    run: list[int] = []
    for n in numbers + [None]:  # type: ignore[list-item]
        if run and (n is None or n != run[-1] + 1):
            matches = sum(1 for k in run if fl.lines[k][1])
            if matches:
                body = "\n".join(
                    f"{k:>6}{':' if fl.lines[k][1] else '-'} {_cut(fl.lines[k][0])}" for k in run
                )
                # More matches rank higher; a query naming the file ranks it higher still.
                score = float(matches) + (3.0 if query.lower() in fl.path.lower() else 0.0)
                snippets.append(
                    Snippet(
                        "files",
                        f"{fl.path}:{run[0]}-{run[-1]}",
                        body,
                        score,
                        {"path": fl.path, "start": run[0], "end": run[-1], "matches": matches},
                    )
                )
            run = []
        if n is not None:
            run.append(n)
    return snippets


def _rg_text(obj: dict | None) -> str:
    if not obj:
        return ""
    if "text" in obj:
        return obj["text"]
    return base64.b64decode(obj.get("bytes", "")).decode("utf-8", errors="replace")


async def search_files_rg(
    rg: str,
    config: RunConfig,
    rels: list[str],
    query: str,
    is_regex: bool,
    state_dir: str,
    named: set[str] | None = None,
) -> tuple[list[Snippet], bool]:
    """(snippets, truncated) from rg --json, run in the read-only sandbox; no shell.

    rg knows no env-file rule: its env-file hits are dropped as they arrive, before
    they count toward the cap, so what is shown or truncated says nothing about them;
    `named` are files the model named (the user allowed them)."""
    argv = [
        rg,
        "--json",
        "--no-config",
        "--no-require-git",
        "--smart-case",
        f"--context={CONTEXT_LINES}",
        f"--max-count={MAX_MATCHES_PER_FILE}",
        "--max-filesize=2M",
        f"--glob=!{state_dir}",
        "--glob=!.git",
    ]
    if not is_regex:
        argv.append("--fixed-strings")
    argv += ["-e", query, "--", *rels]
    files: dict[str, _FileLines] = {}
    matches = 0
    truncated = False
    enough = asyncio.Event()
    pending = [""]
    env = EnvFilter(config.repo, named or set())

    def consume(text: str, stream: str) -> None:
        nonlocal matches, truncated
        if stream != "stdout" or enough.is_set():
            return
        lines = (pending[0] + text).split("\n")
        pending[0] = lines.pop()
        for raw in lines:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            kind = event.get("type")
            if kind not in ("match", "context"):
                continue
            data = event["data"]
            path = _rg_text(data.get("path")).removeprefix("./")
            if env.drops(path):
                continue
            line = _rg_text(data.get("lines")).rstrip("\r\n")
            fl = files.setdefault(path, _FileLines(path))
            fl.add(int(data["line_number"]), line, kind == "match")
            if kind == "match":
                matches += 1
                if matches >= MAX_TOTAL_MATCHES:
                    truncated = True
                    enough.set()  # stops rg
                    return

    with CommandScope(config, extra_read=program_folder(rg)) as scope:
        outcome = await run_command(
            argv,
            cwd=config.repo,
            config=config,
            mode="read-only",
            timeout=RG_TIMEOUT,
            on_output=consume,
            cancel=enough,
            output_limit=1024 * 1024,
            stream_all=True,
            scope=scope,
        )
    if outcome.start_error:
        raise SourceFailed(f"could not start rg: {outcome.start_error}")
    truncated = truncated or outcome.timed_out
    if outcome.exit_code == 2 and not files and not truncated:
        first = outcome.stderr.text().strip().splitlines()
        raise SourceFailed(
            "rg could not search: " + (" ".join(first[:6]) or f"exit {outcome.exit_code}")
        )
    snippets = [s for fl in files.values() for s in _blocks(fl, query)]
    return snippets, truncated


def _is_binary(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return b"\x00" in fh.read(8192)
    except OSError:
        return True


def _candidate_files(
    repo: Path, rels: list[str], state_dir: str, env_skipped: list[str] | None = None
) -> Iterable[tuple[str, Path]]:
    """Named files, and the files a walk of each folder reads; env files met on the walk
    are left out (and put in `env_skipped`). A walk follows no link, so a walked file's
    own name is what `reaches_env_file` would judge."""
    tree = VisibleTree(repo, state_dir, include_hidden=False)
    linked_env = linked_env_check(repo)  # None: no env file has a second name (a hard link)
    for rel in rels:
        target = repo / rel if rel != "." else repo
        if target.is_file():
            yield rel, target
            continue
        for entry in tree.walk(rel):
            if entry.kind != "file":
                continue
            if (
                is_env_file(entry.name)
                or env_folder_in(entry.rel)
                or (linked_env is not None and linked_env(os.fspath(entry.path)))
            ):
                if env_skipped is not None and entry.rel not in rels:
                    env_skipped.append(entry.rel)
                continue
            yield entry.rel, entry.path


def search_files_python(
    repo: Path, rels: list[str], query: str, is_regex: bool, state_dir: str
) -> tuple[list[Snippet], bool]:
    """The same search without rg: same files (gitignore, hidden), same context, same caps."""
    pattern = smart_case_pattern(query, is_regex)
    end = time.monotonic() + RG_TIMEOUT
    snippets: list[Snippet] = []
    total = 0
    for rel, path in _candidate_files(repo, rels, state_dir):
        try:
            if path.stat().st_size > MAX_FILE_BYTES or _is_binary(path):
                continue
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        fl = _FileLines(rel)
        found = 0
        for index, line in enumerate(lines):
            if not _search_within(pattern, line, end):
                continue
            found += 1
            first, last = max(0, index - CONTEXT_LINES), min(len(lines), index + CONTEXT_LINES + 1)
            for k in range(first, last):
                fl.add(k + 1, lines[k], k == index)
            total += 1
            if found >= MAX_MATCHES_PER_FILE or total >= MAX_TOTAL_MATCHES:
                break
        snippets += _blocks(fl, query)
        if total >= MAX_TOTAL_MATCHES:
            return snippets, True
    return snippets, False


class FilesFingerprint(NamedTuple):
    """What the files search could read (files, newest mtime in ns, total size), and
    the env files it leaves out, which the tool reports (so they are part of the key)."""

    files: int
    newest: int
    size: int
    env_skipped: tuple[str, ...]


def files_fingerprint(repo: Path, rels: list[str], state_dir: str) -> FilesFingerprint:
    count = newest = size = 0
    skipped: list[str] = []
    for _, path in _candidate_files(repo, rels, state_dir, skipped):
        try:
            st = path.stat()
        except OSError:
            continue
        count += 1
        newest = max(newest, st.st_mtime_ns)
        size += st.st_size
    return FilesFingerprint(count, newest, size, tuple(sorted(set(skipped))))


# --------------------------------------------------------------------------- notes and memory


def _excerpt(text: str, query: str, width: int = 400) -> str:
    flat = " ".join(text.split())
    at = flat.lower().find(query.lower())
    if at < 0 or len(flat) <= width:
        return flat[:width] + ("…" if len(flat) > width else "")
    start = max(0, at - width // 3)
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


def search_notes(notes_dir: Path, query: str) -> list[Snippet]:
    notes = NoteStore(notes_dir).search(query, limit=10)
    return [
        Snippet(
            "notes",
            f"[{n.id}] ({n.note_type}) {' '.join(n.title.split())}",
            _excerpt(n.content, query),
            float(len(notes) - rank),
            {"id": n.id, "title": n.title, "note_type": n.note_type},
        )
        for rank, n in enumerate(notes)
    ]


def search_memory(memory_dir: Path, query: str) -> list[Snippet]:
    found = MemoryStore(memory_dir).search(query, limit=10)
    return [
        Snippet(
            "memory",
            f"[{m.id}] (importance {m.importance:.2f})",
            _excerpt(m.content, query),
            float(m.score or 0.0),
            {"id": m.id, "importance": m.importance},
        )
        for m in found
    ]


def dir_fingerprint(folder: Path) -> tuple:
    """Stat of every file in one folder (notes, memory): small folders, exact answer."""
    try:
        return tuple(
            sorted((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in folder.iterdir())
        )
    except OSError:
        return ()


# --------------------------------------------------------------------------- tests


def inside_without_links(repo: Path, path: Path) -> bool:
    """Is `path` a real file inside the repo, reached through no symbolic link?"""
    try:
        relative = path.relative_to(repo)
    except ValueError:
        return False
    current = repo
    for part in relative.parts:
        current = current / part
        if current.is_symlink():
            return False
    return path.is_file() and Path(os.path.realpath(path)).is_relative_to(
        Path(os.path.realpath(repo))
    )


def junit_files(repo: Path, state_dir: str) -> list[Path]:
    """JUnit XML reports (junit*.xml, TEST-*.xml) near the top of the repo, build dirs included.

    os.walk does not enter linked folders; linked report files are skipped too,
    since a `junit-report.xml -> /elsewhere/secret` would be read as a report.
    """
    found: list[Path] = []
    root_depth = len(repo.parts)
    for folder, dirs, files in os.walk(repo):
        depth = len(Path(folder).parts) - root_depth
        dirs[:] = sorted(
            d for d in dirs if d not in JUNIT_PRUNE and d != state_dir and depth < JUNIT_MAX_DEPTH
        )
        for name in sorted(files):
            if any(p.match(name) for p in JUNIT_PATTERNS):
                path = Path(folder) / name
                if not inside_without_links(repo, path):
                    continue
                found.append(path)
                if len(found) >= JUNIT_MAX_FILES:
                    return found
    return found


def _lastfailed_path(repo: Path) -> Path:
    return repo / ".pytest_cache" / "v" / "cache" / "lastfailed"


def tests_fingerprint(repo: Path, state_dir: str) -> tuple:
    paths = [_lastfailed_path(repo), *junit_files(repo, state_dir)]
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append((str(p), st.st_mtime_ns, st.st_size))
        except OSError:
            continue
    return tuple(out)


def _relevance(text: str, query: str) -> float:
    low, q = text.lower(), query.lower()
    terms = [t for t in q.split() if t]
    return (3.0 if q in low else 0.0) + sum(1.0 for t in terms if t in low)


def search_tests(repo: Path, query: str, state_dir: str) -> list[Snippet]:
    """Last pytest failures and JUnit failures; the ones mentioning the query rank first."""
    snippets: list[Snippet] = []
    problems: list[str] = []
    lastfailed = _lastfailed_path(repo)
    if inside_without_links(repo, lastfailed):
        try:
            failed = json.loads(lastfailed.read_text(encoding="utf-8"))
            node_ids = [str(k) for k in failed] if isinstance(failed, dict) else []
        except (OSError, ValueError) as exc:
            problems.append(f".pytest_cache lastfailed unreadable: {exc}")
            node_ids = []
        for node_id in node_ids[:50]:
            snippets.append(
                Snippet(
                    "tests",
                    node_id,
                    "failed in the last pytest run (from .pytest_cache)",
                    1.0 + _relevance(node_id, query),
                    {"node_id": node_id, "origin": "pytest-cache"},
                )
            )
    for report in junit_files(repo, state_dir):
        rel = report.relative_to(repo).as_posix()
        try:
            if report.stat().st_size > JUNIT_MAX_BYTES:
                problems.append(f"{rel} is larger than {JUNIT_MAX_BYTES // 1024 // 1024} MB")
                continue
            root = ET.parse(report).getroot()
        except (OSError, ET.ParseError) as exc:
            problems.append(f"{rel} is not readable XML: {exc}")
            continue
        for case in root.iter("testcase"):
            bad = next((c for c in case if c.tag in ("failure", "error")), None)
            if bad is None:
                continue
            name = "::".join(x for x in (case.get("classname"), case.get("name")) if x)
            message = (bad.get("message") or "").strip()
            detail = (bad.text or "").strip()
            body = " — ".join(x for x in (message, detail) if x)[:MAX_FAILURE_CHARS]
            snippets.append(
                Snippet(
                    "tests",
                    f"{name} ({bad.tag}, {rel})",
                    body or f"{bad.tag} without a message",
                    2.0 + _relevance(f"{name} {body}", query),
                    {"test": name, "kind": bad.tag, "report": rel, "origin": "junit"},
                )
            )
    if problems and not snippets:
        raise SourceFailed("; ".join(problems))
    return snippets
