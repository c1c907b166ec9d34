"""A filterable list modal: the session picker and the model picker are both one.

Type to filter (every word must occur, in any order, case-insensitive), ↑/↓
move, Enter chooses, Esc closes. The screen dismisses with the chosen item's
value, or None. Items can be added while it is open (the model picker fills in
the endpoint's list when it arrives).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class PickItem:
    value: str  # what the screen dismisses with
    label: str  # the main words (filtered on)
    detail: str = ""  # dimmed after the label (filtered on too)
    current: bool = False  # marked with ●
    group: str = ""  # shown as a section heading when it changes


def matches(item: PickItem, query: str) -> bool:
    haystack = f"{item.label} {item.detail} {item.value} {item.group}".lower()
    return all(word in haystack for word in query.lower().split())


class PickerScreen(ModalScreen[str | None]):
    BINDINGS = [
        Binding("escape", "close", "Close", id="picker.close", tooltip="Close without choosing"),
        Binding("enter", "choose", "Choose", id="picker.choose", tooltip="Use the highlighted one"),
        Binding("down", "move(1)", "Down", show=False, id="picker.down"),
        Binding("up", "move(-1)", "Up", show=False, id="picker.up"),
        Binding("pagedown", "move(10)", "Page down", show=False, id="picker.page_down"),
        Binding("pageup", "move(-10)", "Page up", show=False, id="picker.page_up"),
    ]

    DEFAULT_CSS = """
    PickerScreen { align: center middle; }
    PickerScreen > #picker-box {
        width: 100; max-width: 96%; height: 80%; border: round $accent; background: $surface;
        padding: 0 1;
    }
    PickerScreen #picker-filter { margin: 0 0 1 0; }
    PickerScreen #picker-list { height: 1fr; border: none; }
    PickerScreen #picker-empty { color: $text-muted; }
    """

    def __init__(
        self, title: str, items: list[PickItem], *, placeholder: str = "type to filter"
    ) -> None:
        super().__init__()
        self.title_text = title
        self.items = list(items)
        self.placeholder = placeholder
        self.shown: list[PickItem] = []

    def compose(self) -> ComposeResult:
        box = Vertical(id="picker-box")
        box.border_title = self.title_text
        with box:
            yield Input(placeholder=self.placeholder, id="picker-filter")
            yield OptionList(id="picker-list")
            yield Static("", id="picker-empty")
        yield Footer()

    def on_mount(self) -> None:
        self._refill()
        for field in self.query("#picker-filter").results(Input):
            field.focus()

    def add_items(self, items: list[PickItem]) -> None:
        """More items (those whose value is listed already are skipped)."""
        known = {i.value for i in self.items}
        self.items += [i for i in items if i.value not in known]
        if self.is_mounted:
            self._refill()

    @property
    def filter_text(self) -> str:
        return self.query_one("#picker-filter", Input).value

    @on(Input.Changed, "#picker-filter")
    def _filter_changed(self) -> None:
        self._refill()

    @on(Input.Submitted, "#picker-filter")
    def _filter_submitted(self) -> None:
        self.action_choose()

    @on(OptionList.OptionSelected, "#picker-list")
    def _option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def _refill(self) -> None:
        found = self.query("#picker-list").results(OptionList)
        options = next(found, None)
        if options is None:
            return  # the app is closing while this screen mounts: its children never came
        highlighted = self._highlighted_value()
        self.shown = [i for i in self.items if matches(i, self.filter_text)]
        rows: list[Option] = []
        for item in self.shown:
            label = Text.assemble(
                ("● " if item.current else "  ", "bold green"),
                (item.label, "bold" if item.current else ""),
                (f"  {item.detail}" if item.detail else "", "dim"),
                (f"  [{item.group}]" if item.group else "", "dim italic"),
            )
            rows.append(Option(label, id=item.value))
        options.clear_options()
        options.add_options(rows)
        values = [i.value for i in self.shown]
        if highlighted in values:
            options.highlighted = values.index(highlighted)
        elif values:
            current = next((n for n, i in enumerate(self.shown) if i.current), 0)
            options.highlighted = current if not self.filter_text else 0
        empty = self.query_one("#picker-empty", Static)
        empty.update("" if values else "Nothing matches.")

    def _highlighted_value(self) -> str | None:
        options = self.query_one("#picker-list", OptionList)
        index = options.highlighted
        if index is None or not (0 <= index < len(self.shown)):
            return None
        return self.shown[index].value

    def action_move(self, delta: int) -> None:
        options = self.query_one("#picker-list", OptionList)
        if not self.shown:
            return
        index = options.highlighted if options.highlighted is not None else 0
        options.highlighted = max(0, min(len(self.shown) - 1, index + delta))

    def action_choose(self) -> None:
        value = self._highlighted_value()
        if value is not None:
            self.dismiss(value)

    def action_close(self) -> None:
        self.dismiss(None)
