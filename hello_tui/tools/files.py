"""The read-only file tools: `ls`, `glob` and `read`.

`read` also records what it saw of each file (hash, size, mtime): `edit`
refuses files the model has not read, and the write flow refuses a patch to a
file that changed since it was read.

None of them shows `.git/` internals or the state folder, or follows a link
out of the repo; `read` asks the user before it opens a `.env` file. A path
refused for those reasons is an answer to the model, not a tool failure.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from pathlib import Path

import regex
from pydantic import Field

from hello_tui.core.tools import ReadRecord, Tool, ToolArgs, ToolContext, ToolResult
from hello_tui.tools.editor_texts import EditorView
from hello_tui.tools.env_files import approve_env_read, reaches_env_file
from hello_tui.tools.paths import (
    PathError,
    RepoPath,
    VisibleTree,
    hidden_area,
    resolve_repo_path,
)

LS_MAX_ENTRIES = 400
GLOB_MAX_RESULTS = 500
GLOB_TIMEOUT = 30.0  # seconds for all the matching of one glob
READ_DEFAULT_LIMIT = 200
READ_MAX_LINE_CHARS = 2000
READ_MAX_BYTES_WITHOUT_RANGE = 10 * 1024 * 1024
BINARY_SNIFF_BYTES = 8192
# Above this share of undecodable characters a file is treated as binary, not text.
UNDECODABLE_RATIO_LIMIT = 0.10


def refused(text: str) -> ToolResult:
    """A path the tools will not touch: an answer, not a failure of the tool."""
    return ToolResult(status="error", text=text, declined=True)


def visible_target(ctx: ToolContext, raw: str | None) -> RepoPath | ToolResult:
    """The path inside the repo, or the refusal to give the model."""
    try:
        target = resolve_repo_path(ctx.repo, raw)
    except PathError as exc:
        return refused(str(exc))
    hidden = hidden_area(target, ctx.settings.state_dir_name)
    if hidden:
        return refused(f"Refused: {hidden}.")
    return target


def file_digest(path: Path) -> ReadRecord:
    """Hash, size and mtime of a file, read in chunks so large files stay cheap."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    st = os.stat(path)
    return ReadRecord(sha256=digest.hexdigest(), size=st.st_size, mtime=st.st_mtime)


# ---------------------------------------------------------------- ls


class LsArgs(ToolArgs):
    path: str = "."
    depth: int = Field(2, ge=1, le=8)


class LsTool(Tool):
    name = "ls"
    description = "List a folder as a tree (honours .gitignore)."
    Args = LsArgs

    async def run(self, args: LsArgs, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._list, args, ctx)

    def _list(self, args: LsArgs, ctx: ToolContext) -> ToolResult:
        target = visible_target(ctx, args.path)
        if isinstance(target, ToolResult):
            return target
        if not target.path.exists():
            return ToolResult.error(f"Path '{target.rel}' does not exist.")
        if not target.path.is_dir():
            size = target.path.stat().st_size
            return ToolResult.ok(
                f"{target.rel} is a file ({size} bytes); use read to see it.",
                data={"path": target.rel, "entries": [{"path": target.rel, "type": "file"}]},
            )
        tree = VisibleTree(ctx.repo, ctx.settings.state_dir_name, include_hidden=True)
        tree.open_explicit(target.rel)
        lines: list[str] = []
        entries: list[dict] = []
        omitted = 0

        def visit(dir_rel: str, level: int) -> None:
            nonlocal omitted
            kids = tree.children(dir_rel)
            kids.sort(key=lambda e: (e.kind != "dir", e.name.casefold()))
            for entry in kids:
                if len(entries) >= LS_MAX_ENTRIES:
                    omitted += 1
                    continue
                indent = "  " * level
                if entry.kind == "dir":
                    if level + 1 < args.depth:
                        lines.append(f"{indent}{entry.name}/")
                        entries.append({"path": entry.rel, "type": "dir"})
                        visit(entry.rel, level + 1)
                    else:
                        count = len(tree.children(entry.rel))
                        noun = "entry" if count == 1 else "entries"
                        lines.append(f"{indent}{entry.name}/ ({count} {noun})")
                        entries.append({"path": entry.rel, "type": "dir", "entries": count})
                elif entry.kind == "symlink":
                    try:
                        target_text = os.readlink(entry.path)
                    except OSError:
                        target_text = "?"
                    lines.append(f"{indent}{entry.name} -> {target_text}")
                    entries.append({"path": entry.rel, "type": "symlink", "target": target_text})
                else:
                    lines.append(f"{indent}{entry.name}")
                    entries.append({"path": entry.rel, "type": entry.kind})

        visit(target.rel, 0)
        header = f"{target.rel if target.rel != '.' else '(repository root)'}:"
        if not entries:
            empty = {"path": target.rel, "entries": []}
            return ToolResult.ok(f"{header}\n(empty folder)", data=empty)
        text = header + "\n" + "\n".join(lines)
        data = {"path": target.rel, "entries": entries, "omitted": omitted}
        if omitted:
            text += f"\n… {omitted} more entries not shown; list a subfolder to see them."
            return ToolResult.partial(text, data=data)
        return ToolResult.ok(text, data=data)


# ---------------------------------------------------------------- glob


def glob_to_regex(pattern: str) -> regex.Pattern[str]:
    """Translate a shell glob with `**`, `*`, `?`, `[...]` and `{a,b}` to a regex.

    Compiled with `regex`, whose matcher does not backtrack for ever on a glob of many
    stars (`*a*a*a…*b` against a long name takes `re` hours); each match has a deadline too.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0  # inside {…}
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    i += 1
                    out.append("(?:.*/)?")
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end == -1:
                out.append(regex.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(regex.escape(c))
        i += 1
    if depth:
        raise ValueError(f"unclosed '{{' in glob pattern {pattern!r}")
    try:
        return regex.compile("".join(out) + r"\Z", regex.DOTALL)
    except regex.error as exc:
        raise ValueError(f"{exc} in glob pattern {pattern!r}") from None


class GlobArgs(ToolArgs):
    pattern: str
    path: str = "."


class GlobTool(Tool):
    name = "glob"
    description = "Find files by glob pattern, e.g. '**/*.py'."
    Args = GlobArgs

    async def run(self, args: GlobArgs, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._glob, args, ctx)

    def _glob(self, args: GlobArgs, ctx: ToolContext) -> ToolResult:
        pattern = args.pattern.strip()
        if not pattern:
            return ToolResult.error("Empty glob pattern; try '**/*.py'.")
        if pattern.startswith(("/", "~")) or ".." in Path(pattern).parts or "\x00" in pattern:
            return ToolResult.error(
                f"Glob pattern {pattern!r} must be relative and stay inside the folder; "
                "use the path argument to choose the folder."
            )
        base = visible_target(ctx, args.path)
        if isinstance(base, ToolResult):
            return base
        if not base.path.exists():
            return ToolResult.error(f"Path '{base.rel}' does not exist.")
        if not base.path.is_dir():
            return ToolResult.error(f"Path '{base.rel}' is a file, not a folder.")
        try:
            compiled = glob_to_regex(pattern.removeprefix("./"))
        except ValueError as exc:
            return ToolResult.error(f"Invalid glob: {exc}")
        tree = VisibleTree(ctx.repo, ctx.settings.state_dir_name, include_hidden=True)
        tree.open_explicit(base.rel)
        prefix = "" if base.rel == "." else base.rel + "/"
        matches: list[tuple[str, str]] = []
        end = time.monotonic() + GLOB_TIMEOUT
        try:
            for entry in tree.walk(base.rel):
                inner = entry.rel[len(prefix) :]
                if compiled.match(inner, timeout=max(end - time.monotonic(), 0.001)):
                    matches.append((entry.rel, entry.kind))
        except TimeoutError:
            return ToolResult.error(
                f"glob gave up after {GLOB_TIMEOUT:g} s: the pattern takes too long to match; "
                "use fewer '*' in one name"
            )
        matches.sort()
        if not matches:
            hint = (
                ""
                if "/" in pattern
                else (f" (the pattern has no '/'; use '**/{pattern}' to search subfolders)")
            )
            return ToolResult.ok(
                f"No files matched {pattern!r} under {base.rel}{hint}.",
                data={"pattern": pattern, "path": base.rel, "matches": []},
            )
        shown = matches[:GLOB_MAX_RESULTS]
        lines = [rel + ("/" if kind == "dir" else "") for rel, kind in shown]
        data = {
            "pattern": pattern,
            "path": base.rel,
            "matches": [rel for rel, _ in shown],
            "total": len(matches),
        }
        text = f"{len(matches)} paths matched {pattern!r}:\n" + "\n".join(lines)
        if len(matches) > len(shown):
            text += f"\n… {len(matches) - len(shown)} more not shown; narrow the pattern."
            return ToolResult.partial(text, data=data)
        return ToolResult.ok(text, data=data)


# ---------------------------------------------------------------- read


class ReadArgs(ToolArgs):
    path: str
    offset: int | None = Field(None, ge=1, description="First line, 1-based.")
    limit: int | None = Field(None, ge=1, le=5000)


def _decode(raw: bytes) -> tuple[str, list[str]]:
    """Text of the bytes and notes about how it was decoded."""
    notes = []
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
        notes.append("the file starts with a UTF-8 byte order mark (not shown)")
    try:
        return raw.decode("utf-8"), notes
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        bad = text.count("\ufffd") - raw.decode("utf-8", errors="ignore").count("\ufffd")
        notes.append(
            f"the file is not valid UTF-8: {bad} undecodable byte sequence(s) shown as \ufffd; "
            "edits to it are refused"
        )
        return text, notes


def _looks_binary(head: bytes) -> bool:
    if b"\x00" in head:
        return True
    sample = head.decode("utf-8", errors="replace")
    # A multi-byte character cut at the sample's end is not evidence of binary.
    sample = sample[:-3] if len(head) == BINARY_SNIFF_BYTES else sample
    bad = sample.count("\ufffd")
    return bool(sample) and bad / len(sample) > UNDECODABLE_RATIO_LIMIT


def _cut(line: str) -> str:
    if len(line) <= READ_MAX_LINE_CHARS:
        return line
    extra = len(line) - READ_MAX_LINE_CHARS
    return line[:READ_MAX_LINE_CHARS] + f" … [line cut: {extra} more chars]"


def _split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


class ReadTool(Tool):
    name = "read"
    description = (
        f"Read a text file with line numbers ({READ_DEFAULT_LIMIT} lines unless offset/limit "
        "say otherwise)."
    )
    Args = ReadArgs

    async def run(self, args: ReadArgs, ctx: ToolContext) -> ToolResult:
        target = visible_target(ctx, args.path)
        if isinstance(target, ToolResult):
            return target
        # Judged by where it leads too: `notes.txt -> .env` (or a hard link) is the .env.
        if target.path.is_file() and reaches_env_file(target.path, ctx.repo):
            declined = await approve_env_read(ctx, "read", target.rel)
            if declined is not None:
                return declined
        view = EditorView.here(ctx.editor)
        return await asyncio.to_thread(self._read, args, ctx, target, view)

    def _read(
        self, args: ReadArgs, ctx: ToolContext, target: RepoPath, view: EditorView | None
    ) -> ToolResult:
        path = target.path
        try:
            if not path.exists():
                return ToolResult.error(
                    f"File '{target.rel}' does not exist; use glob or ls to find the right path."
                )
            if path.is_dir():
                return ToolResult.error(f"'{target.rel}' is a folder; use ls to list it.")
            if not path.is_file():
                return ToolResult.error(f"'{target.rel}' is not a regular file.")
            size = path.stat().st_size
            ranged = args.offset is not None or args.limit is not None
            if size > READ_MAX_BYTES_WITHOUT_RANGE and not ranged:
                return ToolResult.error(
                    f"'{target.rel}' is {size / 1048576:.1f} MB, over the 10 MB limit for a whole "
                    "read; give offset and limit to read a range, or use grep to find the lines."
                )
            with open(path, "rb") as handle:
                head = handle.read(BINARY_SNIFF_BYTES)
            if _looks_binary(head):
                return ToolResult.error(
                    f"'{target.rel}' looks like a binary file ({size} bytes); read shows text only."
                )
            record = file_digest(path)
            if size > READ_MAX_BYTES_WITHOUT_RANGE:
                total, window, notes = self._stream_range(path, args)
            else:
                raw = path.read_bytes()
                if view is not None and (shown := view.current(target.rel, path, raw)) is not None:
                    # The editor's buffer: the stale guard compares against the same bytes.
                    raw = shown
                    record = ReadRecord(hashlib.sha256(raw).hexdigest(), len(raw), record.mtime)
                text, notes = _decode(raw)
                lines = _split_lines(text)
                total = len(lines)
                start = (args.offset or 1) - 1
                window = lines[start : start + (args.limit or READ_DEFAULT_LIMIT)]
        except OSError as exc:
            return ToolResult.error(f"Cannot read '{target.rel}': {exc.strerror or exc}.")
        ctx.reads[target.rel] = record
        first = args.offset or 1
        data = {"path": target.rel, "total_lines": total, "start": first, "notes": notes}
        if total == 0:
            return ToolResult.ok(f"{target.rel} is empty (0 lines).", data={**data, "end": 0})
        if first > total:
            return ToolResult.error(
                f"offset={first} is past the end of '{target.rel}' ({total} lines).", data=data
            )
        last = first + len(window) - 1
        body = "\n".join(f"{n:>6}\t{_cut(line)}" for n, line in enumerate(window, start=first))
        data["end"] = last
        extra = "".join(f"\n[note: {n}]" for n in notes)
        if first > 1 or last < total:
            more = f"; use offset={last + 1} to read more" if last < total else ""
            footer = f"\n[lines {first}–{last} of {total}{more}]"
            status = ToolResult.partial if last < total else ToolResult.ok
            return status(body + footer + extra, data=data)
        return ToolResult.ok(body + extra, data=data)

    @staticmethod
    def _stream_range(path: Path, args: ReadArgs) -> tuple[int, list[str], list[str]]:
        """A range of a file too big to load whole: one pass, counting every line."""
        first = args.offset or 1
        last = first + (args.limit or READ_DEFAULT_LIMIT) - 1
        window: list[str] = []
        notes: list[str] = []
        total = 0
        with open(path, "rb") as handle:
            for total, raw in enumerate(handle, start=1):
                if first <= total <= last:
                    if total == 1 and raw.startswith(b"\xef\xbb\xbf"):
                        raw = raw[3:]
                    line = raw.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")
                    if "\ufffd" in line and not notes:
                        notes.append("undecodable bytes are shown as \ufffd")
                    window.append(line)
        return total, window, notes
