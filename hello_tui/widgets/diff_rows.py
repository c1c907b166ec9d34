"""The diff model behind the review screen: a FilePlan (or two texts) turned into display rows.

Pure computation, no Textual: it runs in a thread worker so a large file never
blocks the UI. The rows follow the plan's own hunks (so toggling a row's hunk
toggles exactly what the patch engine will apply); a plan without hunks, and
two texts (a backup), get the engine's `text_hunks`, the changes the writer
writes for them. Inside a hunk the engine's line diff (the same one) pairs old
and new lines side by side, and each changed line pair gets its changed
characters (diff_spans). Syntax tokens come from one Pygments pass over the
old and the proposed text, done after the rows so the first paint never waits
for the lexer.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

from rich.cells import cell_len
from rich.style import Style

from hello_tui.core.hunk_header import git_range
from hello_tui.engine.types import FilePlan, Hunk, line_ops, text_hunks
from hello_tui.widgets.diff_spans import Span, changed_spans

RowKind = Literal["header", "context", "change", "removed", "added", "fold", "message"]
# Which version a one-sided file (added or deleted) has; such a file is drawn as one pane.
OneSide = Literal["old", "new"] | None
LineTokens = list[tuple[str, Style]]

CONTEXT_LINES = 3
TAB_SIZE = 4
# Lines lexed together; see SyntaxCache.
LEX_BLOCK = 200

# Control characters would corrupt the terminal; tabs are expanded before this.
_CONTROL = {c: "\ufffd" for c in range(32)}
_CONTROL[127] = "\ufffd"
_CONTROL_BUT_LF = {c: r for c, r in _CONTROL.items() if c != 10}
# Where a Codex patch's lines end (a lone CR too); git's lines end at LF only.
_LINE_END = re.compile(r"\r\n|\r|\n")


class Side:
    """One side (old or new) of a displayed line.

    The changed characters of a changed line pair are found on first use
    (when the row is drawn), so building rows for a huge rewrite stays linear.
    """

    __slots__ = ("_spans", "is_old", "number", "pair", "text")

    def __init__(
        self, number: int, text: str, pair: Side | None = None, is_old: bool = True
    ) -> None:
        self.number = number  # 1-based line number in its file
        self.text = text  # display text: no line ending, tabs expanded, control chars replaced
        self.pair = pair  # the other side of a changed line pair
        self.is_old = is_old
        self._spans: tuple[Span, ...] | None = None if pair is not None else ()

    @property
    def spans(self) -> tuple[Span, ...]:
        """Changed character ranges inside a changed line."""
        if self._spans is None and self.pair is not None:
            old, new = (self, self.pair) if self.is_old else (self.pair, self)
            old._spans, new._spans = changed_spans(old.text, new.text)
        return self._spans or ()

    def __repr__(self) -> str:
        return f"Side({self.number}, {self.text!r})"


@dataclass(slots=True)
class Row:
    """One display row. `hunk` is the position of the hunk in FileDiff.hunks, or -1."""

    kind: RowKind
    hunk: int = -1
    old: Side | None = None
    new: Side | None = None
    label: str = ""  # text of header, fold and message rows


@dataclass
class FileDiff:
    """Everything the diff widget needs for one file, in both layouts.

    The unified rows are derived from the split rows on first use: a wide terminal
    never needs them, and building both doubled the work of opening a big rewrite.
    """

    path: str
    hunks: list[Hunk]
    split_rows: list[Row]
    split_hunk_rows: list[int]  # row index of each hunk's header, split layout
    number_width: int
    syntax: SyntaxCache | None = None  # set by add_syntax
    old_source: list[str] = field(default_factory=list)
    new_source: list[str] = field(default_factory=list)
    one_side: OneSide = None
    longest: int = 0  # terminal cells of the longest line of either version
    _unified: tuple[list[Row], list[int]] | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        # Short: a debugger or a log must not print every row of a big file.
        return f"FileDiff({self.path!r}, {len(self.hunks)} hunks, {len(self.split_rows)} rows)"

    @property
    def unified_rows(self) -> list[Row]:
        return self._unified_layout()[0]

    @property
    def unified_hunk_rows(self) -> list[int]:
        """Row index of each hunk's header, unified layout."""
        return self._unified_layout()[1]

    def _unified_layout(self) -> tuple[list[Row], list[int]]:
        if self._unified is None:
            self._unified = unified_from_split(self.split_rows)
        return self._unified


def unified_from_split(rows: list[Row]) -> tuple[list[Row], list[int]]:
    """The unified rows (each changed block's removed lines, then its added lines) and
    the index of each hunk header among them."""
    out: list[Row] = []
    headers: list[int] = []
    k, count = 0, len(rows)
    while k < count:
        row = rows[k]
        if row.kind != "change":
            if row.kind == "header":
                headers.append(len(out))
            out.append(row)
            k += 1
            continue
        # Consecutive change rows of one hunk are one block: the opcodes of a hunk
        # alternate between equal and changed, so two blocks never touch.
        end = k
        while end < count and rows[end].kind == "change" and rows[end].hunk == row.hunk:
            end += 1
        block = rows[k:end]
        out.extend(Row("removed", r.hunk, old=r.old) for r in block if r.old is not None)
        out.extend(Row("added", r.hunk, new=r.new) for r in block if r.new is not None)
        k = end
    return out, headers


def display_text(line: str) -> str:
    """A file line as it can be drawn in one terminal row."""
    line = line.rstrip("\r\n")
    if line.isprintable():  # the common case, checked in C: nothing to replace
        return line
    if "\t" in line:
        line = line.expandtabs(TAB_SIZE)
    return line.translate(_CONTROL)


def display_lines(lines: list[str]) -> list[str]:
    """display_text of each line, with one check for the usual lines that need nothing."""
    bare = [line.rstrip("\r\n") for line in lines]
    if "".join(bare).isprintable():
        return bare
    return [display_text(line) for line in lines]


def split_lines(text: str | None, git_lines: bool = False) -> list[str]:
    """Display lines of a whole text, split where the engine split it for the hunks:
    at LF only (`git_lines`: a CR before it ends the line, another is text) or at CR,
    LF and CRLF. One translate over the text, not one per line."""
    if not text:
        return []
    lines = text.split("\n") if git_lines or "\r" not in text else _LINE_END.split(text)
    if lines[-1] == "":
        lines.pop()
    if git_lines and "\r" in text:
        lines = [line.removesuffix("\r") for line in lines]
    if "\t" in text:
        lines = [line.expandtabs(TAB_SIZE) for line in lines]
    return "\n".join(lines).translate(_CONTROL_BUT_LF).split("\n")


def _hunk_title(position: int, count: int, hunk: Hunk, old_at: int, new_at: int) -> str:
    """`hunk 2/5  -18,0 +19,4`: old_at/new_at are the hunk's 0-based start in each version."""
    rng = f"-{git_range(old_at, len(hunk.old_lines))} +{git_range(new_at, len(hunk.new_lines))}"
    extra = hunk.header if hunk.header and not hunk.header.startswith("@@") else ""
    title = f"hunk {position + 1}/{count}  {rng}"
    return f"{title}  {extra}" if extra else title


class _RowBuilder:
    """Walks the old file and the hunks once, emitting the split layout's rows."""

    def __init__(self, old: list[str], context: int) -> None:
        self.old = old
        self.context = context
        self.split: list[Row] = []
        self.split_hunk_rows: list[int] = []
        self.new_source: list[str] = []

    def both(self, row: Row) -> None:
        self.split.append(row)

    def context_line(self, old_index: int, delta: int, hunk: int = -1) -> None:
        text = self.old[old_index]
        self.new_source.append(text)
        self.both(
            Row(
                "context",
                hunk,
                Side(old_index + 1, text),
                Side(old_index + 1 + delta, text),
            )
        )

    def unchanged_gap(
        self, start: int, end: int, delta: int, first: bool, last: bool, header: Row | None
    ) -> None:
        """Old lines [start, end) between hunks: context around them, a fold in the middle.

        The next hunk's header goes before its leading context, as in git.
        """
        keep_head = 0 if first else self.context
        keep_tail = 0 if last else self.context
        fold_start = fold_end = -1
        if end - start <= keep_head + keep_tail + 1:
            tail_start = max(start, end - keep_tail)
        else:
            fold_start, fold_end = start + keep_head, end - keep_tail
            tail_start = fold_end
        for i in range(start, fold_start if fold_start >= 0 else tail_start):
            self.context_line(i, delta)
        if fold_start >= 0:
            # The proposed text still needs the folded lines, for the lexer.
            self.new_source.extend(self.old[fold_start:fold_end])
            count = fold_end - fold_start
            self.both(Row("fold", label=f"⋯ {count} unchanged line{'s' if count != 1 else ''}"))
        if header is not None:
            self.split_hunk_rows.append(len(self.split))
            self.both(header)
        for i in range(tail_start, end):
            self.context_line(i, delta)

    def hunk(self, position: int, hunk: Hunk, old_at: int, delta: int) -> int:
        """Emit the body of one hunk starting at old index old_at; returns the new delta."""
        old_lines = display_lines(hunk.old_lines)
        new_lines = display_lines(hunk.new_lines)
        old_no = old_at + 1
        new_no = old_at + 1 + delta
        # The engine's line diff pairs the lines; the usual hunk (a run of - then +) has
        # no line in common and is one block without asking it.
        if set(old_lines).isdisjoint(new_lines):
            opcodes = [("replace", 0, len(old_lines), 0, len(new_lines))]
        else:
            opcodes = line_ops(old_lines, new_lines)
        for tag, i1, i2, j1, j2 in opcodes:
            if tag == "equal":
                for k in range(i2 - i1):
                    text = old_lines[i1 + k]
                    self.both(
                        Row(
                            "context",
                            position,
                            Side(old_no + i1 + k, text),
                            Side(new_no + j1 + k, text),
                        )
                    )
                continue
            self._change_block(position, old_lines, new_lines, old_no, new_no, i1, i2, j1, j2)
        self.new_source.extend(new_lines)
        return delta + len(new_lines) - len(old_lines)

    def _change_block(
        self,
        position: int,
        old_lines: list[str],
        new_lines: list[str],
        old_no: int,
        new_no: int,
        i1: int,
        i2: int,
        j1: int,
        j2: int,
    ) -> None:
        pairs = max(i2 - i1, j2 - j1)
        for k in range(pairs):
            old_side = new_side = None
            has_old, has_new = i1 + k < i2, j1 + k < j2
            if has_old and has_new:
                old_side = Side(old_no + i1 + k, old_lines[i1 + k])
                new_side = Side(new_no + j1 + k, new_lines[j1 + k], pair=old_side, is_old=False)
                old_side.pair = new_side
                old_side._spans = None
            elif has_old:
                old_side = Side(old_no + i1 + k, old_lines[i1 + k])
            else:
                new_side = Side(new_no + j1 + k, new_lines[j1 + k])
            self.split.append(Row("change", position, old_side, new_side))


def longest_line(lines: list[str]) -> int:
    """Terminal cells of the longest display line (wide characters take two)."""
    longest = max(map(len, lines), default=0)
    if all(map(str.isascii, lines)):  # checked in C; the loop below is for wide characters
        return longest
    for line in lines:
        if len(line) * 2 > longest and not line.isascii():
            longest = max(longest, cell_len(line))
    return longest


def _message_diff(path: str, message: str) -> FileDiff:
    row = Row("message", label=message)
    return FileDiff(path, [], [row], [], 1)


def build_file_diff(plan: FilePlan, context: int = CONTEXT_LINES) -> FileDiff:
    """The display rows of one file of a plan."""
    path = plan.path if not plan.move_to else f"{plan.path} → {plan.move_to}"
    hunks = list(plan.hunks)
    binary = (plan.old_text is None and plan.old_bytes is not None) or (
        plan.new_text is None and plan.new_bytes is not None
    )
    if binary:
        old_size = len(plan.old_bytes or b"")
        new_size = len(plan.new_bytes or b"")
        return _message_diff(
            path, f"binary file: {old_size} bytes → {new_size} bytes (no text diff)"
        )
    git_lines = plan.git_lines
    if not hunks and plan.old_text != plan.new_text and plan.op in ("add", "update", "move"):
        hunks, git_lines = text_hunks(plan.old_text or "", plan.new_text or ""), True
    if not hunks:
        if plan.op == "move":
            return _message_diff(path, f"renamed {plan.path} → {plan.move_to}; content unchanged")
        if plan.op == "delete":
            return _message_diff(path, f"{plan.path} is deleted (it is empty)")
        return _message_diff(path, "no changes")
    diff = build_diff_from_hunks(path, plan.old_text or "", hunks, context, git_lines)
    if plan.op == "add" or (not diff.old_source and diff.new_source):
        diff.one_side = "new"
    elif plan.op == "delete" or (diff.old_source and not diff.new_source):
        diff.one_side = "old"
    return diff


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while rows are built.

    A big diff allocates tens of thousands of small objects that live on, and each
    of them counts towards the next collection: with the collector running, building
    the rows of a 10,000-line rewrite took two to four times as long. The rows hold no
    cycles, so nothing is left for the collector to find when it runs again.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def build_diff_from_hunks(
    path: str, old_text: str, hunks: list[Hunk], context: int, git_lines: bool = False
) -> FileDiff:
    """Rows for `hunks` of `old_text`, whose lines they number as git does (`git_lines`)
    or as a Codex patch does (a lone CR ends a line too)."""
    with _collector_paused():
        return _build_diff_from_hunks(path, split_lines(old_text, git_lines), hunks, context)


def _build_diff_from_hunks(path: str, old: list[str], hunks: list[Hunk], context: int) -> FileDiff:
    builder = _RowBuilder(old, context)
    ordered = sorted(hunks, key=lambda h: h.old_start)
    delta = 0
    at = 0
    for position, hunk in enumerate(ordered):
        start = max(at, min(hunk.old_start, len(old)))
        title = _hunk_title(position, len(ordered), hunk, start, start + delta)
        header = Row("header", position, label=title)
        builder.unchanged_gap(at, start, delta, first=position == 0, last=False, header=header)
        delta = builder.hunk(position, hunk, start, delta)
        at = min(len(old), start + len(hunk.old_lines))
    builder.unchanged_gap(at, len(old), delta, first=False, last=True, header=None)
    largest = max(len(old), len(builder.new_source), 1)
    return FileDiff(
        longest=max(longest_line(old), longest_line(builder.new_source)),
        path=path,
        hunks=ordered,
        split_rows=builder.split,
        split_hunk_rows=builder.split_hunk_rows,
        number_width=len(str(largest)),
        old_source=old,
        new_source=builder.new_source,
    )


def build_text_diff(
    path: str, old_text: str, new_text: str, context: int = CONTEXT_LINES
) -> FileDiff:
    """The display rows of two versions of a text (the backup viewer): the writer's hunks."""
    hunks = text_hunks(old_text, new_text)
    if not hunks:
        return _message_diff(path, "identical: the backup matches the current file")
    return build_diff_from_hunks(path, old_text, hunks, context, git_lines=True)


_THEME_NAME = "monokai"
_style_cache: dict[tuple[str, ...], Style] = {}


def _token_style(token_type: tuple[str, ...]) -> Style:
    """The theme's foreground for a token; backgrounds come from the diff, not the theme."""
    style = _style_cache.get(token_type)
    if style is None:
        from rich.syntax import Syntax

        theme_style = Syntax.get_theme(_THEME_NAME).get_style_for_token(token_type)
        style = Style(color=theme_style.color, bold=theme_style.bold, italic=theme_style.italic)
        _style_cache[token_type] = style
    return style


def lexer_for(path: str):
    """The Pygments lexer for a file name, or None."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    name = path.split(" → ")[-1]
    try:
        return get_lexer_for_filename(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def tokenize_lines(lines: list[str], lexer) -> list[LineTokens]:
    """One Pygments pass over some lines, cut back into display lines."""
    result: list[LineTokens] = [[]]
    for token_type, value in lexer.get_tokens("\n".join(lines)):
        style = _token_style(token_type)
        parts = value.split("\n")
        for k, part in enumerate(parts):
            if k:
                result.append([])
            if part:
                result[-1].append((part, style))
    # A lexer may swallow a trailing empty line; keep the lines one to one.
    while len(result) < len(lines):
        result.append([])
    return result[: len(lines)]


class SyntaxCache:
    """Syntax tokens per display line, lexed lazily in blocks of LEX_BLOCK lines.

    Lexing a 10,000-line file takes Pygments over a second, so only the blocks
    that are drawn are lexed, once each. Each block is lexed from its first
    line: a string or comment that spans a block boundary may be coloured as
    code after the boundary, a price paid for opening huge files instantly.
    """

    def __init__(self, lexer, old_source: list[str], new_source: list[str]) -> None:
        self.lexer = lexer
        self.sources = {True: old_source, False: new_source}
        self.blocks: dict[tuple[bool, int], list[LineTokens]] = {}

    def line(self, old: bool, number: int) -> LineTokens | None:
        source = self.sources[old]
        if not 0 < number <= len(source):
            return None
        block = (number - 1) // LEX_BLOCK
        tokens = self.blocks.get((old, block))
        if tokens is None:
            start = block * LEX_BLOCK
            tokens = tokenize_lines(source[start : start + LEX_BLOCK], self.lexer)
            self.blocks[(old, block)] = tokens
        return tokens[(number - 1) % LEX_BLOCK]


def syntax_for(diff: FileDiff) -> SyntaxCache | None:
    """A syntax cache for the file's text when a lexer fits it (nothing is lexed yet)."""
    lexer = lexer_for(diff.path)
    if lexer is None:
        return None
    return SyntaxCache(lexer, diff.old_source, diff.new_source)


def add_syntax(diff: FileDiff) -> bool:
    """Attach a syntax cache when a lexer fits the file; False when none does."""
    diff.syntax = syntax_for(diff)
    return diff.syntax is not None
