"""The git diff of what a commit wrote: the patch a "Patch applied" note records.

`written_diff(plan)` takes the plan `commit_plan` actually wrote (after the
user's selection and edits) and renders it as `git diff --binary` would for
the same change, old bytes to new bytes: `diff --git` headers with git's mode,
rename and `index` lines, git's hunk numbering (`-5` for a one-line range,
`-4,0` for an insertion after line 4), git's three lines of context with
hunks merged when at most six lines apart, the default function-name context
after `@@`, and `GIT binary patch` literals (forward and reverse) for binary
files. The hunks are the accepted hunks themselves whenever they rebuild the
written bytes; otherwise (a line ending the commit had to repair) the two
texts are diffed. `git apply -R` of the result against the new tree restores
the old one.
"""

from __future__ import annotations

import difflib
import zlib
from base64 import b85encode

from hello_tui.core.hunk_header import git_range
from hello_tui.patch.binary import blob_id
from hello_tui.patch.gitquote import quote_path
from hello_tui.patch.lines import decode_bytes, is_binary, split_git_lines
from hello_tui.patch.types import FilePlan, Hunk, PatchPlan

CONTEXT = 3
NO_EOL = "\\ No newline at end of file"
FUNCNAME_BYTES = 80  # git's xdiff keeps at most 80 bytes of the function line
ABBREV = 7

# (tag, old start, old end, new start, new end), as difflib's opcodes.
Op = tuple[str, int, int, int, int]


def _prefixed(prefix: str, path: str) -> str:
    return quote_path(prefix + path)


def git_mode(mode: int | None) -> str:
    """git records only whether the owner may execute a file."""
    return "100755" if mode is not None and mode & 0o100 else "100644"


def _oid(data: bytes | None, full: bool) -> str:
    if data is None:
        return "0" * (40 if full else ABBREV)
    return blob_id(data) if full else blob_id(data)[:ABBREV]


# ---------------------------------------------------------------- text hunks


def _ops_from_hunks(hunks: list[Hunk], a: list[str], b: list[str]) -> list[Op] | None:
    """The accepted hunks as opcodes, or None if they do not rebuild `b` from `a` exactly."""
    ops: list[Op] = []
    pos = shift = 0
    for h in sorted(hunks, key=lambda h: (h.old_start, h.index)):
        start, end = h.old_start, h.old_start + len(h.old_lines)
        if start < pos or end > len(a):
            return None
        if start > pos:
            ops.append(("equal", pos, start, pos + shift, start + shift))
        new_start = start + shift
        new_end = new_start + len(h.new_lines)
        if end > start or new_end > new_start:
            ops.append(("replace", start, end, new_start, new_end))
        shift += len(h.new_lines) - len(h.old_lines)
        pos = end
    if pos < len(a):
        ops.append(("equal", pos, len(a), pos + shift, len(a) + shift))
    rebuilt: list[str] = []
    for tag, i1, i2, j1, j2 in ops:
        rebuilt += a[i1:i2] if tag == "equal" else b[j1:j2]
        if tag == "equal" and a[i1:i2] != b[j1:j2]:
            return None
    if rebuilt != b or len(b) != len(a) + shift:
        return None
    return ops


def _ops_by_diff(a: list[str], b: list[str]) -> list[Op]:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [(tag, i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes()]


def _groups(ops: list[Op]) -> list[list[Op]]:
    """Changes with CONTEXT lines around them; changes at most 2*CONTEXT apart share a hunk."""
    changes = [op for op in ops if op[0] != "equal"]
    groups: list[list[Op]] = []
    for op in changes:
        if groups:
            last = groups[-1][-1]
            if op[1] - last[2] <= 2 * CONTEXT:
                groups[-1].append(op)
                continue
        groups.append([op])
    return groups


def _is_funcname_line(line: str) -> bool:
    """xdiff's default rule (`def_ff`): the line starts with an ASCII letter, `_` or `$`."""
    return bool(line) and line[0].isascii() and (line[0].isalpha() or line[0] in "_$")


class _FuncContext:
    """The text after `@@`, found the way git's `xdl_emit_diff` finds it, in linear time.

    For each hunk git scans back from the line above the hunk's first line, but
    only down to where the previous hunk's scan started (`funclineprev`), and keeps
    the line it found last when that stretch holds none. Hunks come in file order,
    so every old line is looked at once per file, however many hunks there are.
    """

    def __init__(self, a: list[str]) -> None:
        self._a = a
        self._scanned_to = -1  # git's funclineprev
        self._text = ""

    def above(self, start: int) -> str:
        for k in range(start - 1, self._scanned_to, -1):
            if _is_funcname_line(self._a[k]):
                raw = self._a[k].encode("utf-8", "surrogateescape")[:FUNCNAME_BYTES]
                self._text = raw.decode("utf-8", "surrogateescape").rstrip(" \t\r\n\v\f")
                break
        self._scanned_to = max(self._scanned_to, start - 1)
        return self._text


def _hunk_lines(
    group: list[Op],
    a: list[str],
    a_eols: list[str],
    b: list[str],
    b_eols: list[str],
    funcs: _FuncContext,
) -> list[str]:
    first, last = group[0], group[-1]
    s1 = max(first[1] - CONTEXT, 0)
    e1 = min(last[2] + CONTEXT, len(a))
    s2 = first[3] - (first[1] - s1)
    e2 = last[4] + (e1 - last[2])
    func = funcs.above(s1)
    header = f"@@ -{git_range(s1, e1 - s1)} +{git_range(s2, e2 - s2)} @@"
    out = [header + (f" {func}" if func else "")]

    def line(mark: str, text: str, eol: str) -> None:
        out.append(mark + text + ("\r" if eol == "\r\n" else ""))
        if eol == "":
            out.append(NO_EOL)

    i = s1
    for tag, i1, i2, j1, j2 in group:
        for k in range(i, i1):
            line(" ", a[k], a_eols[k])
        for k in range(i1, i2):
            line("-", a[k], a_eols[k])
        for k in range(j1, j2):
            line("+", b[k], b_eols[k])
        i = i2
    for k in range(i, e1):
        line(" ", a[k], a_eols[k])
    return out


def _text_hunks(fp: FilePlan, old: bytes, new: bytes) -> list[str]:
    a, a_eols = split_git_lines(decode_bytes(old))
    b, b_eols = split_git_lines(decode_bytes(new))
    ka = list(map(str.__add__, a, a_eols))
    kb = list(map(str.__add__, b, b_eols))
    ops = None
    if fp.op in ("update", "move") and fp.hunks:
        ops = _ops_from_hunks(fp.hunks, ka, kb)
    if ops is None:
        ops = _ops_by_diff(ka, kb)
    out: list[str] = []
    funcs = _FuncContext(a)
    for group in _groups(ops):
        out += _hunk_lines(group, a, a_eols, b, b_eols, funcs)
    return out


# ---------------------------------------------------------------- binary data


def _base85_lines(data: bytes) -> list[str]:
    """git's data lines: a length letter, then base85 of the (zero-padded) 4-byte groups."""
    deflated = zlib.compress(data, 9)
    out = []
    for k in range(0, len(deflated), 52):
        chunk = deflated[k : k + 52]
        size = len(chunk)
        letter = chr(ord("A") + size - 1) if size <= 26 else chr(ord("a") + size - 27)
        padded = chunk + b"\0" * (-size % 4)
        out.append(letter + b85encode(padded).decode("ascii"))
    return out


def _binary_hunks(old: bytes, new: bytes) -> list[str]:
    out = ["GIT binary patch", f"literal {len(new)}", *_base85_lines(new), ""]
    out += [f"literal {len(old)}", *_base85_lines(old), ""]
    return out


# ---------------------------------------------------------------- per file


def file_diff(fp: FilePlan) -> list[str]:
    """One file's section of the diff, as `git diff --binary` prints it."""
    old = None if fp.op == "add" else (fp.old_bytes or b"")
    new = None if fp.op == "delete" else (fp.new_bytes or b"")
    old_path = fp.path
    new_path = fp.move_to if fp.op == "move" and fp.move_to else fp.path
    out = [f"diff --git {_prefixed('a/', old_path)} {_prefixed('b/', new_path)}"]
    old_mode = git_mode(fp.old_mode if fp.old_mode is not None else fp.mode)
    new_mode = git_mode(fp.mode)
    if old is None:
        out.append(f"new file mode {new_mode}")
    elif new is None:
        out.append(f"deleted file mode {old_mode}")
    else:
        if old_mode != new_mode:
            out += [f"old mode {old_mode}", f"new mode {new_mode}"]
        if old_path != new_path:
            out += [f"rename from {quote_path(old_path)}", f"rename to {quote_path(new_path)}"]
        if old == new:
            return out  # a rename or mode change only: git prints no index line
    old_data, new_data = old or b"", new or b""
    binary = is_binary(old_data) or is_binary(new_data)
    # git applies a binary patch only with full object ids (`--full-index`).
    index = f"index {_oid(old, binary)}..{_oid(new, binary)}"
    same_mode = old is not None and new is not None and old_mode == new_mode
    out.append(index + (f" {new_mode}" if same_mode else ""))
    if binary:
        return out + _binary_hunks(old_data, new_data)
    if not old_data and not new_data:
        return out  # an empty file added or deleted: no hunk
    src = "/dev/null" if old is None else _prefixed("a/", old_path)
    dst = "/dev/null" if new is None else _prefixed("b/", new_path)
    return out + [f"--- {src}", f"+++ {dst}"] + _text_hunks(fp, old_data, new_data)


def _git_order(fp: FilePlan) -> bytes:
    # git sorts by path as bytes; a rename sits where its new name does.
    return (fp.move_to if fp.op == "move" and fp.move_to else fp.path).encode(
        "utf-8", "surrogateescape"
    )


def written_diff(plan: PatchPlan) -> str:
    """The whole plan as one git diff, its files in git's order."""
    lines: list[str] = []
    for fp in sorted(plan.files, key=_git_order):
        lines += file_diff(fp)
    return "\n".join(lines) + "\n" if lines else ""
