"""Parser for the Codex `apply_patch` grammar, complete, plus the tolerances models need.

Grammar: `*** Begin Patch`, then sections `*** Add File: p` (lines prefixed
`+`), `*** Delete File: p`, `*** Update File: p` (optional `*** Move to: q`,
chunks opened by `@@` or `@@ <context line>`, lines ` `/`-`/`+`, optional
`*** End of File`), then `*** End Patch`.

Tolerated beyond Codex: markers padded with whitespace or missing their
`*** `, a missing `*** End Patch`, Add bodies without `+`, several
consecutive `@@` headers (each narrows the search), unified-style
`@@ -l,s +l,s @@` headers inside a Codex patch, `\\ No newline at end of
file` after a line, and the whole-file Update (a body with no diff lines
replaces the file).
"""

from __future__ import annotations

from hello_tui.core.lazy_regex import lazy_compile
from hello_tui.patch.extract import is_begin, is_end
from hello_tui.patch.model import Chunk, FileOperation
from hello_tui.patch.types import PatchError

_SECTION = lazy_compile(r"^(?:\*\*\*\s*)?(Add File|Delete File|Update File|Move to):\s*(.*?)\s*$")
_UNIFIED_HEADER = lazy_compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")
_VALID_HEADERS = "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'"


def _section(line: str) -> tuple[str, str] | None:
    stripped = line.strip()
    m = _SECTION.match(stripped)
    if not m:
        return None
    if not stripped.startswith("***") and line != line.lstrip():
        return None  # a bare header must start at column 0, or it is a context line
    return m.group(1), _clean_path(m.group(2))


def _clean_path(raw: str) -> str:
    path = raw.strip()
    if len(path) >= 2 and path[0] == path[-1] and path[0] in "`'\"":
        path = path[1:-1].strip()
    return path


def _is_eof_marker(line: str) -> bool:
    s = line.strip()
    if s.startswith("***"):
        return s[3:].strip() == "End of File"
    return line == "End of File"


_BOUNDARY_STARTS = (
    "***",
    "Add File",
    "Delete File",
    "Update File",
    "Move to",
    "Begin Patch",
    "End Patch",
)


def _is_boundary(line: str) -> bool:
    if not line.lstrip().startswith(_BOUNDARY_STARTS):
        return False  # cheap test first: called for every line of big patches
    s = _section(line)
    return (s is not None and s[0] != "Move to") or is_end(line) or is_begin(line)


def _looks_like_diff(line: str) -> bool:
    return line[:1] in ("+", "-") or line.startswith("@@")


def parse_codex(text: str) -> list[FileOperation]:
    """Parse one Codex-style patch into file operations; PatchError names the bad line."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    n = len(lines)
    i = 0
    while i < n and not lines[i].strip():
        i += 1
    has_begin = i < n and is_begin(lines[i])
    if has_begin:
        i += 1
    has_end = any(is_end(line) for line in lines[i:])
    ops: list[FileOperation] = []
    while i < n:
        line = lines[i]
        if is_end(line):
            break
        if not line.strip():
            i += 1
            continue
        sec = _section(line)
        if sec is None or sec[0] == "Move to":
            if (
                not has_end
                and ops
                and not any(_is_boundary(x) or _looks_like_diff(x) for x in lines[i:])
            ):
                break  # prose after a patch whose `*** End Patch` is missing
            raise PatchError(
                f"Invalid patch on line {i + 1}: {line.strip()!r} is not a valid hunk header. "
                f"Valid hunk headers: {_VALID_HEADERS}."
            )
        kind, path = sec
        if not path:
            raise PatchError(f"Invalid patch on line {i + 1}: {kind} needs a path.")
        start = i
        i += 1
        body_start = i
        while i < n and not _is_boundary(lines[i]):
            i += 1
        body = lines[body_start:i]
        if kind == "Add File":
            ops.append(_parse_add(path, body, start + 1))
        elif kind == "Delete File":
            ops.append(_parse_delete(path, body, start + 1))
        else:
            ops.append(_parse_update(path, body, start + 1, body_start, has_end))
    return ops


def _trim_blank_tail(body: list[str]) -> list[str]:
    end = len(body)
    while end and body[end - 1] == "":
        end -= 1
    return body[:end]


def _parse_add(path: str, body: list[str], line_no: int) -> FileOperation:
    body = _trim_blank_tail(body)
    no_eol = bool(body) and body[-1].startswith("\\")
    if no_eol:
        body = body[:-1]
    if all(b.startswith("+") or b == "" for b in body):
        content_lines = [b[1:] for b in body]
    else:
        content_lines = body  # the seeds' Add body without `+` prefixes
    content = "\n".join(content_lines)
    if content_lines and not no_eol:
        content += "\n"
    return FileOperation("add", path, content=content, source_line=line_no)


def _parse_delete(path: str, body: list[str], line_no: int) -> FileOperation:
    for offset, b in enumerate(body):
        if b.strip() and not b.startswith("-"):
            raise PatchError(
                f"Invalid patch on line {line_no + offset + 1}: unexpected {b.strip()!r} after "
                f"'*** Delete File: {path}'."
            )
    return FileOperation("delete", path, source_line=line_no)


def _parse_update(
    path: str, body: list[str], line_no: int, body_start: int, has_end: bool
) -> FileOperation:
    op = FileOperation("update", path, source_line=line_no)
    k = 0
    while k < len(body) and not body[k].strip():
        k += 1
    if k < len(body):
        sec = _section(body[k])
        if sec is not None and sec[0] == "Move to":
            if not sec[1]:
                raise PatchError(
                    f"Invalid patch on line {body_start + k + 1}: Move to needs a path."
                )
            op.move_to = sec[1]
            k += 1
    body = _trim_blank_tail(body[k:])
    offset = body_start + k  # index in the patch of body[0]
    first = next((b for b in body if b.strip()), None)
    if first is not None and not any(b.startswith("@@") for b in body) and first[:1] not in "+- ":
        op.whole_file = True
        op.content = "\n".join(body) + "\n"
        return op
    chunk = Chunk(source_line=offset + 1)
    for idx, line in enumerate(body):
        where = offset + idx + 1
        if line.startswith("@@"):
            if chunk.items:
                op.chunks.append(chunk)
                chunk = Chunk(source_line=where)
            m = _UNIFIED_HEADER.match(line)
            if m:
                chunk.line_hint = max(int(m.group(1)) - 1, 0)
                header = m.group(3).strip()
            else:
                header = line[2:].strip()
            if header:
                chunk.headers.append(header)
            continue
        if _is_eof_marker(line):
            chunk.end_of_file = True
            if chunk.items:
                op.chunks.append(chunk)
                chunk = Chunk(source_line=where + 1)
            continue
        if line == "":
            chunk.items.append((" ", ""))
            continue
        prefix = line[0]
        if prefix in "+- ":
            chunk.items.append((prefix, line[1:]))
            continue
        if prefix == "\\":
            chunk.eol_stated = True
            if chunk.items and chunk.items[-1][0] in "+ ":
                chunk.no_eol = True
            continue
        raise PatchError(
            f"Invalid patch on line {where}: {line!r} in the update of {path} is not a patch line; "
            "every line of a chunk starts with ' ' (context), '-' (removed) or '+' (added), "
            "and chunks open with '@@'."
        )
    if chunk.items:
        op.chunks.append(chunk)
    elif chunk.headers or chunk.end_of_file:
        raise PatchError(
            f"Invalid patch on line {chunk.source_line}: the chunk under '@@ {' / '.join(chunk.headers)}' "
            f"in {path} has no lines."
        )
    if not op.chunks:
        raise PatchError(
            f"Invalid patch on line {line_no}: Update file hunk for path '{path}' is empty."
        )
    return op
