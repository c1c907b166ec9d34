"""The patch model shared by the parser, planner, committer, tools and the review UI."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

FileOp = Literal["add", "update", "delete", "move"]


class PatchError(Exception):
    """A patch that cannot be parsed, planned or committed. The message is for the model."""


@dataclass
class Hunk:
    """One reviewable change inside a file: old lines [old_start, old_start+len(old_lines))
    (0-based, in the file's current lines) become new_lines."""

    index: int
    old_start: int
    old_lines: list[str]
    new_lines: list[str]
    header: str = ""
    # The last new line is written without a line ending (`\ No newline at end of file`);
    # only meaningful when the hunk reaches the end of the file.
    no_eol: bool = False


@dataclass
class FilePlan:
    path: str  # relative, POSIX
    op: FileOp
    move_to: str | None = None
    old_text: str | None = None  # decoded current content (None for add)
    new_text: str | None = None  # decoded new content (None for delete)
    old_bytes: bytes | None = None
    new_bytes: bytes | None = None
    old_hash: str | None = None  # sha256 of old_bytes, for the stale guard
    hunks: list[Hunk] = field(default_factory=list)
    whole_file_rewrite: bool = False
    mode: int | None = None  # permission bits to keep

    @property
    def added_lines(self) -> int:
        return sum(len(h.new_lines) for h in self.hunks)

    @property
    def removed_lines(self) -> int:
        return sum(len(h.old_lines) for h in self.hunks)


@dataclass
class Risk:
    high: bool
    reasons: list[str] = field(default_factory=list)


@dataclass
class PatchPlan:
    files: list[FilePlan]
    risk: Risk
    source_text: str = ""  # the patch as the model wrote it
    declined_hunks: int = 0  # hunks left out by `select`, reported in the CommitResult


# Partial acceptance: path -> indices of accepted hunks. A path absent from the
# mapping is declined entirely. None means "everything".
Selection = dict[str, set[int]] | None


@dataclass
class CommitResult:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    hunks_applied: int = 0
    hunks_declined: int = 0
    backup_dir: str | None = None  # relative to the repo
    note_id: str | None = None

    def summary_lines(self) -> list[str]:
        lines = [f"A {p}" for p in self.added]
        lines += [f"M {p}" for p in self.updated]
        lines += [f"R {a} -> {b}" for a, b in self.moved]
        lines += [f"D {p}" for p in self.deleted]
        return lines
