"""The multi-line prompt: Enter sends, shift+enter / ctrl+j insert a newline, ↑/↓ walk the history.

On an empty prompt, ↑ first takes back a queued message (`take_queued`) to edit it.
PageUp / PageDown page through the prompt only when its text is taller than its
box; otherwise they are skipped, so the app's bindings scroll the chat while
the prompt keeps the focus.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.actions import SkipAction
from textual.message import Message
from textual.widgets import TextArea

from hello_tui.widgets.completion import CompletionList


class PromptInput(TextArea):
    """A TextArea that submits on Enter and recalls earlier prompts with ↑ on its first line."""

    DEFAULT_CSS = """
    PromptInput { height: auto; min-height: 3; max-height: 10; border: round $primary 60%; }
    PromptInput:focus { border: round $primary; }
    """

    class Submitted(Message):
        def __init__(self, prompt: PromptInput, text: str) -> None:
            super().__init__()
            self.prompt = prompt
            self.text = text

        @property
        def control(self) -> PromptInput:
            return self.prompt

    def __init__(self, *, id: str | None = None, placeholder: str = "") -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            compact=False,
            placeholder=placeholder,
        )
        self.prompt_history: list[str] = []
        self._history_pos: int | None = None  # None = editing a fresh prompt
        self._draft = ""
        self.completion: CompletionList | None = None  # set by the app
        # Set by the app: hands back the newest message queued during a turn, if any.
        self.take_queued: Callable[[], str | None] | None = None

    async def _on_key(self, event: events.Key) -> None:
        if self.completion is not None and self.completion.use_key(event.key):
            # The completion popup is open: its keys choose, move or close it.
            event.stop()
            event.prevent_default()
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.submit()
            return
        if event.key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            start, end = self.selection
            self._replace_via_keyboard("\n", start, end)
            return
        await super()._on_key(event)

    def take_type_ahead(self, key: str, character: str | None, pasted: str | None = None) -> None:
        """A key (or a paste) a decision modal refused, typed for the prompt: it lands here.

        Enter is not replayed: what was typed stays in the prompt for the user to send.
        """
        if pasted is not None:
            self.insert(pasted)
        elif key == "backspace":
            self.action_delete_left()
        elif character is not None and character.isprintable():
            self.insert(character)

    def submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        if not self.prompt_history or self.prompt_history[-1] != text:
            self.prompt_history.append(text)
        self._history_pos = None
        self._draft = ""
        self.load_text("")
        self.post_message(self.Submitted(self, text))

    def clear_keeping_history(self) -> None:
        """Empty the prompt (ctrl+c); what it held can be recalled with ↑."""
        text = self.text
        if text.strip() and (not self.prompt_history or self.prompt_history[-1] != text):
            self.prompt_history.append(text)
        self._history_pos = None
        self._draft = ""
        self.load_text("")

    def action_cut(self) -> None:
        """ctrl+x cuts the selection only. TextArea's cut of the whole line when nothing is
        selected would take a message just taken back from the queue (where ctrl+x drops
        one) without a word."""
        start, end = self.selection
        if start != end:
            super().action_cut()

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and not self.text and self.take_queued is not None:
            queued = self.take_queued()
            if queued is not None:
                self.load_text(queued)
                self.move_cursor(self.document.end)
                return
        if not select and self.cursor_location[0] == 0 and self.prompt_history:
            self.recall(-1)
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        last_row = self.document.line_count - 1
        if not select and self._history_pos is not None and self.cursor_location[0] == last_row:
            self.recall(+1)
            return
        super().action_cursor_down(select)

    def action_cursor_page_up(self) -> None:
        if not self.max_scroll_y:
            raise SkipAction()  # nothing to page through here: the chat scrolls instead
        super().action_cursor_page_up()

    def action_cursor_page_down(self) -> None:
        if not self.max_scroll_y:
            raise SkipAction()
        super().action_cursor_page_down()

    def recall(self, direction: int) -> None:
        """Step through history: -1 older, +1 newer (past the newest returns the draft)."""
        if self._history_pos is None:
            if direction > 0:
                return
            self._draft = self.text
            pos = len(self.prompt_history) - 1
        else:
            pos = self._history_pos + direction
        if pos < 0:
            return
        if pos >= len(self.prompt_history):
            self._history_pos = None
            self.load_text(self._draft)
        else:
            self._history_pos = pos
            self.load_text(self.prompt_history[pos])
        self.move_cursor(self.document.end)
