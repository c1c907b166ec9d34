"""How the chat renders an answer's Markdown: headings as headings, code blocks numbered.

Rich's default heading styles read badly in a chat (a centred, underlined h1;
an underlined magenta h2 that many palettes show as red), so headings here are
bold and coloured by level, left-aligned, with a rule under h1 and h2.

Every fenced code block of an answer gets a visible number, so `/copy N` can
name it; `fenced_blocks` finds the same blocks in the same order (the same
markdown-it parse Rich uses, fences only: indented code is rare in answers and
would make the numbering surprising). A long answer is shown in several parts,
so a part's numbering starts where the previous part's ended (`first_block`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown, MarkdownContext
from rich.rule import Rule
from rich.style import Style
from rich.text import Text

# (style, rule character or "") per heading level.
HEADING_LOOK: dict[str, tuple[Style, str]] = {
    "h1": (Style(bold=True, color="#7aa2f7"), "━"),
    "h2": (Style(bold=True, color="#7dcfff"), "─"),
    "h3": (Style(bold=True, color="#bb9af7"), ""),
    "h4": (Style(bold=True, color="#c0caf5"), ""),
    "h5": (Style(bold=True, italic=True, color="#a9b1d6"), ""),
    "h6": (Style(italic=True, color="#a9b1d6"), ""),
}
RULE_STYLE = Style(color="#3b4261")
LABEL_NUMBER_STYLE = Style(bold=True, color="#1a1b26", bgcolor="#7aa2f7")
LABEL_LANGUAGE_STYLE = Style(color="#7f849c")


@dataclass(frozen=True)
class FencedBlock:
    language: str  # the info string's first word ("" when the fence names none)
    code: str  # the block's content, without its final line break


def _parser() -> MarkdownIt:
    # The parser Rich's Markdown builds: the blocks found are the blocks drawn.
    return MarkdownIt().enable("strikethrough").enable("table")


def _fences(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        if token.type == "fence":
            yield token
        elif token.children:
            yield from _fences(token.children)


def fenced_blocks(markdown: str) -> list[FencedBlock]:
    """The fenced code blocks of `markdown`, in document order (nested ones included)."""
    return [
        FencedBlock((token.info or "").partition(" ")[0], token.content.removesuffix("\n"))
        for token in _fences(_parser().parse(markdown))
    ]


class ChatHeading(Heading):
    """A heading in its level's colour, bold, left-aligned; h1 and h2 with a rule under them."""

    def on_enter(self, context: MarkdownContext) -> None:
        self.text = Text()
        context.enter_style(HEADING_LOOK.get(self.tag, HEADING_LOOK["h6"])[0])

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text.copy()
        text.justify = "left"
        yield text
        rule = HEADING_LOOK.get(self.tag, HEADING_LOOK["h6"])[1]
        if rule:
            yield Rule(characters=rule, style=RULE_STYLE)


class NumberedCodeBlock(CodeBlock):
    """A fenced code block under a label with its number (what `/copy N` takes) and language."""

    number = 0
    language = ""

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> CodeBlock:
        block = super().create(markdown, token)
        if token.type == "fence" and isinstance(markdown, ChatMarkdown):
            assert isinstance(block, NumberedCodeBlock)
            block.number = markdown.take_block_number()
            block.language = (token.info or "").partition(" ")[0]
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.number:
            yield Text.assemble(
                (f" {self.number} ", LABEL_NUMBER_STYLE),
                (f" {self.language or 'text'}", LABEL_LANGUAGE_STYLE),
            )
        yield from super().__rich_console__(console, options)


class ChatMarkdown(Markdown):
    """Rich Markdown with the chat's headings and numbered code blocks."""

    elements: ClassVar = {
        **Markdown.elements,
        "heading_open": ChatHeading,
        "fence": NumberedCodeBlock,
        "code_block": NumberedCodeBlock,
    }

    def __init__(
        self,
        markup: str,
        *,
        first_block: int = 1,
        numbered: bool = True,
        style: str | Style = "none",
        code_theme: str = "monokai",
    ) -> None:
        super().__init__(markup, code_theme=code_theme, style=style)
        # 0: the code blocks are not numbered (notices, patch results: /copy takes answers).
        self.first_block = first_block if numbered else 0
        self._next_block = first_block

    def take_block_number(self) -> int:
        """The next code block's number (0 when this text is not numbered)."""
        number = self._next_block
        if number:
            self._next_block += 1
        return number

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        self._next_block = self.first_block  # each rendering numbers from the start again
        yield from super().__rich_console__(console, options)
