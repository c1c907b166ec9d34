"""The todo board: pending / in progress / completed, redrawn from each TodoChanged event."""

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

    def by_status(self, status: str) -> list[str]:
        return [str(i.get("title", "")) for i in self.items if i.get("status") == status]
