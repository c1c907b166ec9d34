"""A note's Markdown in a scrollable viewer; Esc or q closes it.

Patches show as coloured diffs: a ```diff fence is highlighted with added
lines green, removed lines red and hunk headers blue. Notes written before
patches were fenced end with a bare "Patch:" section; the viewer fences it
(`fence_patch_sections`), so an old patch no longer renders as Markdown
(a removed "- item" line as a bullet, a "+++" line as a rule).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt
from pygments.token import Token
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.highlight import ANSIDarkHighlightTheme, ANSILightHighlightTheme, HighlightTheme
from textual.highlight import highlight as highlight_code
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from hello_tui.core.markdown_fence import fence, opens_fence
from hello_tui.widgets.footer import SteadyFooter

if TYPE_CHECKING:  # the engine's types load with the engine, after the first frame
    from hello_tui.engine.types import DiffSummary

# "Patch:", "Patch (as proposed):", "Patch (what was written):" on a line of their own.
_PATCH_HEADING = re.compile(r"^Patch(?: \([^)\n]*\))?:[ \t]*$")

_DIFF_STYLES = {
    Token.Generic.Inserted: "#9ece6a",
    Token.Generic.Deleted: "#f7768e",
    Token.Generic.Subheading: "#7aa2f7",
    Token.Generic.Heading: "bold",
}
_ANSI_DIFF_STYLES = {
    Token.Generic.Inserted: "ansi_green",
    Token.Generic.Deleted: "ansi_red",
    Token.Generic.Subheading: "ansi_cyan",
    Token.Generic.Heading: "bold",
}


class DiffTheme(HighlightTheme):
    STYLES = {**HighlightTheme.STYLES, **_DIFF_STYLES}


class ANSIDarkDiffTheme(ANSIDarkHighlightTheme):
    STYLES = {**ANSIDarkHighlightTheme.STYLES, **_ANSI_DIFF_STYLES}


class ANSILightDiffTheme(ANSILightHighlightTheme):
    STYLES = {**ANSILightHighlightTheme.STYLES, **_ANSI_DIFF_STYLES}


def fence_patch_sections(markdown: str) -> str:
    """Fence a "Patch:" section that is not fenced yet (it runs to the end of the note)."""
    lines = markdown.split("\n")
    for k, line in enumerate(lines):
        if not _PATCH_HEADING.match(line):
            continue
        rest = lines[k + 1 :]
        if rest and opens_fence(rest[0]):
            return markdown  # fenced already (every note written since)
        body = "\n".join(rest).strip("\n")
        if not body:
            return markdown
        return "\n".join(lines[: k + 1]) + "\n" + fence(body + "\n") + "\n"
    return markdown


class NoteFence(MarkdownFence):
    """A fenced block; a diff is coloured by line (the stock theme leaves +/- lines plain)."""

    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        if language != "diff":
            return super().highlight(code, language, ansi, dark)
        theme: type[HighlightTheme] = DiffTheme
        if ansi:
            theme = ANSIDarkDiffTheme if dark else ANSILightDiffTheme
        return highlight_code(code, language="diff", theme=theme)


def _parser() -> MarkdownIt:
    # No autolinks: a file name such as "stats.py" reads as a web address (.py is a
    # country's domain), and a click on it would open a browser.
    return MarkdownIt("gfm-like").disable("linkify")


class NoteMarkdown(Markdown):
    BLOCKS: dict[str, type[MarkdownBlock]] = {
        **Markdown.BLOCKS,
        "fence": NoteFence,
        "code_block": NoteFence,
    }

    def __init__(self, markdown: str, *, id: str | None = None) -> None:
        super().__init__(markdown, id=id, parser_factory=_parser)


def shown_time(stamp: str) -> str:
    """A stored ISO timestamp as a reader wants it: `2026-03-01 10:15` (no seconds'
    fractions, no `T`); what does not parse is shown as stored."""
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    return when.strftime("%Y-%m-%d %H:%M")


def note_meta(note_type: str, updated_at: str, tags: Sequence[str] = ()) -> str:
    """The viewer's line under the title: type · when · tags (what is empty is left out)."""
    parts = [note_type, shown_time(updated_at) if updated_at else "", ", ".join(tags)]
    return " · ".join(part for part in parts if part)


def patch_meta(summary: DiffSummary) -> str:
    """A patch note's second line: `2 files, +5 −3: M stats.py +3 −1; A new.py +2 −2`."""
    return summary.line() + ": " + "; ".join(f.label() for f in summary.files)


class NoteViewerScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="note.close", tooltip="Back to the app"),
        Binding("q", "dismiss", "Close", show=False),
    ]

    DEFAULT_CSS = """
    NoteViewerScreen { align: center middle; }
    NoteViewerScreen > #note-box {
        width: 90%; height: 85%; border: round $accent; background: $surface; padding: 0 1;
    }
    NoteViewerScreen #note-meta { color: $text-muted; height: auto; }
    """

    def __init__(self, title: str, markdown: str, meta: str = "") -> None:
        super().__init__()
        self.note_title = title
        self.markdown = fence_patch_sections(markdown)
        self.meta = meta

    def compose(self) -> ComposeResult:
        box = VerticalScroll(id="note-box")
        box.border_title = self.note_title
        with box:
            if self.meta:
                yield Static(self.meta, id="note-meta", markup=False)
            yield NoteMarkdown(self.markdown, id="note-body")
        yield SteadyFooter()
