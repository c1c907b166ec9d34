"""The trace without clutter: an empty panel says what will appear, a todo step says what
changed in a line (the board shows the rest), and each turn after the first, replayed or
live, starts under a divider naming it."""

from __future__ import annotations

from textual.app import App, ComposeResult

from hello_tui.core import events as ev
from hello_tui.core.display import ToolStep
from hello_tui.widgets.trace import TracePanel
from tests.ui.engine_double import Script, fake_settings, make_app, wait_until

BOARD = "Updated todo [2] Run the tests (completed).\n[x] 1 Read stats.py\n[x] 2 Run the tests"


def _visible(app) -> str:
    return app.export_screenshot().replace("&#160;", " ")


def saved(turn: int, step: int, tool: str = "read", output: str = "out") -> dict:
    return {
        "type": "tool",
        "turn": turn,
        "step": step,
        "call_id": f"t{turn}s{step}",
        "tool": tool,
        "arguments": {"path": "stats.py"},
        "status": "success",
        "output": output,
        "duration": 0.1,
    }


async def test_an_empty_trace_says_what_will_appear(tmp_path):
    turn = [
        ev.StepStarted(step=1, max_steps=9),
        ev.ToolCallStarted(step=1, call_id="c1", tool="ls", arguments={"path": "."}),
        ev.ToolCallFinished(
            step=1, call_id="c1", tool="ls", status="success", text="a", model_text="a", duration=0
        ),
        ev.TurnFinished(answer="done", steps=1),
    ]
    app = make_app(fake_settings(tmp_path), Script([turn]))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.pause()
        assert "No steps yet" in _visible(app)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: not app.turn_running and app.trace.rows)
        await pilot.pause()
        assert "No steps yet" not in _visible(app)


async def test_a_todo_step_shows_what_changed_not_the_arguments_or_the_board(tmp_path):
    turn = [
        ev.StepStarted(step=1, max_steps=9),
        ev.ToolCallStarted(
            step=1,
            call_id="c1",
            tool="todo",
            arguments={"action": "update", "id": "2", "status": "completed"},
        ),
        ev.ToolCallFinished(
            step=1,
            call_id="c1",
            tool="todo",
            status="success",
            text=BOARD,
            model_text=BOARD,
            duration=0,
        ),
        ev.TurnFinished(answer="done", steps=1),
    ]
    app = make_app(fake_settings(tmp_path), Script([turn]))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: not app.turn_running and app.trace.rows)
        shown = app.trace.rows[0].render().plain
        assert "│ Updated todo [2] Run the tests" in shown
        assert "action=" not in shown and "status=completed" not in shown
        assert "[x] 1 Read stats.py" not in shown and "more line" not in shown


async def test_a_resumed_trace_divides_its_turns_and_the_next_turn_too(tmp_path):
    display = [saved(1, 1), saved(1, 2), saved(2, 1), saved(2, 2, "todo", BOARD), saved(3, 1)]
    app = make_app(fake_settings(tmp_path), Script(), display=display)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None and app.trace.rows)
        await pilot.pause()
        assert app.trace.divider_turns() == [2, 3]
        shown = _visible(app)
        assert "turn 2" in shown and "turn 3" in shown
        assert "turn 1" not in shown  # the first turn needs no divider


class PanelApp(App[None]):
    def compose(self) -> ComposeResult:
        yield TracePanel(id="trace")


async def test_live_turns_get_their_divider_and_todo_rows_do_not_join_across_it():
    app = PanelApp()
    async with app.run_test(size=(60, 30)) as pilot:
        trace = app.query_one(TracePanel)
        trace.replay([ToolStep(4, 1, "a", "todo", {}, "success", BOARD, 0.1)])
        trace.turn_started(5)
        trace.step_started(1)
        trace.tool_started(1, "b", "todo", {"action": "list"})
        trace.tool_finished("b", "success", BOARD, 0.1)
        trace.turn_ended("answered")
        await pilot.pause()
        assert trace.divider_turns() == [5]
        assert trace.summary_lines() == ["1 todo success", "1 todo success"]
        trace.clear()
        await pilot.pause()
        assert trace.divider_turns() == []
        assert "No steps yet" in _visible(app)
