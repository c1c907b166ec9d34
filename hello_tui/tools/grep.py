"""The `grep` tool: ripgrep underneath, a pure-Python fallback with the same output.

Both back ends see the same files: hidden files and .gitignored ones are
skipped (rg's defaults), `.git/` and the state folder never appear (not even
through `path` or `glob`), symlinks are not followed. Both produce the same
structure (files sorted by path, line numbers, context lines), which one
formatter turns into the model's text, so the model cannot tell which back
end ran. Set HELLO_TUI_GREP=python (or pass `force_python=True`) to use the
fallback.

rg runs through the terminal's runner: in the read-only sandbox, with a
timeout, and stopped when the turn is cancelled. The fallback is bounded by
the same timeout (the `regex` module gives up on a pattern such as `(a+)+$`
instead of hanging). Searching a `.env` file asks the user first; a search of
a folder skips env files (`env_skips`) and says so.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import regex
from pathspec import GitIgnoreSpec
from pydantic import Field

from hello_tui.core.env_names import env_folder_in, is_env_file
from hello_tui.core.git_layout import is_dot_git
from hello_tui.core.tools import Tool, ToolArgs, ToolContext, ToolResult
from hello_tui.tools.env_files import approve_env_read, linked_env_check, reaches_env_file
from hello_tui.tools.env_skips import (
    EnvFilter,
    known_env_files,
    skipped_note,
    walked_env_files,
)
from hello_tui.tools.paths import (
    PathError,
    VisibleTree,
    hidden_area,
    ignore_spec,
    rebase_ignore_line,
    resolve_repo_path,
)
from hello_tui.tools.shell import sandbox
from hello_tui.tools.shell.runner import CommandScope, RunConfig, program_folder, run_command

GREP_DEFAULT_MAX_RESULTS = 100
GREP_MAX_LINE_CHARS = 300
BINARY_SNIFF_BYTES = 8192
SEARCH_TIMEOUT = 30.0  # seconds, for rg and for the fallback alike
RG_OUTPUT_LIMIT = 64 * 1024 * 1024


@dataclass
class Hit:
    line: int
    text: str
    is_match: bool


@dataclass
class FileHits:
    path: str
    hits: list[Hit] = field(default_factory=list)


class GrepFailed(Exception):
    """The search could not run (bad regex, unreadable path); the message is for the model."""


class GrepArgs(ToolArgs):
    pattern: str
    path: str = "."
    glob: str | None = Field(None, description="e.g. '*.py'; '!tests/**' excludes.")
    fixed_strings: bool = False
    ignore_case: bool = False
    context: int = Field(0, ge=0, le=20)
    max_results: int = Field(GREP_DEFAULT_MAX_RESULTS, ge=1, le=2000)


def _glob_specs(args: GrepArgs) -> tuple[GitIgnoreSpec | None, GitIgnoreSpec | None]:
    """(include, exclude) for the `glob` argument: a glob narrows, '!glob' excludes."""
    if not args.glob:
        return None, None
    negated = args.glob.startswith("!")
    spec = ignore_spec([args.glob[1:] if negated else args.glob])
    return (None, spec) if negated else (spec, None)


def _glob_filter(args: GrepArgs) -> Callable[[str], bool]:
    """Whether a file (relative to the searched folder) passes the `glob` argument."""
    include, exclude = _glob_specs(args)

    def keeps(inner: str) -> bool:
        if exclude is not None and exclude.match_file(inner):
            return False
        return include is None or bool(include.match_file(inner))

    return keeps


def find_rg() -> str | None:
    """The rg binary: on PATH, or next to the Python running us (the pinned wheel's place)."""
    found = shutil.which("rg")
    if found:
        return found
    for folder in (Path(sys.executable).parent, Path(sys.prefix) / "bin"):
        candidate = folder / ("rg.exe" if os.name == "nt" else "rg")
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _cut(text: str) -> str:
    if len(text) <= GREP_MAX_LINE_CHARS:
        return text
    return text[:GREP_MAX_LINE_CHARS] + f" … [{len(text) - GREP_MAX_LINE_CHARS} more chars]"


ENV_HOW = "give it as the path"


def format_results(
    files: list[FileHits], args: GrepArgs, searched: str, env_skipped: list[str] | None = None
) -> ToolResult:
    """The one output format of both back ends."""
    files = sorted((f for f in files if any(h.is_match for h in f.hits)), key=lambda f: f.path)
    total = sum(1 for f in files for h in f.hits if h.is_match)
    skipped = env_skipped or []
    note = f"\n{skipped_note(skipped, ENV_HOW)}" if skipped else ""
    if total == 0:
        data = {"pattern": args.pattern, "files": [], "total_matches": 0, "omitted": 0}
        if skipped:
            data["env_files_skipped"] = skipped
        return ToolResult.ok(f"No matches for {args.pattern!r} in {searched}.{note}", data=data)
    lines: list[str] = []
    data_files: list[dict] = []
    shown = 0
    for fh in files:
        if shown >= args.max_results:
            break
        kept: list[Hit] = []
        last_match_line = 0
        for hit in fh.hits:
            if hit.is_match:
                if shown >= args.max_results:
                    break
                shown += 1
                last_match_line = hit.line
            elif shown >= args.max_results and hit.line > last_match_line + args.context:
                # After the cap only the shown match's own trailing context stays.
                break
            kept.append(hit)
        lines.append(fh.path)
        previous = None
        for hit in kept:
            if previous is not None and hit.line > previous + 1:
                lines.append("  --")
            sep = ":" if hit.is_match else "-"
            lines.append(f"{hit.line:>6}{sep} {_cut(hit.text)}")
            previous = hit.line
        data_files.append(
            {
                "path": fh.path,
                "matches": [
                    {"line": h.line, "text": _cut(h.text), "match": h.is_match} for h in kept
                ],
            }
        )
    omitted = total - shown
    file_count = len(files)
    head = (
        f"{total} matching line{'s' if total != 1 else ''} "
        f"in {file_count} file{'s' if file_count != 1 else ''}"
    )
    text = head + ":\n" + "\n".join(lines)
    data = {
        "pattern": args.pattern,
        "files": data_files,
        "total_matches": total,
        "omitted": omitted,
    }
    if skipped:
        data["env_files_skipped"] = skipped
    if omitted:
        text += (
            f"\n… {omitted} more matching line{'s' if omitted != 1 else ''} not shown; "
            "narrow the pattern, path or glob."
        )
        return ToolResult.partial(text + note, data=data)
    return ToolResult.ok(text + note, data=data)


class Deadline:
    """One time budget for a whole fallback search; every regex call gets what is left."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def search(self, pattern: regex.Pattern[str], text: str) -> regex.Match[str] | None:
        left = self.end - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            return pattern.search(text, timeout=left, concurrent=True)
        except TimeoutError:
            raise GrepFailed(
                f"grep gave up after {self.seconds:g} s: the pattern takes too long to match "
                "(nested repetition such as (a+)+ backtracks); simplify it"
            ) from None


def _in_hidden_area(rel: str, state_dir_name: str) -> bool:
    """`rel` (a path rg printed) is in .git/ (at any depth, any spelling) or the state
    folder, or in a folder the walker hides by name whatever .gitignore says."""
    if hidden_area(rel, state_dir_name) is not None:
        return True
    return any(is_dot_git(part) or part == state_dir_name for part in rel.split("/"))


def _refused(text: str) -> ToolResult:
    """A path the tool will not search: an answer, not a failure of the tool."""
    return ToolResult(status="error", text=text, declined=True)


def _is_binary(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return b"\x00" in handle.read(BINARY_SNIFF_BYTES)
    except OSError:
        return False


class GrepTool(Tool):
    name = "grep"
    description = (
        "Search file contents with a regular expression (ripgrep); matches come with line numbers."
    )
    Args = GrepArgs

    def __init__(self, force_python: bool | None = None) -> None:
        if force_python is None:
            force_python = os.environ.get("HELLO_TUI_GREP", "").lower() == "python"
        self.rg = None if force_python else find_rg()

    async def run(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        if not args.pattern:
            return ToolResult.error("Empty pattern; give the text or regex to search for.")
        if "\n" in args.pattern or "\x00" in args.pattern:
            return ToolResult.error(
                "The pattern contains a newline or NUL byte; grep matches one line at a time."
            )
        try:
            target = resolve_repo_path(ctx.repo, args.path)
        except PathError as exc:
            return _refused(str(exc))
        hidden = hidden_area(target, ctx.settings.state_dir_name)
        if hidden:
            return _refused(f"Refused: {hidden}.")
        if not target.path.exists():
            return ToolResult.error(f"Path '{target.rel}' does not exist.")
        if target.path.is_file() and _is_binary(target.path):
            return ToolResult.error(f"'{target.rel}' is a binary file; grep searches text files.")
        # Judged by where it leads too: `notes.txt -> .env` (or a hard link) is the .env.
        if target.path.is_file() and reaches_env_file(target.path, ctx.repo):
            declined = await approve_env_read(ctx, "grep", target.rel)
            if declined is not None:
                return declined
        searched = "the repository" if target.rel == "." else f"'{target.rel}'"
        rel = target.rel
        if target.path.is_dir() and target.real_rel not in ("", rel):
            # A folder reached through a link (`cfg -> prod.env.d`) is searched where it is:
            # the walk judges each file by its path, and only that one says it is in an
            # env folder. Its files are shown by those paths.
            rel = target.real_rel
            searched = f"'{target.rel}' (that is, '{rel}')"
        confined_only = ctx.settings.sandbox == "require" and not sandbox.support().available
        skipped: list[str] = []
        try:
            if self.rg and not confined_only:
                files, skipped = await self._search_rg_without_env(args, ctx, rel)
            else:
                files, skipped = await asyncio.to_thread(self._search_python, args, ctx, rel)
        except GrepFailed as exc:
            return ToolResult.error(str(exc))
        return format_results(files, args, searched, skipped)

    async def _search_rg_without_env(
        self, args: GrepArgs, ctx: ToolContext, rel: str
    ) -> tuple[list[FileHits], list[str]]:
        """rg's hits minus env files, and the env files the walk left out.

        rg has no notion of the env-file rule, so what it prints is filtered here; the
        list of skipped files comes from a walk of the tree run beside rg (so it costs
        no time), never from the hits, which would tell what the files hold."""
        if (ctx.repo / rel).is_file():
            return await self._search_rg(args, ctx, rel), []
        state = ctx.settings.state_dir_name
        walked = known_env_files(ctx.repo, state, rel)
        if walked is not None:  # the usual case: nothing changed since the last search
            files = await self._search_rg(args, ctx, rel)
        else:
            walk = asyncio.ensure_future(asyncio.to_thread(walked_env_files, ctx.repo, state, rel))
            try:
                files = await self._search_rg(args, ctx, rel)
            finally:
                walked = await walk
        env = EnvFilter(ctx.repo, named=set())
        files = [f for f in files if not env.drops(f.path)]
        keeps = _glob_filter(args)
        prefix = "" if rel == "." else rel + "/"
        return files, [p for p in walked if keeps(p[len(prefix) :])]

    # ------------------------------------------------------------ rg

    async def _search_rg(self, args: GrepArgs, ctx: ToolContext, rel: str) -> list[FileHits]:
        tree = VisibleTree(ctx.repo, ctx.settings.state_dir_name, include_hidden=False)
        tree.open_explicit(rel)
        cmd = [
            self.rg or "rg",
            "--no-heading",
            "--with-filename",
            "--line-number",
            "--null",
            "--color=never",
            "--no-config",
            "--crlf",
            # Only the repository's own .gitignore files count, as in the fallback.
            "--no-require-git",
            "--no-ignore-parent",
            "--no-ignore-global",
            "--no-ignore-exclude",
            "--no-ignore-dot",
        ]
        if args.fixed_strings:
            cmd.append("--fixed-strings")
        if args.ignore_case:
            cmd.append("--ignore-case")
        if args.context:
            cmd.append(f"--context={args.context}")
        if args.glob:
            cmd.append(f"--glob={args.glob}")
        state = ctx.settings.state_dir_name
        if rel == "." and not state.startswith("."):
            cmd.append(f"--glob=!/{state}/")
        # Last, so no glob of the model's or whitelist of the repo's lets rg into .git/.
        cmd.append("--glob=!.git")
        config = RunConfig.from_settings(ctx.settings)
        with CommandScope(config, extra_read=program_folder(self.rg)) as scope:
            above = tree.ignore_files_above(rel) if rel != "." else []
            if above:
                # rg reads no .gitignore above the search path (so none outside the repo);
                # the repo's own ones above it are handed over rebased to the repo root.
                rules = []
                for base, path in above:
                    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                        rebased = rebase_ignore_line(line, base)
                        if rebased is not None:
                            rules.append(rebased)
                ignore_file = scope.tmp / "parents.gitignore"
                ignore_file.write_text("\n".join(rules) + "\n", encoding="utf-8")
                cmd.append(f"--ignore-file={ignore_file}")
            cmd += ["-e", args.pattern, "--", rel if rel != "." else "./"]
            outcome = await run_command(
                cmd,
                cwd=ctx.repo.resolve(),
                config=config,
                mode="read-only",
                timeout=SEARCH_TIMEOUT,
                output_limit=RG_OUTPUT_LIMIT,
                scope=scope,
            )
        if outcome.start_error:
            raise GrepFailed(f"grep could not search: {outcome.start_error}")
        if outcome.timed_out:
            raise GrepFailed(
                f"grep gave up after {SEARCH_TIMEOUT:g} s; narrow the pattern, path or glob"
            )
        stdout = outcome.stdout.data()
        if outcome.exit_code == 2 and not stdout:
            message = outcome.stderr.text().strip().removeprefix("rg: ")
            raise GrepFailed(f"grep could not search: {message}")
        files = self._parse_rg(stdout)
        # A whitelist in the repo's .gitignore (`!.git`, `!.helloagents/**`) makes rg walk
        # into hidden folders, .git/ and the state folder among them: those never show.
        files = [f for f in files if not _in_hidden_area(f.path, state)]
        if args.glob and not (ctx.repo / rel).is_file():
            # rg lets a --glob match override .gitignore and hidden-file rules (even
            # `**` reaches .git/); here a glob only narrows the search, as in the fallback.
            files = [f for f in files if not tree.hidden_path(f.path)]
        return files

    @staticmethod
    def _parse_rg(out: bytes) -> list[FileHits]:
        by_path: dict[str, FileHits] = {}
        for raw in out.split(b"\n"):
            if not raw or raw == b"--":
                continue
            path_bytes, sep, rest = raw.partition(b"\x00")
            if not sep:
                continue
            number_end = 0
            while number_end < len(rest) and 48 <= rest[number_end] <= 57:
                number_end += 1
            if number_end == 0 or number_end >= len(rest):
                continue
            is_match = rest[number_end] == 58  # ':' a match, '-' context
            text = rest[number_end + 1 :]
            if text.endswith(b"\r"):
                text = text[:-1]
            path = os.fsdecode(path_bytes)
            path = path.removeprefix("./")
            fh = by_path.get(path)
            if fh is None:
                fh = by_path[path] = FileHits(path)
            fh.hits.append(
                Hit(int(rest[:number_end]), text.decode("utf-8", errors="replace"), is_match)
            )
        return list(by_path.values())

    # ------------------------------------------------------------ python fallback

    def _compile(self, args: GrepArgs) -> regex.Pattern[str]:
        source = regex.escape(args.pattern) if args.fixed_strings else args.pattern
        flags = regex.MULTILINE | (regex.IGNORECASE if args.ignore_case else 0)
        try:
            return regex.compile(source, flags)
        except regex.error as exc:
            raise GrepFailed(f"grep could not search: regex parse error: {exc}") from None

    def _search_python(
        self, args: GrepArgs, ctx: ToolContext, rel: str
    ) -> tuple[list[FileHits], list[str]]:
        pattern = self._compile(args)
        tree = VisibleTree(ctx.repo, ctx.settings.state_dir_name, include_hidden=False)
        tree.open_explicit(rel)
        include, exclude = _glob_specs(args)
        target = ctx.repo / rel if rel != "." else ctx.repo
        skipped: list[str] = []
        if target.is_file():
            candidates = [(rel, target)]
        else:
            prefix = "" if rel == "." else rel + "/"
            candidates = []
            linked_env = linked_env_check(ctx.repo)  # None: no env file has a second name
            stack = [rel]
            while stack:
                current = stack.pop()
                for entry in tree.children(current):
                    inner = entry.rel[len(prefix) :]
                    if exclude is not None and exclude.match_file(
                        inner + ("/" if entry.kind == "dir" else "")
                    ):
                        continue
                    if entry.kind == "dir":
                        stack.append(entry.rel)
                    elif entry.kind == "file" and (include is None or include.match_file(inner)):
                        # A walk follows no link: the entry's own name is what it reads,
                        # unless the entry is a hard link to an env file.
                        if (
                            is_env_file(entry.name)
                            or env_folder_in(entry.rel)
                            or (linked_env is not None and linked_env(os.fspath(entry.path)))
                        ):
                            skipped.append(entry.rel)
                        else:
                            candidates.append((entry.rel, entry.path))
        # rg only checks whole-text prefilters when safe; \A and \Z mean "line start/end" there.
        prefilter = not regex.search(r"\\[AZz]", args.pattern)
        deadline = Deadline(SEARCH_TIMEOUT)
        results = []
        for path_rel, path in candidates:
            hits = self._search_file(path, pattern, args.context, prefilter, deadline)
            if hits:
                results.append(FileHits(path_rel, hits))
        return results, sorted(skipped)

    @staticmethod
    def _search_file(
        path: Path,
        pattern: regex.Pattern[str],
        context: int,
        prefilter: bool,
        deadline: Deadline,
    ) -> list[Hit]:
        try:
            raw = path.read_bytes()
        except OSError:
            return []
        if b"\x00" in raw[:BINARY_SNIFF_BYTES]:
            return []
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        text = raw.decode("utf-8", errors="replace")
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        if prefilter and not deadline.search(pattern, text):
            return []
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        matched = [i for i, line in enumerate(lines) if deadline.search(pattern, line)]
        if not matched:
            return []
        wanted: set[int] = set()
        for i in matched:
            wanted.update(range(max(0, i - context), min(len(lines), i + context + 1)))
        matched_set = set(matched)
        return [Hit(i + 1, lines[i], i in matched_set) for i in sorted(wanted)]
