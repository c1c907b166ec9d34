"""The live ReAct trace: one row per step — thought, tool and arguments, observation, duration, status.

A running step shows a spinner and its elapsed time, and a terminal command's
output streams into its row as it comes. Enter (or a click) on a row expands
the observation to the full output. A resumed session replays its saved tool
steps (`core.display.ToolStep`).

Consecutive `todo` calls share one row (its count grows, it shows the latest
call), so a model that ticks off items one by one does not push the real work
out of view; the row says what changed in a line and leaves the raw arguments
and the board to the todo board beside it. Each turn after the first starts
under a divider naming it, live and when a saved session is replayed (step
numbers start again in every turn). With no steps yet the panel says what will
appear there. The panel follows its end (new rows and rows that grow), stops
following when the user scrolls up, and follows again once they are back at
the bottom.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from hello_tui.core.display import ToolStep, counted

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PREVIEW_LINES = 3
LIVE_TAIL_LINES = 8
MAX_ROWS = 200  # older rows are pruned: the trace is a live view, the log keeps everything
COLLAPSING_TOOLS = frozenset({"todo"})  # consecutive calls of these share one row
# Tools whose effect the todo board shows: their row gives the result's first line only.
BOARD_TOOLS = frozenset({"todo"})
EMPTY_TEXT = (
    "No steps yet. As the agent works, each step shows here: the tool it ran and "
    "with what, how long it took and what came back (enter expands a step)."
)

_STATUS_MARK = {
    "success": ("✔", "#9ece6a"),
    "partial": ("◐", "#e0af68"),
    "error": ("✘", "#f7768e"),
    "cancelled": ("■", "#7f849c"),
    "answered": ("✔", "#9ece6a"),
}


def format_arguments(arguments: dict[str, Any], limit: int = 120) -> str:
    parts = []
    for key, value in arguments.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        shown = shown.replace("\n", "⏎")
        if len(shown) > 60:
            shown = shown[:57] + "…"
        parts.append(f"{key}={shown}")
    text = " ".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fit(line: str, width: int) -> str:
    """Cut `line` to `width` cells with an ellipsis (no cut when the width is unknown)."""
    if width <= 1 or cell_len(line) <= width:
        return line
    return set_cell_size(line, width - 1) + "…"


@dataclass
class StepRecord:
    step: int
    call_id: str = ""
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    thought: str = ""
    status: str = "running"  # running | success | partial | error | cancelled | answered
    output: str = ""
    live_output: str = ""
    started: float = field(default_factory=time.monotonic)
    duration: float | None = None
    count: int = 1  # calls shown by this row (consecutive todo updates collapse)
    first_step: int | None = None  # the first of those calls' steps
    turn: int = 0  # the session's turn the step belongs to

    def absorb(self, step: int, call_id: str, arguments: dict[str, Any], started: float) -> None:
        """Take over the next consecutive call of the same tool: latest state, count + 1."""
        if self.first_step is None:
            self.first_step = self.step
        self.count += 1
        self.step, self.call_id, self.arguments = step, call_id, arguments
        self.status, self.output, self.live_output = "running", "", ""
        self.started, self.duration = started, None

    @property
    def steps_label(self) -> str:
        if self.first_step is None or self.first_step == self.step:
            return str(self.step)
        return f"{self.first_step}–{self.step}"


class TraceRow(Widget, can_focus=True):
    """One step; its render is rebuilt from the record, so updates are just a refresh."""

    BINDINGS = [
        Binding(
            "enter", "toggle_output", "Expand", id="trace.expand", tooltip="Show the full output"
        ),
    ]

    DEFAULT_CSS = """
    TraceRow { height: auto; padding: 0 1; margin: 0 0 1 0; }
    TraceRow:focus { background: $boost; }
    """

    def __init__(self, record: StepRecord, clock: Callable[[], float]) -> None:
        super().__init__()
        self.record = record
        self.expanded = False
        self._clock = clock

    def action_toggle_output(self) -> None:
        self.expanded = not self.expanded
        self.refresh(layout=True)

    def on_click(self) -> None:
        self.action_toggle_output()

    def render(self) -> Text:
        r = self.record
        text = Text()
        if r.status == "running":
            frame = SPINNER[int(self._clock() * 10) % len(SPINNER)]
            text.append(f"{frame} ", style="bold #7aa2f7")
        else:
            mark, colour = _STATUS_MARK.get(r.status, ("•", "#c0caf5"))
            text.append(f"{mark} ", style=f"bold {colour}")
        text.append(f"{r.steps_label} ", style="#7f849c")
        if r.tool:
            text.append(r.tool, style="bold")
            if r.count > 1:
                text.append(f" ×{r.count}", style="bold #7aa2f7")
        else:
            text.append("thinking" if r.status == "running" else "answer", style="italic")
        elapsed = r.duration if r.duration is not None else self._clock() - r.started
        text.append(f"  {elapsed:.1f}s", style="#7f849c")
        width = self.content_size.width
        board = r.tool in BOARD_TOOLS and not self.expanded
        if r.arguments and not board:
            text.append("\n  ")
            args = format_arguments(r.arguments)
            text.append(args if self.expanded else fit(args, width - 2), style="#bb9af7")
        if r.thought.strip():
            thought = " ".join(r.thought.split())
            if not self.expanded and len(thought) > 160:
                thought = thought[:159] + "…"
            text.append("\n  ")
            text.append(thought, style="italic #a9b1d6")
        body = r.output if r.duration is not None else r.live_output
        if body.strip():
            lines = body.rstrip("\n").splitlines()
            if self.expanded:
                shown = lines
            elif board:
                shown = lines[:1]  # what changed; the board beside the trace shows the rest
            elif r.duration is None:
                shown = lines[-LIVE_TAIL_LINES:]
            else:
                shown = lines[:PREVIEW_LINES]
            for line in shown:
                text.append("\n  │ ", style="#565f89")
                # Tabs are expanded first: fit() counts cells, and a tab is one
                # character but several cells, which made collapsed rows wrap.
                line = line.expandtabs(4)
                # Collapsed rows keep one screen line per output line.
                text.append(line if self.expanded else fit(line, width - 4))
            hidden = len(lines) - len(shown)
            if hidden > 0 and not board:
                more = fit(f"└ {counted(hidden, 'more line')} (enter to expand)", width - 2)
                text.append(f"\n  {more}", style="#565f89")
        return text


class TracePanel(VerticalScroll):
    """The steps of the current session, newest at the bottom."""

    DEFAULT_CSS = """
    TracePanel { height: 1fr; }
    TracePanel > #trace-empty { padding: 0 1; color: $text-muted; text-style: italic; }
    TracePanel > .trace-divider { padding: 0 1; margin: 0 0 1 0; color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None, clock: Callable[[], float] = time.monotonic):
        super().__init__(id=id)
        self.border_title = "Trace"
        self._clock = clock
        self.rows: list[TraceRow] = []
        self._by_call: dict[str, TraceRow] = {}
        self._open_step: dict[int, TraceRow] = {}  # step -> row still waiting for its tool call
        self._following = True
        self._turn = 0
        self._dividers: dict[int, Static] = {}  # turn -> the divider above its first step
        self._empty = Static(EMPTY_TEXT, id="trace-empty", markup=False)

    def compose(self):
        yield self._empty

    def on_mount(self) -> None:
        self.set_interval(0.1, self._tick)

    def turn_started(self, turn: int) -> None:
        """The steps that follow belong to `turn`: under a divider, unless they are the first."""
        self._begin_turn(turn)

    def _begin_turn(self, turn: int) -> None:
        if turn == self._turn and (self.rows or self._dividers):
            return
        self._turn = turn
        if self.rows and turn not in self._dividers:
            divider = Static(f"──── turn {turn} ────", classes="trace-divider", markup=False)
            self._dividers[turn] = divider
            self.mount(divider)

    # Following used to be decided when a row was mounted ("at the bottom now?"), before the
    # layout had grown the rows above it (a thought streaming in, a finished tool's preview):
    # the panel then read its own growth as the user having scrolled away and stopped for
    # good. Now it is a state: only the user moving up clears it, reaching the bottom sets it,
    # and every change of the content's height scrolls to the end while it holds.

    @property
    def following(self) -> bool:
        """The panel keeps its newest row in view (False while the user reads older ones)."""
        return self._following

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value >= self.max_scroll_y:
            self._following = True
        elif new_value < old_value:
            self._following = False  # the wheel, a key, the scrollbar, a focused older row

    def _keep_end(self) -> None:
        if self._following and self.scroll_y < self.max_scroll_y:
            self.scroll_end(animate=False, immediate=True)

    def watch_virtual_size(self) -> None:
        # Set by a layout in which the content's height changed: a row came, went or grew.
        if self._following:
            self.call_after_refresh(self._keep_end)

    def on_resize(self) -> None:
        # The panel itself changed size (the terminal was resized, a sidebar opened).
        if self._following:
            self.call_after_refresh(self._keep_end)

    def _tick(self) -> None:
        for row in self.rows[-5:]:
            if row.record.status == "running":
                row.refresh()

    def _add(self, record: StepRecord) -> TraceRow:
        row = TraceRow(record, self._clock)
        self.rows.append(row)
        self._empty.display = False
        self.mount(row)
        if len(self.rows) > MAX_ROWS:
            old = self.rows.pop(0)
            self._by_call = {k: v for k, v in self._by_call.items() if v is not old}
            old.remove()
            first = self.rows[0].record.turn
            for turn in [t for t in self._dividers if t <= first]:
                self._dividers.pop(turn).remove()  # a divider over nothing, or over the top
        return row

    def _record(self, step: int) -> StepRecord:
        return StepRecord(step=step, started=self._clock(), turn=self._turn)

    def step_started(self, step: int) -> None:
        self._open_step[step] = self._add(self._record(step))

    def thought(self, step: int, text: str) -> None:
        row = self._open_step.get(step)
        if row is None:
            row = self._open_step[step] = self._add(self._record(step))
        row.record.thought += text
        row.refresh(layout=True)

    def _collapsing_into(self, tool: str, open_row: TraceRow | None) -> TraceRow | None:
        """The row a call of `tool` joins: the newest row, if it shows a finished call of it
        and nothing (a thought) came between."""
        if tool not in COLLAPSING_TOOLS:
            return None
        if open_row is not None and (open_row.record.thought.strip() or open_row.record.tool):
            return None
        before = [r for r in self.rows if r is not open_row]
        if not before:
            return None
        last = before[-1].record
        if last.turn != self._turn:
            return None  # a new turn starts under its divider
        return before[-1] if last.tool == tool and last.status != "running" else None

    def _drop(self, row: TraceRow) -> None:
        self.rows.remove(row)
        row.remove()

    def tool_started(self, step: int, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        row = self._open_step.pop(step, None)
        into = self._collapsing_into(tool, row)
        if into is not None:
            if row is not None:
                self._drop(row)  # the step's empty "thinking" row: the call joins the last one
            into.record.absorb(step, call_id, arguments, self._clock())
            self._by_call[call_id] = into
            into.refresh(layout=True)
            return
        if row is None or row.record.tool:
            row = self._add(self._record(step))
        row.record.call_id, row.record.tool, row.record.arguments = call_id, tool, arguments
        row.record.started = self._clock()
        self._by_call[call_id] = row
        row.refresh(layout=True)

    def tool_output(self, call_id: str, text: str) -> None:
        row = self._by_call.get(call_id)
        if row is None:
            return
        row.record.live_output += text
        # Keep only the tail while running: the full text arrives with ToolCallFinished.
        if len(row.record.live_output) > 20000:
            row.record.live_output = row.record.live_output[-10000:]
        row.refresh(layout=True)

    def tool_finished(self, call_id: str, status: str, text: str, duration: float) -> None:
        row = self._by_call.get(call_id)
        if row is None:
            return
        row.record.status = status
        row.record.output = text
        row.record.duration = duration
        row.refresh(layout=True)

    def turn_ended(self, status: str) -> None:
        """Close rows still open: the answer step, or everything when the turn was cancelled."""
        for row in self.rows:
            r = row.record
            if r.status == "running":
                r.status = status
                r.duration = self._clock() - r.started
                row.refresh(layout=True)
        self._open_step.clear()

    def replay(self, steps: Iterable[ToolStep]) -> None:
        """Rows for the finished tool steps of a saved session, oldest first."""
        for saved in steps:
            self._begin_turn(saved.turn)
            into = self._collapsing_into(saved.tool, None)
            if into is not None:
                into.record.absorb(saved.step, saved.call_id, dict(saved.arguments), 0.0)
                into.record.status, into.record.output = saved.status, saved.output
                into.record.duration = saved.duration
                self._by_call[saved.call_id] = into
                into.refresh(layout=True)
                continue
            record = StepRecord(
                step=saved.step,
                call_id=saved.call_id,
                tool=saved.tool,
                arguments=dict(saved.arguments),
                thought=saved.thought,
                status=saved.status,
                output=saved.output,
                started=self._clock(),
                duration=saved.duration,
                turn=saved.turn,
            )
            self._by_call[saved.call_id] = self._add(record)

    def clear(self) -> None:
        for row in self.rows:
            row.remove()
        for divider in self._dividers.values():
            divider.remove()
        self.rows.clear()
        self._dividers.clear()
        self._by_call.clear()
        self._open_step.clear()
        self._turn = 0
        self._empty.display = True

    def divider_turns(self) -> list[int]:
        """The turns a divider is shown above (tests read the trace through this)."""
        return sorted(self._dividers)

    def summary_lines(self) -> list[str]:
        """One line per step (tests read the trace through this)."""
        out = []
        for row in self.rows:
            r = row.record
            count = f" x{r.count}" if r.count > 1 else ""
            out.append(f"{r.steps_label} {r.tool or '-'}{count} {r.status}")
        return out
