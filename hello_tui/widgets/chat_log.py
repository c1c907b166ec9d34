"""The chat: finished messages as one virtualised line view, the message being written as live Markdown.

A long session cannot keep one Markdown widget per message (hundreds of widgets
cost seconds and hundreds of megabytes), so a finished message is rendered once
to lines (Rich Markdown -> Strips, cached per width) and drawn by a line-API
widget that only paints what is on screen. Only the newest entries are
rendered at first; older ones are rendered when the user scrolls up to them.
Only the reply being streamed is a live `Markdown`, fed through
`Markdown.get_stream()` in batches.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual import events
from textual.containers import VerticalScroll
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from hello_tui.core.markdown_fence import opens_fence
from hello_tui.widgets.chat_markdown import ChatMarkdown, fenced_blocks

log = logging.getLogger(__name__)

Role = Literal["user", "assistant", "continued", "notice", "error", "result"]

# How many of the newest entries are rendered when history is (re)built; older
# entries are rendered in pages of this size when the user scrolls to the top.
WINDOW_PAGE = 40
# A streamed reply longer than this moves its finished paragraphs into history.
LIVE_COMMIT_CHARS = 3000
# A foldable entry (an auto-applied diff) whose body is longer than this starts folded.
FOLD_LINES = 12

_ROLE_HEADER: dict[str, tuple[str, str]] = {
    "user": ("▌ you", "bold #7aa2f7"),
    "assistant": ("▌ assistant", "bold #9ece6a"),
    "continued": ("", ""),  # later parts of a long reply: no second header
    "notice": ("", ""),
    "error": ("▌ error", "bold #f7768e"),
    "result": ("▌ patch", "bold #e0af68"),
}


# The roles an answer of the model is shown in (its first part, and the parts after).
ANSWER_ROLES = ("assistant", "continued")


@dataclass
class ChatEntry:
    role: Role
    text: str
    # The number of this entry's first code block: a "continued" part goes on counting
    # from the part before it (set by ChatHistory).
    first_block: int = 1
    # None: not foldable. True/False: its body (below the first line) is hidden/shown;
    # clicking the entry or ctrl+o flips it.
    folded: bool | None = None
    # width -> rendered lines; a finished entry only changes when it is folded or
    # unfolded, which clears this.
    _cache: dict[int, list[Strip]] = field(default_factory=dict, repr=False, compare=False)


def foldable_entry(role: Role, text: str) -> ChatEntry:
    """An entry whose body may be folded: a long one starts folded."""
    return ChatEntry(role, text, folded=_hidden_lines(text) > FOLD_LINES)


def _hidden_lines(text: str) -> int:
    """The lines folding hides: all below the first, but not a fence's own ``` lines."""
    return sum(1 for line in text.split("\n")[1:] if not opens_fence(line))


def _fold_hint(entry: ChatEntry) -> Text:
    if entry.folded:
        hidden = _hidden_lines(entry.text)
        return Text(
            f"▸ {hidden} more line{'s' if hidden != 1 else ''} folded · click or ctrl+o shows them",
            style="#7f849c",
        )
    return Text("▾ click or ctrl+o folds this", style="#7f849c")


def _entry_renderable(entry: ChatEntry) -> RenderableType:
    if entry.folded:
        head = entry.text.split("\n", 1)[0]
        return Group(ChatMarkdown(head, numbered=False, style="italic #9aa0b8"), _fold_hint(entry))
    if entry.folded is False:
        body = ChatMarkdown(entry.text, numbered=False, style="italic #9aa0b8")
        return Group(body, _fold_hint(entry))
    if entry.role == "notice":
        return ChatMarkdown(entry.text, numbered=False, style="italic #9aa0b8")
    if entry.role == "error":
        return Text(entry.text, style="#f7768e")
    if entry.role == "user":
        return Text(entry.text)
    numbered = entry.role in ANSWER_ROLES
    return ChatMarkdown(entry.text, first_block=entry.first_block, numbered=numbered)


def render_entry(entry: ChatEntry, width: int, console: Console) -> list[Strip]:
    """Render one entry to lines at this width (cached on the entry)."""
    width = max(width, 10)
    cached = entry._cache.get(width)
    if cached is not None:
        return cached
    label, label_style = _ROLE_HEADER[entry.role]
    strips: list[Strip] = []
    options = console.options.update(width=width, highlight=False)
    if label:
        for line in console.render_lines(Text(label, style=label_style), options, pad=False):
            strips.append(Strip(line).simplify())
    body = Padding(_entry_renderable(entry), (0, 0, 0, 2))
    for line in console.render_lines(body, options, pad=False):
        strips.append(Strip(line).simplify())
    strips.append(Strip.blank(0))
    entry._cache = {width: strips}
    return strips


def _number_blocks(entry: ChatEntry, before: list[ChatEntry]) -> None:
    """A later part of an answer numbers its code blocks on from the part before it."""
    if entry.role != "continued":
        return
    previous = next((e for e in reversed(before) if e.role in ANSWER_ROLES), None)
    if previous is not None:
        entry.first_block = previous.first_block + len(fenced_blocks(previous.text))
        entry._cache.clear()


class ChatHistory(Widget):
    """Finished chat entries drawn with the line API: only visible lines are painted."""

    DEFAULT_CSS = """
    ChatHistory { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: list[ChatEntry] = []
        self.window_start = 0  # entries before this index are not rendered yet
        self._lines: list[Strip] = []
        self._lines_width = -1
        # (first line, entry) for each rendered entry, in order: what a click lands on.
        self._starts: list[tuple[int, ChatEntry]] = []
        self._rich_console: Console | None = None

    @property
    def rich_console(self) -> Console:
        if self._rich_console is None:
            self._rich_console = Console(
                width=80, color_system="truecolor", force_terminal=True, legacy_windows=False
            )
        return self._rich_console

    def add(self, role: Role, text: str, foldable: bool = False) -> ChatEntry:
        entry = foldable_entry(role, text) if foldable else ChatEntry(role, text)
        _number_blocks(entry, self.entries)
        self.entries.append(entry)
        if self._lines_width > 0:
            self._starts.append((len(self._lines), entry))
            self._lines.extend(render_entry(entry, self._lines_width, self.rich_console))
        self.refresh(layout=True)
        return entry

    def toggle_fold(self, entry: ChatEntry) -> None:
        if entry.folded is None:
            return
        entry.folded = not entry.folded
        entry._cache.clear()
        self._lines_width = -1
        self.refresh(layout=True)

    def newest_foldable(self) -> ChatEntry | None:
        return next((e for e in reversed(self.entries) if e.folded is not None), None)

    def entry_at(self, y: int) -> ChatEntry | None:
        """The entry drawn on line `y` of this widget (None on the marker or past the end)."""
        self._build(self.size.width or 80)
        found = None
        for start, entry in self._starts:
            if start > y:
                break
            found = entry
        return found if 0 <= y < len(self._lines) else None

    def on_click(self, event: events.Click) -> None:
        entry = self.entry_at(event.y)
        if entry is not None and entry.folded is not None:
            self.toggle_fold(entry)
            event.stop()

    def load(self, entries: list[ChatEntry]) -> None:
        """Replace everything (resume, clear); only the newest page is rendered."""
        self.entries = []
        for entry in entries:
            _number_blocks(entry, self.entries)
            self.entries.append(entry)
        self.window_start = max(0, len(self.entries) - WINDOW_PAGE)
        self._lines_width = -1
        self._lines = []
        self.refresh(layout=True)

    def clear(self) -> None:
        self.load([])

    def reveal_earlier(self) -> int:
        """Render one more page of older entries; returns how many lines were added on top."""
        if self.window_start == 0:
            return 0
        before = len(self._lines)
        self.window_start = max(0, self.window_start - WINDOW_PAGE)
        self._lines_width = -1
        self._build(self.size.width or 80)
        self.refresh(layout=True)
        return len(self._lines) - before

    def _marker(self, width: int) -> list[Strip]:
        if not self.window_start:
            return []
        text = Text(
            f"  ▲ {self.window_start} earlier messages (scroll up to show them)",
            style="italic #7f849c",
        )
        options = self.rich_console.options.update(width=max(width, 20))
        lines = self.rich_console.render_lines(text, options, pad=False)
        return [*(Strip(line) for line in lines), Strip.blank(0)]

    def _build(self, width: int) -> None:
        if width == self._lines_width:
            return
        lines = self._marker(width)
        self._starts = []
        for entry in self.entries[self.window_start :]:
            self._starts.append((len(lines), entry))
            lines.extend(render_entry(entry, width, self.rich_console))
        self._lines = lines
        self._lines_width = width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        self._build(width)
        return len(self._lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        self._build(width)
        if y >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        style = self.rich_style
        # Rendered segments carry no background: the widget's own goes underneath.
        return self._lines[y].crop_extend(0, width, style).apply_style(style)

    def last_answer(self) -> ChatEntry | None:
        """The model's newest answer, its parts joined (None if it has not answered)."""
        parts: list[ChatEntry] = []
        for entry in reversed(self.entries):
            if entry.role == "continued":
                parts.append(entry)
            elif entry.role == "assistant":
                parts.append(entry)
                text = "".join(part.text for part in reversed(parts))
                return ChatEntry("assistant", text, first_block=1)
        return None

    def plain_lines(self) -> list[str]:
        """The rendered text (for tests and the transcript copy)."""
        self._build(self.size.width or 80)
        return [strip.text.rstrip() for strip in self._lines]


def settled_split(text: str) -> int:
    """Offset just after the last blank line outside a code fence (0 if there is none):
    everything before it is finished Markdown that later text cannot change."""
    in_fence = False
    offset = 0
    split = 0
    lines = text.split("\n")
    for line in lines[:-1]:  # the last line may still be growing
        offset += len(line) + 1
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        elif not line.strip() and not in_fence:
            split = offset
    return split


async def stop_stream(stream: MarkdownStream) -> None:
    """`MarkdownStream.stop()`, except that a stream whose task never got to run raises
    CancelledError from it; only a cancellation of the caller itself may propagate."""
    try:
        await stream.stop()
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise


class LiveMessage(Markdown):
    """The reply being written; fed through a MarkdownStream in batches."""

    # Headings as the finished message shows them (chat_markdown.HEADING_LOOK), so a
    # reply does not change its look when it is done.
    DEFAULT_CSS = """
    LiveMessage { height: auto; margin: 0 0 0 2; padding: 0; background: transparent; }
    LiveMessage MarkdownHeader {
        margin: 1 0 1 0; content-align: left middle; background: transparent; text-style: bold;
    }
    LiveMessage > MarkdownHeader:first-child { margin-top: 0; }
    LiveMessage MarkdownH1 { color: #7aa2f7; border-bottom: heavy #3b4261; }
    LiveMessage MarkdownH2 { color: #7dcfff; border-bottom: solid #3b4261; }
    LiveMessage MarkdownH3 { color: #bb9af7; }
    LiveMessage MarkdownH4 { color: #c0caf5; }
    LiveMessage MarkdownH5 { color: #a9b1d6; text-style: bold italic; }
    LiveMessage MarkdownH6 { color: #a9b1d6; text-style: italic; }
    """


class ChatView(VerticalScroll):
    """History + the live reply in one scroll, anchored to the bottom while new text arrives.

    Every change (new entry, reply text, end of reply, clear, load) is queued and applied
    in order by one writer task, so no message loop — the app's dispatches key presses —
    ever waits for Markdown to re-render. (A message loop must not wait on it either:
    Markdown's mounts and removals need those loops to make progress.)
    """

    DEFAULT_CSS = """
    ChatView { height: 1fr; padding: 0 1; }
    ChatView > #live-header { height: 1; color: #9ece6a; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.history = ChatHistory(id="chat-history")
        self.live = LiveMessage(id="chat-live")
        self._stream: MarkdownStream | None = None
        self._live_text: list[str] = []  # the reply being written, as queued
        # Queued changes: ("write", text) | ("finish",) | ("add", role, text) |
        # ("load", entries) | ("call", callback).
        self._ops: deque[tuple[Any, ...]] = deque()
        self._writer: asyncio.Task[None] | None = None
        self._applying = False
        # State of the widget side (the op handler):
        self._shown: list[str] = []  # reply text handed to the widget or committed
        self._shown_chars = 0
        self._live_start = 0  # where the part still shown as live Markdown begins
        self._parts_committed = 0
        self.can_focus = True

    def focus_on_click(self) -> bool:
        # A click in the chat (to unfold a diff, to select text) leaves the focus in
        # the prompt, so what the user types next still goes there; Tab still
        # reaches the chat for keyboard scrolling.
        return False

    def compose(self):
        yield self.history
        header = Static("▌ assistant", id="live-header")
        header.display = False
        yield header
        self.live.display = False
        yield self.live

    def on_mount(self) -> None:
        self.anchor()

    # ---- the queue side: called by the app, never waits ----------------------
    @property
    def streaming(self) -> bool:
        return bool(self._live_text)

    @property
    def live_text(self) -> str:
        return "".join(self._live_text)

    @property
    def idle(self) -> bool:
        """True when every queued change is on screen."""
        return not self._ops and not self._applying

    def _post(self, *args: Any) -> None:
        self._ops.append(args)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._run_ops())

    def on_unmount(self) -> None:
        if self._writer is not None:
            self._writer.cancel()

    def add(self, role: Role, text: str, foldable: bool = False) -> None:
        self._post("add", role, text, foldable)

    def toggle_newest_fold(self) -> bool:
        """Fold or unfold the newest foldable entry; False when there is none."""
        entry = self.history.newest_foldable()
        if entry is None:
            return False
        self.history.toggle_fold(entry)
        return True

    def load(self, entries: list[ChatEntry]) -> None:
        self._post("load", entries)

    def clear(self) -> None:
        self._post("load", [])

    def call_when_shown(self, callback: Any) -> None:
        """Run `callback` once everything queued before it is on screen."""
        self._post("call", callback)

    def stream_write(self, fragment: str) -> None:
        if fragment:
            self._live_text.append(fragment)
            self._post("write", fragment)

    def stream_finish(self) -> str:
        """End the reply being written; returns its whole text (empty if nothing streamed)."""
        text = self.live_text
        self._live_text = []
        if text:
            self._post("finish")
        return text

    def stream_discard(self) -> None:
        """Drop the reply being written (it was cut off and is asked again)."""
        self._live_text = []
        self._post("discard")

    # ---- the widget side: applied in order by this widget's message loop -----
    async def _run_ops(self) -> None:
        while self._ops:
            kind, *rest = self._ops.popleft()
            self._applying = True
            try:
                if kind == "write":
                    # Join consecutive writes: one re-render for all the text that is waiting.
                    while self._ops and self._ops[0][0] == "write":
                        rest[0] += self._ops.popleft()[1]
                    await self._write(rest[0])
                elif kind == "finish":
                    await self._finish()
                elif kind == "discard":
                    await self._finish(keep=False)
                elif kind == "add":
                    self.history.add(rest[0], rest[1], rest[2])
                    self.anchor()
                elif kind == "load":
                    self.history.load(rest[0])
                    self.anchor()
                elif kind == "call":
                    rest[0]()
            except NoMatches:
                # The live header and reply are composed once and never removed: when
                # they are gone the app is tearing the chat down, and there is no one
                # left to show the rest to.
                self._ops.clear()
                return
            except Exception as exc:  # one bad op must not stall the chat
                log.exception("the chat could not apply %s", kind)
                self.notify(f"The chat could not show a message: {exc}", severity="error")
            finally:
                self._applying = False

    async def _write(self, chunk: str) -> None:
        self._shown.append(chunk)
        self._shown_chars += len(chunk)
        if self._stream is None:
            self.query_one("#live-header").display = not self._parts_committed
            self.live.display = True
            self._stream = Markdown.get_stream(self.live)
            self.anchor()
        if (
            self._shown_chars - self._live_start > LIVE_COMMIT_CHARS
            and await self._commit_settled()
        ):
            return
        await self._stream.write(chunk)

    async def _commit_settled(self) -> bool:
        """Move the finished paragraphs of a long reply into history, so the live widget stays
        small (its re-layout cost grows with every block it holds)."""
        live = "".join(self._shown)[self._live_start :]
        split = settled_split(live)
        if split <= 0:
            return False
        self._add_part(live[:split])
        self._live_start += split
        assert self._stream is not None
        await stop_stream(self._stream)
        self.query_one("#live-header").display = False
        await self.live.update(live[split:])
        self._stream = Markdown.get_stream(self.live)
        return True

    def _add_part(self, text: str) -> None:
        if text.strip():
            self.history.add("assistant" if not self._parts_committed else "continued", text)
            self._parts_committed += 1

    async def _finish(self, keep: bool = True) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            await stop_stream(stream)
        if keep:
            self._add_part("".join(self._shown)[self._live_start :])
        elif self._parts_committed:
            # Paragraphs of the void reply already moved into history go too.
            self.history.load(self.history.entries[: -self._parts_committed])
        self._shown = []
        self._shown_chars = self._live_start = self._parts_committed = 0
        self.query_one("#live-header").display = False
        self.live.display = False
        await self.live.update("")
        self.anchor()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 and self.history.window_start > 0:
            added = self.history.reveal_earlier()
            self.scroll_to(y=added, animate=False, immediate=True)
