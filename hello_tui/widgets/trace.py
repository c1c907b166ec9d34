"""The live ReAct trace: one row per step — thought, tool and arguments, observation, duration, status.

A running step shows a spinner and its elapsed time, and a terminal command's
output streams into its row as it comes. Enter (or a click) on a row expands
the observation to the full output. A resumed session replays its saved tool
steps (`core.display.ToolStep`).
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

from hello_tui.core.display import ToolStep, counted

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PREVIEW_LINES = 3
LIVE_TAIL_LINES = 8
MAX_ROWS = 200  # older rows are pruned: the trace is a live view, the log keeps everything

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


class TraceRow(Widget, can_focus=True):
    """One step; its render is rebuilt from the record, so updates are just a refresh."""

    BINDINGS = [
        Binding("enter", "toggle", "Expand", id="trace.expand", tooltip="Show the full output"),
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

    def action_toggle(self) -> None:
        self.expanded = not self.expanded
        self.refresh(layout=True)

    def on_click(self) -> None:
        self.action_toggle()

    def render(self) -> Text:
        r = self.record
        text = Text()
        if r.status == "running":
            frame = SPINNER[int(self._clock() * 10) % len(SPINNER)]
            text.append(f"{frame} ", style="bold #7aa2f7")
        else:
            mark, colour = _STATUS_MARK.get(r.status, ("•", "#c0caf5"))
            text.append(f"{mark} ", style=f"bold {colour}")
        text.append(f"{r.step} ", style="#7f849c")
        if r.tool:
            text.append(r.tool, style="bold")
        else:
            text.append("thinking" if r.status == "running" else "answer", style="italic")
        elapsed = r.duration if r.duration is not None else self._clock() - r.started
        text.append(f"  {elapsed:.1f}s", style="#7f849c")
        width = self.content_size.width
        if r.arguments:
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
            if hidden > 0:
                more = fit(f"└ {counted(hidden, 'more line')} (enter to expand)", width - 2)
                text.append(f"\n  {more}", style="#565f89")
        return text


class TracePanel(VerticalScroll):
    """The steps of the current session, newest at the bottom."""

    DEFAULT_CSS = """
    TracePanel { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None, clock: Callable[[], float] = time.monotonic):
        super().__init__(id=id)
        self.border_title = "Trace"
        self._clock = clock
        self.rows: list[TraceRow] = []
        self._by_call: dict[str, TraceRow] = {}
        self._open_step: dict[int, TraceRow] = {}  # step -> row still waiting for its tool call

    def on_mount(self) -> None:
        self.set_interval(0.1, self._tick)

    def _follow(self) -> None:
        # Follow new steps unless the user scrolled up to read an older one.
        if self.scroll_y >= self.max_scroll_y - 1:
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True)

    def _tick(self) -> None:
        for row in self.rows[-5:]:
            if row.record.status == "running":
                row.refresh()

    def _add(self, record: StepRecord) -> TraceRow:
        row = TraceRow(record, self._clock)
        self.rows.append(row)
        self.mount(row)
        self._follow()
        if len(self.rows) > MAX_ROWS:
            old = self.rows.pop(0)
            self._by_call = {k: v for k, v in self._by_call.items() if v is not old}
            old.remove()
        return row

    def _record(self, step: int) -> StepRecord:
        return StepRecord(step=step, started=self._clock())

    def step_started(self, step: int) -> None:
        self._open_step[step] = self._add(self._record(step))

    def thought(self, step: int, text: str) -> None:
        row = self._open_step.get(step)
        if row is None:
            row = self._open_step[step] = self._add(self._record(step))
        row.record.thought += text
        row.refresh(layout=True)

    def tool_started(self, step: int, call_id: str, tool: str, arguments: dict[str, Any]) -> None:
        row = self._open_step.pop(step, None)
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
        self._follow()

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
            )
            self._by_call[saved.call_id] = self._add(record)

    def clear(self) -> None:
        for row in self.rows:
            row.remove()
        self.rows.clear()
        self._by_call.clear()
        self._open_step.clear()

    def summary_lines(self) -> list[str]:
        """One line per step (tests read the trace through this)."""
        out = []
        for row in self.rows:
            r = row.record
            out.append(f"{r.step} {r.tool or '-'} {r.status}")
        return out
