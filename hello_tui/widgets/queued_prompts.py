"""QueuedPrompts: messages sent while a turn runs, shown as pending until the turn ends.

Each waits its turn: when the running turn is over the first is sent. The
newest can be taken back into the prompt to edit (↑ on an empty prompt) or
dropped (ctrl+x, while one is queued); an interrupted turn hands them all back to
the prompt.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

PREVIEW_CHARS = 200


class QueuedPrompts(Static):
    DEFAULT_CSS = """
    QueuedPrompts {
        height: auto; max-height: 6; padding: 0 1; color: $text-muted;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id, markup=False)
        self.items: list[str] = []
        self.display = False

    def push(self, text: str) -> None:
        self.items.append(text)
        self._show()

    def take_first(self) -> str | None:
        text = self.items.pop(0) if self.items else None
        self._show()
        return text

    def take_last(self) -> str | None:
        text = self.items.pop() if self.items else None
        self._show()
        return text

    def take_all(self) -> list[str]:
        items, self.items = self.items, []
        self._show()
        return items

    def _show(self) -> None:
        self.display = bool(self.items)
        out = Text(no_wrap=True, overflow="ellipsis")
        for number, item in enumerate(self.items, 1):
            if number > 1:
                out.append("\n")
            first_line = " ".join(item.split())[:PREVIEW_CHARS]
            out.append(f"◌ queued {number}: ", "bold")
            out.append(first_line)
        if self.items:
            out.append("\n")
            # What matters first: a narrow prompt column cuts the end.
            out.append("↑ takes the newest back, ctrl+x drops it · sent after this turn", "dim")
        self.update(out)
