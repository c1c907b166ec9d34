"""What the parsers produce: file operations and the chunks of an update, before planning.

Both the Codex-grammar parser and the unified-diff parser emit these, so the
matcher and the planner have a single input model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ItemKind = Literal[" ", "-", "+"]


@dataclass
class Chunk:
    """One change inside an Update: context (" "), removed ("-") and added ("+") lines."""

    headers: list[str] = field(default_factory=list)  # `@@ <line>` anchors, outermost first
    items: list[tuple[str, str]] = field(default_factory=list)
    end_of_file: bool = False  # `*** End of File`: the chunk ends at the file's end
    no_eol: bool = False  # `\ No newline at end of file` after the new side's last line
    line_hint: int | None = None  # 0-based old start from a unified `@@ -l,s` header
    source_line: int = 0  # 1-based line in the patch text, for error messages

    @property
    def old_lines(self) -> list[str]:
        return [text for kind, text in self.items if kind != "+"]

    @property
    def new_lines(self) -> list[str]:
        return [text for kind, text in self.items if kind != "-"]


@dataclass
class FileOperation:
    kind: Literal["add", "delete", "update"]
    path: str
    move_to: str | None = None
    chunks: list[Chunk] = field(default_factory=list)
    content: str | None = None  # add: the new file; whole-file update: the replacement
    whole_file: bool = False
    source_line: int = 0
