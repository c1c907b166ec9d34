"""The todo board: pending / in progress / completed, redrawn from each TodoChanged event.

The board grows with its items up to a share of the column (the trace keeps the
rest), scrolls beyond that, and says in its title how many items are out of
view below ("Todo · 3 more ↓"), so nothing is hidden silently."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

GROUPS = (
    ("in_progress", "In progress", "◐", "#e0af68"),
    ("pending", "Pending", "○", "#7aa2f7"),
    ("completed", "Completed", "●", "#9ece6a"),
)


def render_todos(items: list[dict[str, Any]]) -> Text:
    text = Text()
    if not items:
        text.append("No todos yet.", style="italic #7f849c")
        return text
    first = True
    for status, label, mark, colour in GROUPS:
        group = [item for item in items if item.get("status", "pending") == status]
        if not group:
            continue
        if not first:
            text.append("\n")
        first = False
        text.append(f"{label} ({len(group)})", style=f"bold {colour}")
        for item in group:
            title = str(item.get("title") or item.get("desc") or item.get("id", ""))
            style = "#7f849c strike" if status == "completed" else ""
            text.append(f"\n {mark} ", style=colour)
            text.append(title, style=style)
    return text


def item_lines(items: list[dict[str, Any]]) -> list[bool]:
    """For each line `render_todos` draws: whether it is an item (not a group's heading)."""
    return [line.startswith(" ") for line in render_todos(items).plain.split("\n")]


class TodoBoard(VerticalScroll):
    DEFAULT_CSS = """
    TodoBoard { height: auto; max-height: 45%; }
    TodoBoard > Static { padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "Todo"
        self.items: list[dict[str, Any]] = []
        self._body = Static(render_todos([]))

    def compose(self):
        yield self._body

    def set_items(self, items: list[dict[str, Any]]) -> None:
        self.items = [dict(item) for item in items]
        self._body.update(render_todos(self.items))
        self.call_after_refresh(self._count_hidden)

    def hidden_below(self) -> int:
        """Items whose line is below the visible part of the board."""
        lines = item_lines(self.items) if self.items else []
        first_hidden = int(self.scroll_y) + self.scrollable_content_region.height
        return sum(lines[first_hidden:])

    def _count_hidden(self) -> None:
        hidden = self.hidden_below()
        self.border_title = f"Todo · {hidden} more ↓" if hidden else "Todo"

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._count_hidden()

    def on_resize(self) -> None:
        self.call_after_refresh(self._count_hidden)

    def by_status(self, status: str) -> list[str]:
        return [str(i.get("title", "")) for i in self.items if i.get("status") == status]
