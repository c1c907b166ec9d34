"""A filterable list modal: the session picker and the model picker are both one.

Type to filter (every word must occur, in any order, case-insensitive), ↑/↓
move, Enter chooses, Esc closes. The screen dismisses with the chosen item's
value, or None. Items can be added while it is open (the model picker fills in
the endpoint's list when it arrives).

Choosing switches the session or the model, so a picker is a DecisionModal:
keys typed while it opens (the rest of a line typed on after `/resume`) go to
the prompt, and Enter chooses only pressed on its own, not at the end of a
burst. Once it has armed, typing filters at once.

Items with a group are listed under the group's heading; a detail every item of
a group shares ("another provider's: needs its own endpoint") is said once, in
the heading, instead of on each row.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from hello_tui.screens.decision import DecisionModal, FieldInput
from hello_tui.widgets.footer import SteadyFooter

# The model picker's one group for every other provider's model (its detail names the
# provider): said once, not on each of them.
OTHER_PROVIDERS = "other providers: each needs its own endpoint and key"


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


class PickerScreen(DecisionModal[str | None]):
    takes_typing = True
    calls_back = False  # opened by the user's own command
    ready_text = "Ready: type to filter · Enter (on its own) chooses · escape closes"

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
    PickerScreen #arming { height: 1; }
    """

    def __init__(
        self, title: str, items: list[PickItem], *, placeholder: str = "type to filter"
    ) -> None:
        super().__init__()
        self.title_text = title
        self.items = list(items)
        self.placeholder = placeholder
        self.shown: list[PickItem] = []
        # The option list's rows: an item's position in `shown`, or None for a heading.
        self.rows: list[int | None] = []

    def compose(self) -> ComposeResult:
        box = Vertical(id="picker-box")
        box.border_title = self.title_text
        with box:
            yield FieldInput(placeholder=self.placeholder, id="picker-filter")
            yield OptionList(id="picker-list")
            yield Static("", id="picker-empty")
            yield self.arming_line()
        yield SteadyFooter()

    def on_mount(self) -> None:
        self._refill()

    def on_armed(self) -> None:
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
        if self.armed:
            self.action_choose()

    @on(OptionList.OptionSelected, "#picker-list")
    def _option_selected(self, event: OptionList.OptionSelected) -> None:
        if self.armed:
            self.dismiss(event.option.id)

    def _refill(self) -> None:
        found = self.query("#picker-list").results(OptionList)
        options = next(found, None)
        if options is None:
            return  # the app is closing while this screen mounts: its children never came
        highlighted = self._highlighted_value()
        self.shown = [i for i in self.items if matches(i, self.filter_text)]
        shared = _shared_details(self.shown)
        rows: list[Option] = []
        self.rows = []
        group: str | None = None
        for position, item in enumerate(self.shown):
            if item.group and item.group != group:
                heading = Text(item.group, style="bold")
                if item.group in shared:
                    heading.append(f" — {shared[item.group]}", style="dim")
                rows.append(Option(heading, disabled=True))
                self.rows.append(None)
            group = item.group
            detail = "" if item.group in shared else item.detail
            label = Text.assemble(
                ("● " if item.current else "  ", "bold green"),
                (item.label, "bold" if item.current else ""),
                (f"  {detail}" if detail else "", "dim"),
            )
            rows.append(Option(label, id=item.value))
            self.rows.append(position)
        options.clear_options()
        options.add_options(rows)
        values = [i.value for i in self.shown]
        if highlighted in values:
            self._highlight(values.index(highlighted))
        elif values:
            current = next((n for n, i in enumerate(self.shown) if i.current), 0)
            self._highlight(current if not self.filter_text else 0)
        empty = self.query_one("#picker-empty", Static)
        empty.update("" if values else "Nothing matches.")

    def _highlight(self, position: int) -> None:
        """Highlight the row of `shown[position]`."""
        self.query_one("#picker-list", OptionList).highlighted = self.rows.index(position)

    def _highlighted_position(self) -> int | None:
        index = self.query_one("#picker-list", OptionList).highlighted
        if index is None or not (0 <= index < len(self.rows)):
            return None
        return self.rows[index]

    def _highlighted_value(self) -> str | None:
        position = self._highlighted_position()
        return None if position is None else self.shown[position].value

    def action_move(self, delta: int) -> None:
        if not self.shown:
            return
        position = self._highlighted_position() or 0
        self._highlight(max(0, min(len(self.shown) - 1, position + delta)))

    def action_choose(self) -> None:
        value = self._highlighted_value()
        if value is not None:
            self.dismiss(value)

    def action_close(self) -> None:
        self.dismiss(None)


def _shared_details(items: list[PickItem]) -> dict[str, str]:
    """group -> the detail every item of the group has, when they all have the same one
    (and there is more than one item to say it for)."""
    details: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for item in items:
        if item.group:
            details.setdefault(item.group, set()).add(item.detail)
            counts[item.group] = counts.get(item.group, 0) + 1
    return {
        group: next(iter(found))
        for group, found in details.items()
        if len(found) == 1 and next(iter(found)) and counts[group] > 1
    }
