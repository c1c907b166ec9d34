"""Unified diffs (`diff -u`, `git diff`) into the engine's file operations, through unidiff.

`/dev/null` sources and targets become adds and deletes, git rename headers
become moves, and each `@@` hunk becomes a chunk whose old start is kept as a
hint for the matcher.
"""

from __future__ import annotations

from hello_tui.patch.model import Chunk, FileOperation
from hello_tui.patch.types import PatchError

_NULL = "/dev/null"


def _strip_prefix(name: str) -> str:
    name = name.strip()
    if "\t" in name:
        name = name.split("\t", 1)[0]  # diff -u appends a timestamp after a tab
    if len(name) >= 2 and name[0] == name[-1] == '"':
        name = name[1:-1]
    if name.startswith(("a/", "b/")):
        return name[2:]
    return name


def parse_unified(text: str) -> list[FileOperation]:
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    try:
        patch_set = PatchSet(text)
    except UnidiffParseError as exc:
        raise PatchError(f"Invalid unified diff: {exc}") from None
    ops: list[FileOperation] = []
    for pf in patch_set:
        source = _strip_prefix(pf.source_file or "")
        target = _strip_prefix(pf.target_file or "")
        if source == _NULL:
            lines: list[str] = []
            no_eol = False
            for hunk in pf:
                for ln in hunk:
                    if ln.line_type == "+":
                        lines.append(ln.value.rstrip("\n").rstrip("\r"))
                    elif ln.line_type == "\\":
                        no_eol = True
            content = "\n".join(lines) + ("\n" if lines and not no_eol else "")
            ops.append(FileOperation("add", target, content=content))
            continue
        if target == _NULL:
            ops.append(FileOperation("delete", source))
            continue
        op = FileOperation("update", source)
        if source != target:
            op.move_to = target
        for hunk in pf:
            # Line numbers anchor a unified hunk; git's section header (the enclosing
            # function) is not used, the numbers are more precise.
            chunk = Chunk(line_hint=max(hunk.source_start - 1, 0))
            for ln in hunk:
                if ln.line_type == "\\":
                    if chunk.items and chunk.items[-1][0] in "+ ":
                        chunk.no_eol = True
                    continue
                kind = ln.line_type if ln.line_type in ("+", "-") else " "
                chunk.items.append((kind, ln.value.rstrip("\n").rstrip("\r")))
            if not chunk.old_lines:
                chunk.line_hint = hunk.source_start  # `-l,0`: insert after line l
            if chunk.items:
                op.chunks.append(chunk)
        if not op.chunks and op.move_to is None:
            raise PatchError(f"Invalid unified diff: the change to {source} has no hunks.")
        ops.append(op)
    if not ops:
        raise PatchError("Invalid unified diff: no file changes found.")
    return ops
