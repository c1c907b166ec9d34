"""The patch model shared by the parser, planner, committer, tools and the review UI."""

from __future__ import annotations

from dataclasses import dataclass, field

from hello_tui.core.lazy_regex import lazy_compile

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Literal

    FileOp = Literal["add", "update", "delete", "move"]

# Bytes of a non-UTF-8 file travel as the lone surrogates of "surrogateescape".
_ESCAPED_BYTE = lazy_compile("[\udc80-\udcff]")


def printable(text: str) -> str:
    """Text safe to print and store: bytes kept as lone surrogates are shown as \\xNN."""
    if text.isascii() or _ESCAPED_BYTE.search(text) is None:
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


class PatchError(Exception):
    """A patch that cannot be parsed, planned or committed. The message is for the model."""

    def __init__(self, message: str = "") -> None:
        # Lines of non-UTF-8 files travel as lone surrogates; a message must print anywhere.
        super().__init__(printable(message))


# Compared by identity: no generated __eq__, which apply would compile at every start.
@dataclass(eq=False)
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
    # Each new line's own ending ("\n", "\r\n"), as a git diff carries it; None (for the
    # list or an entry) means the file's own ending, for patches that cannot say (Codex).
    new_eols: list[str | None] | None = None


# Compared by identity: no generated __eq__, which apply would compile at every start.
@dataclass(eq=False)
class FilePlan:
    """One file of a plan: its operation, contents and modes before and after, its hunks."""

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
    mode: int | None = None  # permission bits to write (None: the default for a new file)
    old_mode: int | None = None  # permission bits on disk before the patch
    # The hunks index the file's lines as git does (lines end at "\n", a BOM is text):
    # how `select` must read old_bytes again to apply a subset of them.
    git_lines: bool = False

    @property
    def mode_changed(self) -> bool:
        """The patch changes the executable bit (git's `old mode` / `new mode`)."""
        return self.old_mode is not None and self.mode is not None and self.old_mode != self.mode

    @property
    def added_lines(self) -> int:
        return sum(len(h.new_lines) for h in self.hunks)

    @property
    def removed_lines(self) -> int:
        return sum(len(h.old_lines) for h in self.hunks)


# Compared by identity: no generated __eq__, which apply would compile at every start.
@dataclass(eq=False)
class Risk:
    """Whether a plan needs confirmation, and why."""

    high: bool
    reasons: list[str] = field(default_factory=list)


# Compared by identity: no generated __eq__, which apply would compile at every start.
@dataclass(eq=False)
class PatchPlan:
    """A checked patch, nothing written yet: what each file becomes."""

    files: list[FilePlan]
    risk: Risk
    source_text: str = ""  # the patch as the model wrote it
    declined_hunks: int = 0  # hunks left out by `select`, reported in the CommitResult
    # What the engine decided on its own that the model or user should know: a hunk placed
    # at the occurrence nearest its stated line, hunk counts that did not match, ...
    warnings: list[str] = field(default_factory=list)


# Partial acceptance: path -> indices of accepted hunks. A path absent from the
# mapping is declined entirely. None means "everything".
Selection = dict[str, set[int]] | None


# Compared by identity: no generated __eq__, which apply would compile at every start.
@dataclass(eq=False)
class CommitResult:
    """What a commit wrote: the files by kind, the hunks, the backup and the note."""

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
