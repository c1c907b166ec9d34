"""Reading back the diffs hello-tui wrote itself, with `unidiff`: files, hunks, +/- counts.

Two kinds of diff come in: the ones models and users write, read by the
tolerant git-rule parser (unified_parser.py), and the well-formed ones
written_diff.py writes (notes, the chat's auto-applied diff). This module reads
only the second kind, with a strict third-party parser, so what the notes
viewer, the sidebar, `hello-tui history` and the chat count is what any git
tool would count.

A note keeps at most MAX_PATCH_IN_NOTE characters of a diff: a clipped diff is
read up to its last whole file, and the summary says it is incomplete.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unidiff import PatchedFile, PatchSet, UnidiffParseError

from hello_tui.patch.gitquote import QuoteError, unquote_c_style
from hello_tui.patch.notes import CLIPPED_MARK

DEV_NULL = "/dev/null"
# The heading under which a "Patch applied" note keeps the diff written_diff wrote.
WRITTEN_HEADING = "Patch (what was written):"
_CLIPPED = re.compile("^" + re.escape(CLIPPED_MARK), re.MULTILINE)
_FENCED = re.compile(r"^(`{3,})diff\n(.*?)^\1$", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class FileSummary:
    path: str  # the new name (the old one for a deletion), unquoted
    old_path: str  # the old name (the new one for a creation)
    status: str  # "A" added, "D" deleted, "R" renamed, "M" modified (content or mode)
    added: int
    removed: int
    hunks: int
    binary: bool

    def label(self) -> str:
        """`M stats.py +3 −1`, `R a.py -> b.py +0 −0`, `A logo.png binary`."""
        name = f"{self.old_path} -> {self.path}" if self.status == "R" else self.path
        counts = "binary" if self.binary else f"+{self.added} −{self.removed}"
        return f"{self.status} {name} {counts}"


@dataclass(frozen=True)
class DiffSummary:
    files: tuple[FileSummary, ...]
    complete: bool = True  # False: the text was clipped or broken after these files

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed for f in self.files)

    @property
    def hunks(self) -> int:
        return sum(f.hunks for f in self.files)

    def line(self) -> str:
        """`2 files, +5 −3` (`at least` when the diff was clipped)."""
        n = len(self.files)
        text = f"{n} file{'s' if n != 1 else ''}, +{self.added} −{self.removed}"
        return text if self.complete else "at least " + text


def _name(raw: str | None) -> str | None:
    """A unidiff file name as the repository spells it: unquoted, without `a/` or `b/`."""
    if raw is None or raw == DEV_NULL:
        return None
    if raw.startswith('"'):
        try:
            raw, _rest = unquote_c_style(raw)
        except QuoteError:
            raw = raw.strip('"')
    return raw[2:] if raw[:2] in ("a/", "b/") else raw


def _file_summary(pf: PatchedFile) -> FileSummary:
    old, new = _name(pf.source_file), _name(pf.target_file)
    if old is None:
        status = "A"
    elif new is None:
        status = "D"
    elif old != new:
        status = "R"
    else:
        status = "M"
    path = new or old or ""
    return FileSummary(
        path=path,
        old_path=old or path,
        status=status,
        added=pf.added,
        removed=pf.removed,
        hunks=len(pf),
        binary=pf.is_binary_file,
    )


def _sections(text: str) -> list[str]:
    """The text cut before each `diff --git` line: one file's section each."""
    starts = [m.start() for m in re.finditer(r"^diff --git ", text, re.MULTILINE)]
    if not starts:
        return [text] if text.strip() else []
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]


def diff_summary(text: str) -> DiffSummary:
    """What a diff hello-tui wrote changes, file by file, as unidiff reads it.

    A section unidiff cannot read (a clipped note's last file) ends the summary
    there, marked incomplete."""
    clipped = _CLIPPED.search(text)
    if clipped:
        text = text[: clipped.start()]
    files: list[FileSummary] = []
    for section in _sections(text):
        try:
            parsed = PatchSet(section, metadata_only=True)
        except UnidiffParseError:
            return DiffSummary(tuple(files), complete=False)
        files += [_file_summary(pf) for pf in parsed]
    return DiffSummary(tuple(files), complete=clipped is None)


def written_patch(note_content: str) -> str | None:
    """The diff a "Patch applied" note recorded, or None for any other note."""
    at = note_content.find("\n" + WRITTEN_HEADING + "\n")
    if at < 0 and not note_content.startswith(WRITTEN_HEADING + "\n"):
        return None
    found = _FENCED.search(note_content, max(at, 0))
    return found.group(2) if found else None


def note_patch_summary(note_content: str) -> DiffSummary | None:
    """The summary of a "Patch applied" note's diff; None for any other note."""
    diff = written_patch(note_content)
    return None if diff is None else diff_summary(diff)
