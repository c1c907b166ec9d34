"""Finding patches in free text: model answers, tool arguments, patch files.

Recognises Codex-style patches (with or without `*** Begin Patch` / `*** End
Patch`, inside fences or heredocs, header lines with or without their `*** `)
and unified diffs (`--- a/x` / `+++ b/x` / `@@` or `diff --git`, also inside
`git format-patch` mails). Every patch in the text is returned, in order.
Unified diffs are parsed here already (their hunk counts say where they end,
so a fence inside a hunk of a Markdown file does not end them) and come back
byte for byte: nothing of a unified diff is normalised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hello_tui.core.lazy_regex import lazy_compile
from hello_tui.patch.colour import strip_diff_colour
from hello_tui.patch.mail import strip_mail_messages
from hello_tui.patch.model import FileOperation
from hello_tui.patch.types import PatchError
from hello_tui.patch.unified_parser import UnifiedParser, bare

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Literal

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?")
_FILE_HEADER = re.compile(r"^(\*\*\*\s*)?(Add File|Delete File|Update File):\s*\S")
_PATCHY_FENCES = {"patch", "diff", "apply_patch", "udiff"}
# git diff header lines; met outside any file section they mean a section lost its
# `diff --git` line, and applying the rest would silently skip that file's change.
_ORPHAN_GIT_LINES = (
    "rename from ",
    "rename to ",
    "copy from ",
    "copy to ",
    "deleted file mode ",
    "new file mode ",
    "old mode ",
    "new mode ",
    "similarity index ",
    "GIT binary patch",
)
_ORPHAN_HUNK = lazy_compile(r"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@")


def _marker(line: str) -> str:
    """A Codex marker line reduced to its words: '  *** End Patch ' -> 'End Patch'."""
    s = line.strip()
    if s.startswith("***"):
        s = s[3:].strip()
    return s


def is_begin(line: str) -> bool:
    if "Begin Patch" not in line:
        return False  # cheap test first: called for every line of big patches
    return _marker(line) == "Begin Patch" and (
        line.strip().startswith("***") or line == line.lstrip()
    )


def is_end(line: str) -> bool:
    if "End Patch" not in line:
        return False
    return _marker(line) == "End Patch" and (
        line.strip().startswith("***") or line == line.lstrip()
    )


def is_codex_file_header(line: str, *, bare_ok: bool) -> bool:
    s = line.strip()
    m = _FILE_HEADER.match(s)
    if not m:
        return False
    if m.group(1):
        return True
    return bare_ok and line == line.lstrip()


def _closing_fence(line: str, fence: str | None) -> bool:
    if fence is None:
        return False
    s = line.strip()
    return s.startswith(fence) and s.strip(fence[0]) == ""


def _codex_end(
    lines: list[str], start: int, fence: str | None, heredoc: str | None
) -> tuple[int, int]:
    """(end of the patch's lines, exclusive; index to resume scanning at)."""
    fence_char = fence[0] if fence else None
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if "Patch" in line:
            if is_end(line):
                return i + 1, i + 1
            if is_begin(line):
                return i, i
        if fence_char is not None and fence_char in line and _closing_fence(line, fence):
            if line[:1] in (" ", "+", "-") and _end_follows(lines, i + 1):
                continue  # a chunk line of a Markdown file, inside the patch
            return i, i
        if heredoc is not None and heredoc in line and line.strip() == heredoc:
            return i, i + 1
    return len(lines), len(lines)


def _end_follows(lines: list[str], start: int) -> bool:
    """An `*** End Patch` comes later, before any unindented fence: the patch goes on."""
    for line in lines[start:]:
        if is_end(line):
            return True
        if line[:1] in ("`", "~") and _FENCE.match(line):
            return False
    return False


def _unified_stop(fence: str | None, heredoc: str | None):
    """Lines that close the block around a unified diff; a hunk line (' ', '+', '-') never does."""
    if fence is None and heredoc is None:
        return None

    def stop(line: str) -> bool:
        if line[:1] in (" ", "+", "-"):
            return False
        return _closing_fence(line, fence) or (heredoc is not None and line.strip() == heredoc)

    return stop


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class FoundPatch:
    """One patch found in a text: Codex text as written, or a unified diff already parsed."""

    kind: Literal["codex", "unified"]
    text: str
    ops: list[FileOperation] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: PatchError | None = None
    orphan: bool = False  # only diff header lines outside any section: an error, not a patch


def find_patches(text: str) -> list[FoundPatch]:
    """Every patch in `text`, in order. Mail headers and commit messages are not patch text,
    nor are the colour codes of a coloured diff; a coloured word diff is one patch that
    carries its refusal."""
    try:
        plain = strip_diff_colour(text)
    except PatchError as exc:
        return [FoundPatch("unified", text, error=exc)]
    found = _find_in_plain(plain)
    if plain != text:
        for patch in found:
            for op in patch.ops:
                op.decoloured = True
    return found


def _find_in_plain(text: str) -> list[FoundPatch]:
    lines = strip_mail_messages(text).split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the text's last newline ends its last line; it starts no other
    found: list[FoundPatch] = []
    fence: str | None = None
    patchy_fence = False
    heredoc: str | None = None
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        fm = _FENCE.match(line)
        if fm:
            if fence is None:
                fence = fm.group(1)
                patchy_fence = fm.group(2).lower() in _PATCHY_FENCES
            elif _closing_fence(line, fence):
                fence = None
                patchy_fence = False
            i += 1
            continue
        hd = _HEREDOC.search(line)
        if hd and not line.lstrip().startswith(("+", "-", "@@")):
            heredoc = hd.group(1)
            i += 1
            continue
        if heredoc is not None and line.strip() == heredoc:
            heredoc = None
            i += 1
            continue
        if is_begin(line) or is_codex_file_header(line, bare_ok=patchy_fence):
            end, resume = _codex_end(lines, i, fence, heredoc)
            found.append(FoundPatch("codex", "\n".join(map(bare, lines[i:end])) + "\n"))
            if resume > end and heredoc is not None and lines[end].strip() == heredoc:
                heredoc = None
            i = resume
            continue
        parser = (
            UnifiedParser(lines, _unified_stop(fence, heredoc))
            if line.startswith(("diff --git ", "--- ", *_ORPHAN_GIT_LINES, "index "))
            else None
        )
        if parser is not None and parser.section_start(i):
            try:
                ops, resume = parser.parse(i)
            except PatchError as exc:
                found.append(FoundPatch("unified", "\n".join(lines[i:]) + "\n", error=exc))
                break
            if ops:
                body = "\n".join(lines[i:resume]) + "\n"
                found.append(FoundPatch("unified", body, ops, parser.warnings))
            i = max(resume, i + 1)
            continue
        if (
            line.startswith(_ORPHAN_GIT_LINES)
            or _ORPHAN_HUNK.match(line)
            or (line.startswith("Binary files ") and bare(line).endswith(" differ"))
        ):
            found.append(FoundPatch("unified", line + "\n", error=_orphan(line, i), orphan=True))
            break
        i += 1
    return found


def _orphan(line: str, i: int) -> PatchError:
    shown = bare(line)
    if shown.startswith("Binary files "):
        return PatchError(
            f"Cannot apply line {i + 1}, {shown!r}: it says a binary file changed but carries "
            "no data (git apply refuses it too). Make the patch with `git diff --binary`."
        )
    if shown.startswith("@@"):
        what = "a hunk header with no file header before it ('--- a/path' and '+++ b/path')"
    else:
        what = "a git diff header line outside any file section (its 'diff --git a/... b/...' line is missing)"
    return PatchError(
        f"Invalid unified diff on line {i + 1}: {shown!r} is {what}; nothing was applied, since "
        "applying the rest would silently skip that change."
    )


def extract_patches(text: str) -> list[str]:
    """Every patch in `text`, in order: Codex patches as written, unified diffs byte for byte."""
    return [p.text for p in find_patches(text)]


def contains_patch(text: str) -> bool:
    """Whether `text` holds a patch; a stray hunk header in prose does not make one."""
    return any(not p.orphan for p in find_patches(text))
