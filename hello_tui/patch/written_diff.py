"""The one diff writer: every diff hello-tui prints is written here, as git writes it.

`diff_file(change)` turns one file's old and new bytes (and modes and names)
into a `FileDiff`: the model of that file's section of `git diff`, whose
`lines()` are git's text. `written_diff(plan)` is a whole plan, files in git's
order: the "Patch applied" note (what a commit wrote), the review's diff of a
proposed plan and the chat's auto-applied diff all come from it; `text_diff`
diffs two texts (the user's edit of a proposal, told to the model), and
`text_hunks` gives the same diff's changes as a plan's hunks, each headed by
its `@@` line, for the review of two texts (a backup, a plan without hunks).

git's format throughout: `diff --git` headers with `new file mode`, `deleted
file mode`, `old mode`/`new mode`, `similarity index` (git's own estimate)
with `rename from`/`rename to`, `index` lines, C-quoted unusual names,
`/dev/null` (a `---`/`+++` name with a space ends in a tab), hunk numbering (`-5` for a one-line range, `-4,0` for an
insertion after line 4), three lines of context with hunks merged when at most
six lines apart, the default function-name context after `@@`, lines split at
LF only (a CRLF line keeps its CR), `\\ No newline at end of file`, and binary
files as `GIT binary patch` literals or `Binary files ... differ`.

Time is linear in the file plus the patch: the plan's hunks are the changes
whenever they rebuild the new bytes (each is trimmed of the unchanged lines at
its ends), the function context is found by one backward pass over the file,
and only two texts with no hunks between them (or hunks the commit had to
repair) are diffed, by git's own line diff (line_diff.py), which also groups
the changes into hunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hello_tui.core.hunk_header import hunk_header
from hello_tui.patch.blob_ids import blob_id
from hello_tui.patch.gitquote import quote_path
from hello_tui.patch.line_diff import Op, hunk_groups, line_ops
from hello_tui.patch.lines import decode_bytes, is_binary, split_git_lines
from hello_tui.patch.types import FilePlan, Hunk, PatchPlan

CONTEXT = 3
NO_EOL = "\\ No newline at end of file"
FUNCNAME_BYTES = 80  # git's xdiff keeps at most 80 bytes of the function line
ABBREV = 7
DEV_NULL = "/dev/null"

__all__ = [
    "CONTEXT",
    "NO_EOL",
    "FileChange",
    "FileDiff",
    "HunkDiff",
    "Lines",
    "Op",
    "diff_file",
    "git_mode",
    "op_lines",
    "plan_changes",
    "quote_path",
    "render",
    "text_diff",
    "text_hunks",
    "written_diff",
]


@dataclass(frozen=True)
class FileChange:
    """One file's change as the writer takes it: None bytes mean the file is absent."""

    old_path: str
    new_path: str
    old: bytes | None
    new: bytes | None
    old_mode: int | None = None
    new_mode: int | None = None
    # The planned hunks (git's line numbering of `old`); used when they rebuild `new`.
    hunks: Sequence[Hunk] = ()

    @property
    def unchanged(self) -> bool:
        """Same name, bytes and executable bit: git prints nothing for it."""
        same_mode = git_mode(self.old_mode) == git_mode(self.new_mode)
        return self.old == self.new and self.old_path == self.new_path and same_mode


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class HunkDiff:
    """One `@@` hunk: 0-based starts and counts as git_range reads them, and its lines."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    func: str
    lines: list[str]  # " x", "-x", "+x" and NO_EOL markers, without their LF
    added: int
    removed: int

    @property
    def header(self) -> str:
        return hunk_header(
            self.old_start, self.old_count, self.new_start, self.new_count, self.func
        )


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class FileDiff:
    """One file's section of a git diff, kept as a model so counts need no re-reading."""

    old_path: str
    new_path: str
    created: bool
    deleted: bool
    header: list[str]  # `diff --git` to `index`, as git orders them
    binary: bool = False
    binary_body: list[str] = field(default_factory=list)
    hunks: list[HunkDiff] = field(default_factory=list)

    @property
    def added(self) -> int:
        return sum(h.added for h in self.hunks)

    @property
    def removed(self) -> int:
        return sum(h.removed for h in self.hunks)

    def lines(self) -> list[str]:
        out = list(self.header) + self.binary_body
        if self.hunks:
            src = DEV_NULL if self.created else quote_path("a/" + self.old_path)
            dst = DEV_NULL if self.deleted else quote_path("b/" + self.new_path)
            out += [f"--- {_label(src)}", f"+++ {_label(dst)}"]
        for hunk in self.hunks:
            out.append(hunk.header)
            out += hunk.lines
        return out


def _label(name: str) -> str:
    """A `---`/`+++` name: git ends one that holds a space with a tab, as GNU patch wants."""
    return name + "\t" if " " in name else name


def git_mode(mode: int | None) -> str:
    """git records only whether the owner may execute a file."""
    return "100755" if mode is not None and mode & 0o100 else "100644"


def _oid(data: bytes | None, full: bool) -> str:
    if data is None:
        return "0" * (40 if full else ABBREV)
    return blob_id(data) if full else blob_id(data)[:ABBREV]


# ---------------------------------------------------------------- changes as opcodes


def _trimmed(a: Lines, b: Lines, op: Op) -> list[Op]:
    """A change without the equal lines at its two ends (a hunk may restate its context)."""
    _tag, i1, i2, j1, j2 = op

    def same(i: int, j: int) -> bool:
        return a.lines[i] == b.lines[j] and a.eols[i] == b.eols[j]

    head = 0
    while i1 + head < i2 and j1 + head < j2 and same(i1 + head, j1 + head):
        head += 1
    tail = 0
    while i2 - tail > i1 + head and j2 - tail > j1 + head and same(i2 - tail - 1, j2 - tail - 1):
        tail += 1
    out: list[Op] = []
    if head:
        out.append(("equal", i1, i1 + head, j1, j1 + head))
    if i2 - tail > i1 + head or j2 - tail > j1 + head:
        out.append(("replace", i1 + head, i2 - tail, j1 + head, j2 - tail))
    if tail:
        out.append(("equal", i2 - tail, i2, j2 - tail, j2))
    return out


def _merged(ops: list[Op]) -> list[Op]:
    """Adjacent ops of one kind as one: git shows touching changes as one run of - then +."""
    out: list[Op] = []
    for op in ops:
        if out and (out[-1][0] == "equal") == (op[0] == "equal"):
            tag, i1, _i2, j1, _j2 = out[-1]
            out[-1] = (tag, i1, op[2], j1, op[4])
        else:
            out.append(op)
    return out


def _ops_from_hunks(hunks: Sequence[Hunk], a: Lines, b: Lines) -> list[Op] | None:
    """The hunks as opcodes, or None if they do not rebuild `b` from `a` exactly.

    Lines and endings are compared as they are, slice by slice: joining each line with
    its ending first would copy the whole of both files once more."""
    ops: list[Op] = []
    pos = shift = 0
    for h in sorted(hunks, key=lambda h: (h.old_start, h.index)):
        start, end = h.old_start, h.old_start + len(h.old_lines)
        if start < pos or end > len(a.lines):
            return None
        if start > pos:
            ops.append(("equal", pos, start, pos + shift, start + shift))
        new_start = start + shift
        new_end = new_start + len(h.new_lines)
        if new_end > len(b.lines):
            return None
        if end > start or new_end > new_start:
            ops += _trimmed(a, b, ("replace", start, end, new_start, new_end))
        shift += len(h.new_lines) - len(h.old_lines)
        pos = end
    if len(b.lines) != len(a.lines) + shift:
        return None
    if pos < len(a.lines):
        ops.append(("equal", pos, len(a.lines), pos + shift, len(a.lines) + shift))
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal" and (a.lines[i1:i2] != b.lines[j1:j2] or a.eols[i1:i2] != b.eols[j1:j2]):
            return None
    return _merged(ops)


# ---------------------------------------------------------------- function context


# xdiff's default rule (`def_ff`): a function line starts with an ASCII letter, `_` or `$`.
_FUNCNAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$")


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
        lines, first = self._a, _FUNCNAME_START
        for k in range(start - 1, self._scanned_to, -1):  # every old line passes here once
            if lines[k][:1] in first:
                raw = self._a[k].encode("utf-8", "surrogateescape")[:FUNCNAME_BYTES]
                self._text = raw.decode("utf-8", "surrogateescape").rstrip(" \t\r\n\v\f")
                break
        self._scanned_to = max(self._scanned_to, start - 1)
        return self._text


# ---------------------------------------------------------------- text hunks


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class Lines:
    """A text's lines and each line's ending ("\\n", "\\r\\n", or "" for a last line without one)."""

    lines: list[str]
    eols: list[str]

    @classmethod
    def of(cls, data: bytes) -> Lines:
        """Split as git splits: at LF only, a CR before it is part of the ending."""
        return cls(*split_git_lines(decode_bytes(data)))

    def keys(self) -> list[str]:
        return list(map(str.__add__, self.lines, self.eols))


def op_lines(ops: Sequence[Op], a: Lines, b: Lines, *, carriage_returns: bool = True) -> list[str]:
    """Each op's lines marked " ", "-" or "+", with NO_EOL after a line that has no ending.

    `carriage_returns`: a CRLF line keeps its CR before the LF the text will end it with,
    as git writes it; a Codex patch, whose lines carry no ending, leaves it off.
    """
    out: list[str] = []

    def line(mark: str, side: Lines, k: int) -> None:
        eol = side.eols[k]
        out.append(mark + side.lines[k] + ("\r" if carriage_returns and eol == "\r\n" else ""))
        if eol == "":
            out.append(NO_EOL)

    for tag, i1, i2, j1, j2 in ops:
        for k in range(i1, i2):
            line(" " if tag == "equal" else "-", a, k)
        if tag != "equal":
            for k in range(j1, j2):
                line("+", b, k)
    return out


def _hunk(ops: list[Op], a: Lines, b: Lines, funcs: _FuncContext) -> HunkDiff:
    s1, e1, s2, e2 = ops[0][1], ops[-1][2], ops[0][3], ops[-1][4]
    changes = [op for op in ops if op[0] != "equal"]
    added = sum(op[4] - op[3] for op in changes)
    removed = sum(op[2] - op[1] for op in changes)
    lines = op_lines(ops, a, b)
    return HunkDiff(s1, e1 - s1, s2, e2 - s2, funcs.above(s1), lines, added, removed)


def _text_hunks(change: FileChange, context: int) -> list[HunkDiff]:
    a, b = Lines.of(change.old or b""), Lines.of(change.new or b"")
    ops = _ops_from_hunks(change.hunks, a, b) if change.hunks else None
    if ops is None:
        ops = line_ops(a.keys(), b.keys())
    funcs = _FuncContext(a.lines)
    return [_hunk(group, a, b, funcs) for group in hunk_groups(ops, context)]


# ---------------------------------------------------------------- binary data


def _base85_lines(data: bytes) -> list[str]:
    """git's data lines: a length letter, then base85 of the (zero-padded) 4-byte groups."""
    import zlib  # here: a diff of text files never needs them
    from base64 import b85encode

    deflated = zlib.compress(data, 9)
    out = []
    for k in range(0, len(deflated), 52):
        chunk = deflated[k : k + 52]
        size = len(chunk)
        letter = chr(ord("A") + size - 1) if size <= 26 else chr(ord("a") + size - 27)
        padded = chunk + b"\0" * (-size % 4)
        out.append(letter + b85encode(padded).decode("ascii"))
    return out


def _binary_literals(old: bytes, new: bytes) -> list[str]:
    out = ["GIT binary patch", f"literal {len(new)}", *_base85_lines(new), ""]
    out += [f"literal {len(old)}", *_base85_lines(old), ""]
    return out


def _binary_differ(change: FileChange) -> list[str]:
    src = DEV_NULL if change.old is None else quote_path("a/" + change.old_path)
    dst = DEV_NULL if change.new is None else quote_path("b/" + change.new_path)
    return [f"Binary files {src} and {dst} differ"]


# ---------------------------------------------------------------- per file


def _header(change: FileChange) -> list[str]:
    """`diff --git` and git's extended header lines, up to (not including) `index`."""
    old, new = change.old, change.new
    out = [f"diff --git {quote_path('a/' + change.old_path)} {quote_path('b/' + change.new_path)}"]
    old_mode, new_mode = git_mode(change.old_mode), git_mode(change.new_mode)
    if old is None:
        out.append(f"new file mode {new_mode}")
    elif new is None:
        out.append(f"deleted file mode {old_mode}")
    else:
        if old_mode != new_mode:
            out += [f"old mode {old_mode}", f"new mode {new_mode}"]
        if change.old_path != change.new_path:
            from hello_tui.patch.similarity import similarity_percent  # renames only

            out += [
                f"similarity index {similarity_percent(old, new)}%",
                f"rename from {quote_path(change.old_path)}",
                f"rename to {quote_path(change.new_path)}",
            ]
    return out


def diff_file(
    change: FileChange, *, context: int = CONTEXT, binary_literals: bool = True
) -> FileDiff:
    """One file's section of `git diff` (`git diff --binary` with `binary_literals`)."""
    old, new = change.old, change.new
    diff = FileDiff(change.old_path, change.new_path, old is None, new is None, _header(change))
    if old == new:
        return diff  # a rename or mode change only: git prints no index line
    old_data, new_data = old or b"", new or b""
    diff.binary = is_binary(old_data) or is_binary(new_data)
    # git applies a binary patch only with full object ids (`--full-index`).
    full = diff.binary and binary_literals
    index = f"index {_oid(old, full)}..{_oid(new, full)}"
    same_mode = old is not None and new is not None
    same_mode = same_mode and git_mode(change.old_mode) == git_mode(change.new_mode)
    diff.header.append(index + (f" {git_mode(change.new_mode)}" if same_mode else ""))
    if diff.binary:
        literals = _binary_literals(old_data, new_data)
        diff.binary_body = literals if binary_literals else _binary_differ(change)
    elif old_data or new_data:  # an empty file added or deleted has no hunk
        diff.hunks = _text_hunks(change, context)
    return diff


def render(diffs: Sequence[FileDiff]) -> str:
    """The diffs as one text: each line ends with LF, as git prints them."""
    lines = [line for diff in diffs for line in diff.lines()]
    return "\n".join(lines) + "\n" if lines else ""


# ---------------------------------------------------------------- plans and texts


def _change_of(fp: FilePlan) -> FileChange:
    new_path = fp.move_to if fp.op == "move" and fp.move_to else fp.path
    return FileChange(
        old_path=fp.path,
        new_path=new_path,
        old=None if fp.op == "add" else (fp.old_bytes or b""),
        new=None if fp.op == "delete" else (fp.new_bytes or b""),
        old_mode=fp.old_mode if fp.old_mode is not None else fp.mode,
        new_mode=fp.mode,
        hunks=fp.hunks if fp.op in ("update", "move") else (),
    )


def plan_changes(plan: PatchPlan) -> list[FileChange]:
    """The plan's files as changes, in git's order: by path as bytes, a rename at its new name."""
    changes = [_change_of(fp) for fp in plan.files]
    return sorted(changes, key=lambda c: c.new_path.encode("utf-8", "surrogateescape"))


def written_diff(plan: PatchPlan, *, binary_literals: bool = True) -> str:
    """The whole plan as one git diff (`git diff --binary` with `binary_literals`)."""
    changes = [c for c in plan_changes(plan) if not c.unchanged]
    return render([diff_file(c, binary_literals=binary_literals) for c in changes])


def text_diff(
    path: str,
    old: str | None,
    new: str | None,
    *,
    new_path: str | None = None,
    context: int = CONTEXT,
) -> str:
    """Two texts (None: the file is absent) as git diffs them, with `context` lines."""

    def data(text: str | None) -> bytes | None:
        return None if text is None else text.encode("utf-8", "surrogateescape")

    change = FileChange(path, new_path or path, data(old), data(new))
    return "" if change.unchanged else render([diff_file(change, context=context)])


def text_hunks(old: str, new: str) -> list[Hunk]:
    """The changes of `text_diff(path, old, new)` as hunks without context (git's -U0 hunks):
    one hunk a run of changed lines, lines split as git splits them and kept without
    their endings (`new_eols` has them), its header the writer's `@@` line for it."""
    a, b = Lines(*split_git_lines(old)), Lines(*split_git_lines(new))
    funcs = _FuncContext(a.lines)
    hunks: list[Hunk] = []
    for ops in hunk_groups(line_ops(a.keys(), b.keys()), 0):
        _tag, i1, i2, j1, j2 = ops[0]  # without context a hunk is one run of changes
        hunks.append(
            Hunk(
                len(hunks),
                i1,
                a.lines[i1:i2],
                b.lines[j1:j2],
                header=_hunk(ops, a, b, funcs).header,
                no_eol=j2 == len(b.lines) and j2 > j1 and b.eols[-1] == "",
                new_eols=list(b.eols[j1:j2]),
            )
        )
    return hunks
