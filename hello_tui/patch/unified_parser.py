"""Unified diffs (`git diff`, `diff -u`, format-patch bodies) into file operations, by git's rules.

A file section starts at `diff --git a/x b/y` (then git's extended header
lines: modes, new/deleted file, rename/copy from/to, similarity, index) or at
a `--- x` / `+++ y` pair followed by a hunk. Paths may be C-quoted; the `a/`
`b/` prefixes (or any other pair of differing first components) are removed.

Hunks are read as git reads them: the `@@ -l,s +l,s @@` counts say how many
lines belong to the hunk, so a `-- ` signature, a Markdown fence, or a line
starting `--- ` that follows a complete hunk is not part of it, and a bare
empty line inside the counted lines is a blank context line. Each line keeps
its own ending; `\\ No newline at end of file` takes the ending off the line
before it.

Models miscount hunks. When the counted lines do not fit (a line that cannot
be a hunk line comes first), or more hunk lines follow the counted ones up to
the next hunk, file or the end of the text, the hunk is taken as the lines
actually there, and a warning says so. A hunk whose header says it replaces
lines but that has no context or removed line cannot be placed, and is
refused as corrupt.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from hello_tui.core.lazy_regex import lazy_compile
from hello_tui.patch.gitquote import QuoteError, is_quoted, unquote_c_style
from hello_tui.patch.model import Chunk, FileOperation
from hello_tui.patch.types import PatchError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_BARE_HUNK = lazy_compile(r"^@@(?:\s.*)?$")
_NULL = "/dev/null"
_TIMESTAMP = re.compile(
    r"\s+(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?(?: ?[+-]\d\d:?\d\d)?"
    r"|\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4})\s*$"
)
_EPOCH = re.compile(r"^(1969-12-31|1970-01-01) (\d\d):(\d\d):00(?:\.0+)? ([+-])(\d\d):?(\d\d)$")
_VERSION_LINE = lazy_compile(r"^\d+(\.\d+)+")
_DIFF_GIT = "diff --git "
_MODE_LINES = ("old mode ", "new mode ", "deleted file mode ", "new file mode ")
_EXTENDED = (
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "copy from ",
    "copy to ",
    "rename old ",
    "rename new ",
    "rename from ",
    "rename to ",
    "similarity index ",
    "dissimilarity index ",
    "index ",
)


def bare(line: str) -> str:
    """The line without the "\\r" of a CRLF ending."""
    return line.removesuffix("\r")


def is_hunk_header(line: str) -> bool:
    b = bare(line)
    return b.startswith("@@") and bool(_HUNK.match(b) or _BARE_HUNK.match(b))


def _is_hunk_line(line: str) -> bool:
    return line == "" or line == "\r" or line[0] in " +-\\"


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class _Header:
    """What the header lines of one file's section said, as read so far."""

    source_line: int
    git: bool = False
    old_name: str | None = None  # None: /dev/null
    new_name: str | None = None
    header_names: tuple[str, str] | None = None  # raw `diff --git` names, prefixes kept
    line_names: list[str | None] = field(default_factory=lambda: [None, None])  # raw ---/+++
    line_null: list[bool] = field(default_factory=lambda: [False, False])
    is_new: bool = False
    is_delete: bool = False
    rename: bool = False
    copy: bool = False
    renamed_from: str | None = None
    renamed_to: str | None = None
    old_mode: int | None = None
    new_mode: int | None = None
    old_oid: str | None = None
    new_oid: str | None = None
    epoch_new: bool = False
    epoch_delete: bool = False
    headless: bool = False  # git's header lines without their `diff --git` line
    headless_mode_line: int | None = None  # the first mode line such a header ignored


def _parse_mode(text: str, line_no: int) -> int:
    value = text.strip()
    if not value or any(c not in "01234567" for c in value):
        raise PatchError(f"Invalid unified diff on line {line_no}: {value!r} is not a file mode.")
    return int(value, 8)


def _unquote_or_plain(text: str, line_no: int) -> str:
    if is_quoted(text):
        try:
            name, _rest = unquote_c_style(text)
        except QuoteError as exc:
            raise PatchError(f"Invalid unified diff on line {line_no}: {exc}.") from None
        return name
    return text


def _split_header_names(rest: str) -> tuple[str, str] | None:
    """The two names of `diff --git <a> <b>`, prefixes kept, or None when it cannot tell."""
    try:
        if is_quoted(rest):
            first, after = unquote_c_style(rest)
            after = after.lstrip(" \t")
            if not after:
                return None
            second = unquote_c_style(after)[0] if is_quoted(after) else after
            return first, second
        quote = rest.find(' "')
        if quote > 0:
            return rest[:quote], unquote_c_style(rest[quote + 1 :])[0]
    except QuoteError:
        return None
    # Unquoted: the split where both halves name the same file after their first component.
    candidates = [i for i, c in enumerate(rest) if c == " "]
    for i in candidates:
        first, second = rest[:i], rest[i + 1 :]
        if _drop_first(first) == _drop_first(second) and "/" in first:
            return first, second
    if len(candidates) == 1:
        i = candidates[0]
        return rest[:i], rest[i + 1 :]
    return None


def _drop_first(name: str) -> str:
    return name.split("/", 1)[1] if "/" in name else name


def _line_name(text: str, git: bool, line_no: int) -> tuple[str | None, bool, str]:
    """(name or None for /dev/null, is-null, the part after the name) from a ---/+++ line."""
    if is_quoted(text):
        try:
            name, rest = unquote_c_style(text)
        except QuoteError as exc:
            raise PatchError(f"Invalid unified diff on line {line_no}: {exc}.") from None
        return (None, True, rest) if name == _NULL else (name, False, rest)
    rest = ""
    if "\t" in text:
        text, rest = text.split("\t", 1)
    elif not git:
        m = _TIMESTAMP.search(text)
        if m:
            text, rest = text[: m.start()], m.group(1)
    text = text.rstrip() if not git else text
    if text == _NULL:
        return None, True, rest
    return text, False, rest


def _has_epoch_timestamp(stamp: str) -> bool:
    """GNU diff marks a created or deleted file with the epoch as the other side's time."""
    m = _EPOCH.match(stamp.strip())
    if not m:
        return False
    epoch_hour = 24 if m.group(1) == "1969-12-31" else 0
    zone = int(m.group(5)) * 60 + int(m.group(6))
    if m.group(4) == "-":
        zone = -zone
    return int(m.group(2)) * 60 + int(m.group(3)) - zone == epoch_hour * 60


def _strips_prefix(pair: list[str] | list[str | None]) -> bool:
    """Whether these names carry a prefix component (`a/` `b/`, or two differing first parts)."""
    names = [p for p in pair if p]
    if not names or not all("/" in p for p in names):
        return False
    firsts = {p.split("/", 1)[0] for p in names}
    if firsts & {"a", "b"}:
        return True
    return len(names) == 2 and len(firsts) == 2


def _strip_agreeing_with_renames(head: _Header, guess: bool) -> bool:
    """git never prefixes the names of `rename from/to` and `copy from/to` lines, so where
    a section has them, they tell whether its other names carry a prefix: in a `git diff
    --no-prefix` rename (`diff --git tqdm/tests/x.py tests/x.py`) the two first parts
    differ, which otherwise reads as a prefix to strip."""
    named = (head.renamed_from, head.renamed_to)
    sides = [head.line_names, head.header_names or [None, None]]
    for strip in (guess, not guess):
        if all(
            raw is None or name is None or _apply_strip(raw, strip) == name
            for pair in sides
            for raw, name in zip(pair, named)
        ) and any(name is not None for name in named):
            return strip
    return guess


def _apply_strip(name: str | None, strip: bool) -> str | None:
    if name is None or not strip or "/" not in name:
        return name
    return name.split("/", 1)[1]


class UnifiedParser:
    """Parses file sections from a list of raw lines (split at "\\n", "\\r" kept)."""

    def __init__(self, lines: list[str], stop: Callable[[str], bool] | None = None) -> None:
        self.lines = lines
        self.n = len(lines)
        self.stop = stop
        self.warnings: list[str] = []

    # ---- where things start and end -------------------------------------------------

    def section_start(self, i: int) -> bool:
        if i >= self.n:
            return False
        line = self.lines[i]
        if line.startswith(_DIFF_GIT):
            return True
        if line.startswith(_EXTENDED):
            return self._headless_git_section(i)
        return (
            line.startswith("--- ")
            and i + 2 < self.n
            and self.lines[i + 1].startswith("+++ ")
            and is_hunk_header(self.lines[i + 2])
        )

    def _headless_git_section(self, i: int) -> bool:
        """git's header lines whose `diff --git` line was lost (models and editors drop it):
        a section still, when they end in a `---`/`+++` pair or name a rename or copy."""
        renames = 0
        while i < self.n and self.lines[i].startswith(_EXTENDED):
            renames += self.lines[i].startswith(("rename from ", "rename to ", "copy "))
            i += 1
        if renames >= 2:
            return True
        return (
            i + 1 < self.n
            and self.lines[i].startswith("--- ")
            and self.lines[i + 1].startswith("+++ ")
        )

    def _one_headless_file(self, i: int) -> None:
        """Header lines without their `diff --git` line must be one file's: the same kind
        twice means several files lost theirs, and which lines were whose is unknowable."""
        seen: set[str] = set()
        while i < self.n and self.lines[i].startswith(_EXTENDED):
            kind = next(k for k in _EXTENDED if self.lines[i].startswith(k))
            # A second `index` line is left to the section's own checks, which can say
            # more (a deletion that ran into the next file's lines, for one).
            if kind in seen and kind != "index ":
                raise PatchError(
                    f"Corrupt patch at patch line {i + 1}: {kind.strip()!r} again in header "
                    "lines that have no 'diff --git' line, so they belong to several files "
                    "and which file each is for cannot be known. Give each file its "
                    "'diff --git a/PATH b/PATH' line."
                )
            seen.add(kind)
            i += 1

    def _signature(self, k: int) -> bool:
        """A mail's `-- ` signature line (git's version follows it)."""
        if bare(self.lines[k]) not in ("-- ", "--"):
            return False
        if k + 1 >= self.n:
            return True
        nxt = bare(self.lines[k + 1])
        return nxt == "" or not _is_hunk_line(nxt) or bool(_VERSION_LINE.match(nxt))

    def _boundary(self, k: int) -> bool:
        """A line that ends the lines of a miscounted hunk (the next hunk, file, or block)."""
        line = self.lines[k]
        if is_hunk_header(line) or line.startswith(_DIFF_GIT):
            return True
        if line.startswith("--- ") and k + 1 < self.n and self.lines[k + 1].startswith("+++ "):
            return True
        if self.stop is not None and self.stop(line):
            return True
        return self._signature(k)

    def _run_end(self, j: int) -> tuple[int, int]:
        """(end of the hunk-like lines from j, that end without trailing blank lines)."""
        k = j
        while k < self.n and _is_hunk_line(self.lines[k]) and not self._boundary(k):
            k += 1
        trimmed = k
        while trimmed > j and self.lines[trimmed - 1] in ("", "\r"):
            trimmed -= 1
        return k, trimmed

    # ---- sections --------------------------------------------------------------------

    def parse(self, start: int) -> tuple[list[FileOperation], int]:
        """Every file section from `start` on, while sections follow each other."""
        ops: list[FileOperation] = []
        i = start
        while self.section_start(i):
            op, i = self._section(i)
            if op is not None:
                ops.append(op)
        return ops, i

    def _section(self, i: int) -> tuple[FileOperation | None, int]:
        head = _Header(source_line=i + 1)
        if self.lines[i].startswith(_DIFF_GIT):
            head.git = True
            head.header_names = _split_header_names(bare(self.lines[i])[len(_DIFF_GIT) :])
            i = self._extended_header(head, i + 1)
        elif self.lines[i].startswith(_EXTENDED):
            self._one_headless_file(i)
            head.git = head.headless = True
            i = self._extended_header(head, i)
            self._no_mode_for_a_headless_rename(head)
        else:
            self._name_lines(head, i)
            i += 2
        chunks: list[Chunk] = []
        binary = None
        without_data = False
        if i < self.n and bare(self.lines[i]) == "GIT binary patch":
            # Here: a text patch never needs the binary format's parser.
            from hello_tui.patch.binary import BinaryCorrupt, parse_binary_patch

            try:
                binary, i = parse_binary_patch(self.lines, i + 1)
            except BinaryCorrupt as exc:
                raise PatchError(
                    f"Corrupt binary patch for the file at patch line {head.source_line}: {exc}."
                ) from None
        elif i < self.n and self._binary_marker(bare(self.lines[i])):
            without_data = True
            i += 1
        else:
            new_file = head.is_new or (head.line_null[0] and not head.line_null[1])
            while i < self.n and is_hunk_header(self.lines[i]):
                chunk, i = self._hunk(i, new_file)
                if chunk is not None:
                    chunks.append(chunk)
                i = self._skip_blanks_before_hunk(i)
        return self._operation(head, chunks, binary, without_data), i

    @staticmethod
    def _binary_marker(line: str) -> bool:
        return line.startswith(("Binary files ", "Files ")) and line.endswith(" differ")

    def _skip_blanks_before_hunk(self, i: int) -> int:
        """Blank lines a model put between two hunks of one file do not end the file."""
        k = i
        while k < self.n and self.lines[k] in ("", "\r"):
            k += 1
        if k > i and k < self.n and is_hunk_header(self.lines[k]):
            return k
        return i

    def _extended_header(self, head: _Header, i: int) -> int:
        while i < self.n:
            line = bare(self.lines[i])
            no = i + 1
            if line.startswith("--- ") and i + 1 < self.n and self.lines[i + 1].startswith("+++ "):
                self._name_lines(head, i)
                return i + 2
            if not line.startswith(_EXTENDED):
                return i
            if line.startswith(_MODE_LINES) and head.headless:
                # Only a `diff --git` line says whose mode lines these are: a file whose
                # section had nothing else (a mode change alone, an empty new file) leaves
                # them right above the next file's `---` line. git reads them as text
                # between sections, and so do we for the modes; "new"/"deleted" are kept,
                # only to refuse a section whose `---`/`+++` lines say otherwise.
                head.is_new = head.is_new or line.startswith("new file mode ")
                head.is_delete = head.is_delete or line.startswith("deleted file mode ")
                head.headless_mode_line = head.headless_mode_line or no
                self._warn_ignored_mode(no)
            elif line.startswith("old mode "):
                head.old_mode = _parse_mode(line[9:], no)
            elif line.startswith("new mode "):
                head.new_mode = _parse_mode(line[9:], no)
            elif line.startswith("deleted file mode "):
                head.is_delete = True
                head.old_mode = _parse_mode(line[18:], no)
            elif line.startswith("new file mode "):
                head.is_new = True
                head.new_mode = _parse_mode(line[14:], no)
            elif line.startswith(("copy from ", "rename from ", "rename old ")):
                head.copy = line.startswith("copy")
                head.rename = not head.copy
                head.renamed_from = _unquote_or_plain(line.split(" ", 2)[2], no)
            elif line.startswith(("copy to ", "rename to ", "rename new ")):
                head.copy = line.startswith("copy")
                head.rename = not head.copy
                head.renamed_to = _unquote_or_plain(line.split(" ", 2)[2], no)
            elif line.startswith("index "):
                self._index_line(head, line[6:])
            i += 1
        return i

    @staticmethod
    def _no_mode_for_a_headless_rename(head: _Header) -> None:
        """git writes a rename's mode lines right above its rename lines, and a mode-only
        file's right above the next file's: with the `diff --git` lines lost both read the
        same. Ignoring them (as for a plain `---` section) would move the file with a mode
        the patch may have changed, and git itself ignores the whole rename there."""
        if head.headless_mode_line is not None and (head.rename or head.copy):
            raise PatchError(
                f"Corrupt patch at patch line {head.headless_mode_line}: mode lines and "
                f"{'copy' if head.copy else 'rename'} lines without their 'diff --git' "
                "line; whether the mode change is this file's or belongs to a file before "
                "it cannot be known. Give each file its 'diff --git a/PATH b/PATH' line."
            )

    def _warn_ignored_mode(self, line_no: int) -> None:
        self.warnings.append(
            f"patch line {line_no}: a mode line without its 'diff --git' line was ignored,"
            " as git ignores it (which file it was for cannot be known)"
        )

    @staticmethod
    def _index_line(head: _Header, text: str) -> None:
        ids, _, mode = text.partition(" ")
        old, sep, new = ids.partition("..")
        if sep and all(c in "0123456789abcdefABCDEF" for c in old + new):
            head.old_oid, head.new_oid = old, new
        if mode.strip().isdigit() and head.old_mode is None and head.new_mode is None:
            value = int(mode.strip(), 8)
            head.old_mode = head.new_mode = value

    def _name_lines(self, head: _Header, i: int) -> None:
        for side, line_index in ((0, i), (1, i + 1)):
            text = bare(self.lines[line_index])[4:]
            name, null, stamp = _line_name(text, head.git, line_index + 1)
            head.line_names[side] = name
            head.line_null[side] = null
            if not head.git and not null and _has_epoch_timestamp(stamp):
                if side == 0:
                    head.epoch_new = True
                else:
                    head.epoch_delete = True

    # ---- hunks -----------------------------------------------------------------------

    def _hunk(self, i: int, new_file: bool = False) -> tuple[Chunk | None, int]:
        header = bare(self.lines[i])
        m = _HUNK.match(header)
        chunk = Chunk(source_line=i + 1, eols=[], header_text=header)
        j = i + 1
        counted = m is not None
        satisfied = False
        if m is not None:
            old_count = int(m.group(2)) if m.group(2) is not None else 1
            new_count = int(m.group(4)) if m.group(4) is not None else 1
            j, satisfied = self._counted(chunk, j, old_count, new_count)
        if satisfied:
            end, trimmed = self._run_end(j)
            if trimmed > j and (end >= self.n or self._boundary(end)):
                satisfied = False  # more hunk lines follow up to the next hunk: undercounted
        if not satisfied:
            chunk = Chunk(source_line=i + 1, eols=[], header_text=header)
            end, trimmed = self._run_end(i + 1)
            self._collect(chunk, i + 1, trimmed)
            j = trimmed
            if counted:
                self._warn_recount(chunk, header, old_count, new_count)
        if not chunk.items:
            self.warnings.append(f"patch line {i + 1}: the hunk {header!r} has no lines; skipped.")
            return None, j
        old_len = len(chunk.old_lines)
        if m is not None:
            start = int(m.group(1))
            # `-0,N` can only mean the top of the file, whatever N says (git: oldpos 0).
            if old_len == 0 and old_count > 0 and start > 0 and not new_file:
                after = max(start - 1, 0)
                raise PatchError(
                    f"Corrupt hunk at patch line {i + 1}: {header!r} says it replaces "
                    f"{old_count} line(s) from line {start}, but it has no context or removed "
                    "lines, so nothing shows where it goes. Give it context lines, or write "
                    f"'@@ -{after},0 +{after + 1},{len(chunk.new_lines)} @@' to insert after "
                    f"line {after}."
                )
            chunk.line_hint = start if old_len == 0 else max(start - 1, 0)
            new_start = int(m.group(3))
            chunk.new_hint = new_start if not chunk.new_lines else max(new_start - 1, 0)
        chunk.bare_blank_tail = self._bare_blank_tail(i + 1, j, chunk)
        # git never ends an `@@` line in a CR (it trims the function context it shows,
        # and CRs in the file's lines end up only in hunk lines), so one that does comes
        # from a copy converted to CRLF: the CRLF of its '+' lines may be the copy's too.
        if self.lines[i].endswith("\r"):
            chunk.eols_converted = True
        chunk.no_eol = self._new_side_no_eol(chunk)
        chunk.end_of_file = self._old_side_no_eol(chunk)
        return chunk, j

    def _warn_recount(self, chunk: Chunk, header: str, old_count: int, new_count: int) -> None:
        old_len, new_len = len(chunk.old_lines), len(chunk.new_lines)
        if (old_len, new_len) != (old_count, new_count):
            chunk.counts_wrong = True
            self.warnings.append(
                f"patch line {chunk.source_line}: the hunk header {header!r} counts "
                f"{old_count} old and {new_count} new lines, the hunk has {old_len} and {new_len}; "
                "its lines were used."
            )

    def _counted(self, chunk: Chunk, j: int, old_left: int, new_left: int) -> tuple[int, bool]:
        """Read the lines the counts announce; (next index, whether they fit exactly)."""
        while (old_left > 0 or new_left > 0) and j < self.n:
            line = self.lines[j]
            if not _is_hunk_line(line):
                return j, False
            if line[:1] == "\\":
                if not self._mark_no_eol(chunk, line):
                    return j, False
                j += 1
                continue
            kind = " " if line in ("", "\r") else line[0]
            if (kind != "+" and old_left == 0) or (kind != "-" and new_left == 0):
                return j, False
            self._add_item(chunk, line)
            if kind != "+":
                old_left -= 1
            if kind != "-":
                new_left -= 1
            j += 1
        if old_left or new_left:
            return j, False
        while j < self.n and self.lines[j][:1] == "\\" and self._mark_no_eol(chunk, self.lines[j]):
            j += 1
        return j, True

    def _collect(self, chunk: Chunk, j: int, end: int) -> None:
        for k in range(j, end):
            line = self.lines[k]
            if line[:1] == "\\":
                self._mark_no_eol(chunk, line)
            else:
                self._add_item(chunk, line)

    @staticmethod
    def _add_item(chunk: Chunk, line: str) -> None:
        assert chunk.eols is not None
        if line in ("", "\r"):
            chunk.items.append((" ", ""))
            chunk.eols.append("\r\n" if line else "\n")
            return
        text = line[1:]
        if text.endswith("\r"):
            chunk.items.append((line[0], text[:-1]))
            chunk.eols.append("\r\n")
        else:
            chunk.items.append((line[0], text))
            chunk.eols.append("\n")

    @staticmethod
    def _mark_no_eol(chunk: Chunk, marker: str) -> bool:
        """`\\ No newline at end of file`: the line before it has no ending (its "\\r" is text).

        git writes the marker with a bare "\\n". A marker ending in "\\r\\n" shows that
        the whole copy was converted to CRLF, so the "\\r" before the previous line's "\\n"
        came from that conversion too: the line has no ending at all.
        """
        assert chunk.eols is not None
        if not chunk.items or chunk.eols[-1] == "":
            return False
        kind, text = chunk.items[-1]
        if marker.endswith("\r"):
            chunk.eols_converted = True
        elif chunk.eols[-1] == "\r\n":
            chunk.items[-1] = (kind, text + "\r")
        chunk.eols[-1] = ""
        return True

    def _bare_blank_tail(self, start: int, end: int, chunk: Chunk) -> int:
        count = 0
        k = end - 1
        while k >= start and self.lines[k] in ("", "\r") and count < len(chunk.items):
            count += 1
            k -= 1
        return count

    @staticmethod
    def _new_side_no_eol(chunk: Chunk) -> bool:
        assert chunk.eols is not None
        for (kind, _), eol in zip(reversed(chunk.items), reversed(chunk.eols)):
            if kind != "-":
                return eol == ""
        return False

    @staticmethod
    def _old_side_no_eol(chunk: Chunk) -> bool:
        assert chunk.eols is not None
        for (kind, _), eol in zip(reversed(chunk.items), reversed(chunk.eols)):
            if kind != "+":
                return eol == ""
        return False

    # ---- the operation ---------------------------------------------------------------

    def _names(self, head: _Header) -> tuple[str | None, str | None]:
        raw = list(head.header_names) if head.header_names else list(head.line_names)
        strip = _strips_prefix(raw) if any(raw) else False
        if head.header_names is None and not any(head.line_names):
            strip = False
        strip = _strip_agreeing_with_renames(head, strip)
        old = _apply_strip(head.line_names[0], strip)
        new = _apply_strip(head.line_names[1], strip)
        if head.header_names is not None:
            h_old = _apply_strip(head.header_names[0], strip)
            h_new = _apply_strip(head.header_names[1], strip)
            if old is None and not head.line_null[0]:
                old = h_old
            if new is None and not head.line_null[1]:
                new = h_new
        for side, named, line_name in ((0, head.renamed_from, old), (1, head.renamed_to, new)):
            if named is not None and line_name is not None and named != line_name:
                which = "old" if side == 0 else "new"
                raise PatchError(
                    f"Invalid unified diff: the file section at patch line {head.source_line} "
                    f"names two {which} files, {named!r} (rename/copy line) and {line_name!r} "
                    f"('{'---' if side == 0 else '+++'}' line); is a 'diff --git' line missing "
                    "between two sections?"
                )
        if head.renamed_from is not None:
            old = head.renamed_from
        if head.renamed_to is not None:
            new = head.renamed_to
        if not head.git and old is not None and new is not None and old != new:
            # A traditional diff never renames: git takes the shorter name when the other
            # one only adds a suffix ("file.orig", "file~"), else the new one.
            old = new = old if new.startswith(old) else new
        return old, new

    def _operation(
        self, head: _Header, chunks: list[Chunk], binary, without_data: bool
    ) -> FileOperation | None:
        old, new = self._names(head)
        is_new = head.is_new or (head.line_null[0] and not head.line_null[1]) or head.epoch_new
        is_delete = (
            head.is_delete or (head.line_null[1] and not head.line_null[0]) or head.epoch_delete
        )
        where = f"the file section at patch line {head.source_line}"
        said_new = head.is_new and head.line_names[0] is not None
        said_deleted = head.is_delete and head.line_names[1] is not None
        if said_new or said_deleted:
            raise PatchError(
                f"Invalid unified diff: {where} says '{'new' if said_new else 'deleted'} file "
                f"mode' but its '{'---' if said_new else '+++'}' line names "
                f"{head.line_names[0 if said_new else 1]!r}, not /dev/null; is a 'diff --git' "
                "line missing between two sections?"
            )
        if is_new and is_delete:
            raise PatchError(f"Invalid unified diff: {where} both creates and deletes a file.")
        name = new if is_new else old
        if not name:
            raise PatchError(f"Invalid unified diff: {where} does not name its file.")
        common = {
            "source_line": head.source_line,
            "dialect": "unified",
            "old_mode": head.old_mode,
            "new_mode": head.new_mode,
            "old_oid": head.old_oid,
            "new_oid": head.new_oid,
            "binary": binary,
            "binary_without_data": without_data,
        }
        if is_new:
            if any(ch.old_lines for ch in chunks):
                raise PatchError(
                    f"Invalid unified diff: the new file {name} ({where}) has context or removed "
                    "lines; a new file's hunk has only '+' lines."
                )
            content = "".join(
                text + eol for ch in chunks for (_, text), eol in zip(ch.items, ch.eols or [])
            )
            added = FileOperation("add", name, content=content, **common)
            added.crlf_copy = any(ch.eols_converted for ch in chunks)
            return added
        if is_delete:
            if any(kind != "-" for ch in chunks for kind, _ in ch.items):
                raise PatchError(
                    f"Invalid unified diff: the deletion of {name} ({where}) still has context "
                    "or added lines; a deleted file's hunk has only '-' lines."
                )
            return FileOperation("delete", name, chunks=chunks, **common)
        op = FileOperation("update", name, chunks=chunks, **common)
        if new is not None and new != old:
            op.move_to = new
            op.copy = head.copy
        mode_change = (
            head.old_mode is not None
            and head.new_mode is not None
            and head.old_mode != head.new_mode
        )
        if not chunks and op.move_to is None and not mode_change and binary is None:
            if without_data:
                return op
            raise PatchError(
                f"Invalid unified diff: the change to {name} ({where}) has no hunks, and no "
                "mode change or rename either."
            )
        # A traditional diff does not say whether it creates its file; like git, a single
        # hunk that only adds lines at the top creates the file when it does not exist.
        op.maybe_new = (
            not head.git
            and len(chunks) == 1
            and not chunks[0].old_lines
            and chunks[0].line_hint == 0
            and op.move_to is None
        )
        return op
