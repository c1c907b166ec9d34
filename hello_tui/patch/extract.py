"""Finding patches in free text: model answers, tool arguments, patch files.

Recognises Codex-style patches (with or without `*** Begin Patch` / `*** End
Patch`, inside fences or heredocs, header lines with or without their `*** `)
and unified diffs (`--- a/x` / `+++ b/x` / `@@` or `diff --git`). Every patch
in the text is returned, in order. Unified diffs come back with their `@@`
line counts recomputed from the lines actually present, since models often
miscount them.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?")
_FILE_HEADER = re.compile(r"^(\*\*\*\s*)?(Add File|Delete File|Update File):\s*\S")
_UNIFIED_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_PATCHY_FENCES = {"patch", "diff", "apply_patch", "udiff"}
_GIT_META = (
    "index ",
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "similarity index ",
    "dissimilarity index ",
    "rename from ",
    "rename to ",
    "copy from ",
    "copy to ",
    "Binary files ",
)


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
            return i, i
        if heredoc is not None and heredoc in line and line.strip() == heredoc:
            return i, i + 1
    return len(lines), len(lines)


def _unified_start(lines: list[str], i: int) -> bool:
    line = lines[i]
    if line.startswith("diff --git "):
        return True
    return (
        line.startswith("--- ")
        and i + 1 < len(lines)
        and lines[i + 1].startswith("+++ ")
        and i + 2 < len(lines)
        and lines[i + 2].startswith("@@ ")
    )


def _hunk_line(line: str) -> bool:
    return line[:1] in (" ", "+", "-", "\\")


def _scan_unified(
    lines: list[str], start: int, fence: str | None, heredoc: str | None
) -> tuple[list[str], int]:
    """Collect one unified diff (possibly several files); return its normalised lines and resume index."""
    out: list[str] = []
    i = start
    n = len(lines)

    def stop(line: str) -> bool:
        return _closing_fence(line, fence) or (heredoc is not None and line.strip() == heredoc)

    while i < n:
        line = lines[i]
        if stop(line):
            break
        if line.startswith("diff --git ") or line.startswith(_GIT_META):
            out.append(line)
            i += 1
            continue
        if line.startswith("--- ") and i + 1 < n and lines[i + 1].startswith("+++ "):
            out.extend((line, lines[i + 1]))
            i += 2
            continue
        m = _UNIFIED_HUNK.match(line)
        if not m:
            break
        body: list[str] = []
        i += 1
        while i < n:
            cur = lines[i]
            if stop(cur) or cur.startswith(("@@ ", "diff --git ")):
                break
            if cur.startswith("--- ") and i + 1 < n and lines[i + 1].startswith("+++ "):
                break
            if cur == "":
                # A blank context line whose leading space was lost, if more hunk lines follow.
                j = i
                while j < n and lines[j] == "":
                    j += 1
                if j < n and _hunk_line(lines[j]) and not stop(lines[j]):
                    body.extend([" "] * (j - i))
                    i = j
                    continue
                break
            if not _hunk_line(cur):
                break
            body.append(cur)
            i += 1
        old_count = sum(1 for b in body if b[0] in " -")
        new_count = sum(1 for b in body if b[0] in " +")
        old_start = int(m.group(1))
        new_start = int(m.group(3))
        if old_count and old_start == 0:
            old_start = 1
        if new_count and new_start == 0:
            new_start = 1
        out.append(f"@@ -{old_start},{old_count} +{new_start},{new_count} @@{m.group(5)}")
        out.extend(body)
    return out, i


def extract_patches(text: str) -> list[str]:
    """Every patch in `text`, in order; Codex patches as written, unified diffs normalised."""
    lines = text.replace("\r\n", "\n").split("\n")
    patches: list[str] = []
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
            patches.append("\n".join(lines[i:end]) + "\n")
            if resume > end and heredoc is not None and lines[end].strip() == heredoc:
                heredoc = None
            i = resume
            continue
        if _unified_start(lines, i):
            body, resume = _scan_unified(lines, i, fence, heredoc)
            if any(b.startswith("@@ ") for b in body) or any(b.startswith("rename ") for b in body):
                patches.append("\n".join(body) + "\n")
                i = max(resume, i + 1)
                continue
        i += 1
    return patches


def contains_patch(text: str) -> bool:
    return bool(extract_patches(text))


def is_unified(patch: str) -> bool:
    first = patch.lstrip("\n").split("\n", 1)[0]
    return first.startswith(("diff --git ", "--- "))
