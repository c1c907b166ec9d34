"""What the parsers produce: file operations and the chunks of an update, before planning.

Both the Codex-grammar parser and the unified-diff parser emit these, so the
matcher and the planner have a single input model. A unified diff says more
than a Codex patch: each line's own ending, file modes, renames and copies,
binary data and blob ids; those fields stay None for Codex patches.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command

if TYPE_CHECKING:
    from typing import Literal

    from hello_tui.patch.binary import BinaryPatch

    ItemKind = Literal[" ", "-", "+"]


# Compared by identity: no generated __eq__, which apply would compile at every start.
@dataclass(eq=False)
class Chunk:
    """One change inside an Update: context (" "), removed ("-") and added ("+") lines."""

    headers: list[str] = field(default_factory=list)  # `@@ <line>` anchors, outermost first
    items: list[tuple[str, str]] = field(default_factory=list)
    end_of_file: bool = False  # `*** End of File`: the chunk ends at the file's end
    no_eol: bool = False  # `\ No newline at end of file` after the new side's last line
    line_hint: int | None = None  # 0-based old start from a unified `@@ -l,s` header
    new_hint: int | None = None  # 0-based start in the new file, from `+l,s`
    source_line: int = 0  # 1-based line in the patch text, for error messages
    # Each item's line ending as the patch carries it ("\n", "\r\n", or "" before a
    # `\ No newline` marker). None: the patch cannot say (Codex), the file decides.
    eols: list[str] | None = None
    header_text: str = ""  # the `@@ ... @@` line as written, for messages
    # The header's counts did not match the hunk's lines: its line numbers are no
    # better than its counts, so they may not choose between several occurrences.
    counts_wrong: bool = False
    eol_stated: bool = False  # a `\ No newline` marker says how the file ends (either side)
    # The marker itself, or the `@@` line, ended in CRLF: the whole copy was converted,
    # so no CRLF in it says anything about the file's endings.
    eols_converted: bool = False
    # Trailing context items that were bare empty lines: perhaps blank context lines that
    # lost their space, perhaps blank lines after the diff that a miscount took in.
    bare_blank_tail: int = 0

    def without_bare_blank_tail(self) -> Chunk:
        cut = len(self.items) - self.bare_blank_tail
        return replace(
            self,
            items=self.items[:cut],
            eols=None if self.eols is None else self.eols[:cut],
            bare_blank_tail=0,
        )

    @property
    def old_lines(self) -> list[str]:
        return [text for kind, text in self.items if kind != "+"]

    @property
    def new_lines(self) -> list[str]:
        return [text for kind, text in self.items if kind != "-"]


# Compared by identity: no generated __eq__, which apply would compile at every start.
@dataclass(eq=False)
class FileOperation:
    """One file of a parsed patch, in either dialect: add, delete or update (and move)."""

    kind: Literal["add", "delete", "update"]
    path: str
    move_to: str | None = None
    chunks: list[Chunk] = field(default_factory=list)
    content: str | None = None  # add: the new file; whole-file update: the replacement
    whole_file: bool = False
    source_line: int = 0
    dialect: Literal["codex", "unified"] = "codex"
    copy: bool = False  # git `copy from/to`: move_to is created, path stays as it is
    old_mode: int | None = None  # git modes (0o100644, 0o100755, 0o120000...)
    new_mode: int | None = None
    old_oid: str | None = None  # blob ids (hex, maybe abbreviated) from git's `index` line
    new_oid: str | None = None
    binary: BinaryPatch | None = None  # a `GIT binary patch`
    binary_without_data: bool = False  # `Binary files a/x and b/x differ`: nothing to apply
    maybe_new: bool = False  # a traditional diff that creates the file if it does not exist
    decoloured: bool = False  # read from a coloured diff: its colour codes were removed
    crlf_copy: bool = False  # a new file whose `@@` line or `\ No newline` marker ends in CRLF
