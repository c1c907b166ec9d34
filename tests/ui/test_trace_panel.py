"""The trace: consecutive todo updates share a row, and the panel keeps following new rows.

The turns grow rows after they are mounted (a thought streams in, a finished tool adds
its preview), which is what used to stop the panel following.
"""

from __future__ import annotations

import asyncio

from hello_tui.core import events as ev
from tests.ui.engine_double import Script, fake_settings, make_app, wait_until


def _step(n: int, tool: str = "read", lines: int = 3, thought: str = "") -> list:
    out = [ev.StepStarted(step=n, max_steps=99)]
    if thought:
        out.append(ev.ThoughtDelta(text=thought, step=n))
    text = "\n".join(f"out {n}.{k}" for k in range(lines))
    out += [
        ev.ToolCallStarted(step=n, call_id=f"c{n}", tool=tool, arguments={"n": n}),
        ev.ToolCallFinished(
            step=n,
            call_id=f"c{n}",
            tool=tool,
            status="success",
            text=text,
            model_text=text,
            duration=0.1,
        ),
    ]
    return out


def _at_bottom(app) -> bool:
    trace = app.trace
    last = trace.rows[-1]
    inside = trace.content_region
    return trace.scroll_y == trace.max_scroll_y and last.region.bottom <= inside.bottom


async def test_consecutive_todo_updates_collapse_into_one_row(tmp_path):
    turn = [
        *_step(1, "read"),
        *_step(2, "todo"),
        *_step(3, "todo"),
        *_step(4, "todo"),
        *_step(5, "read"),
        *_step(6, "todo"),
        *_step(7, "todo", thought="Now the second part."),  # a thought between: its own row
        ev.TurnFinished(answer="done", steps=7),
    ]
    script = Script([turn])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: not app.turn_running and script.received)
        assert app.trace.summary_lines() == [
            "1 read success",
            "2–4 todo x3 success",
            "5 read success",
            "6 todo success",
            "7 todo success",
        ]
        collapsed = app.trace.rows[1]
        shown = collapsed.render().plain
        assert "todo ×3" in shown and "2–4" in shown
        # The latest call's result; its raw arguments are the board's business.
        assert "out 4.0" in shown and "out 2.0" not in shown and "n=4" not in shown


async def test_the_trace_follows_rows_that_grow_after_they_appear(tmp_path):
    gate = asyncio.Event()
    turn = [*(e for n in range(1, 13) for e in _step(n, thought=f"thinking about {n} " * 6))]
    turn += [gate, ev.TurnFinished(answer="done", steps=12)]
    script = Script([turn])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: len(app.trace.rows) == 12)
        await wait_until(pilot, lambda: _at_bottom(app))
        assert app.trace.max_scroll_y > 0 and app.trace.following
        gate.set()
        await wait_until(pilot, lambda: not app.turn_running)
        await wait_until(pilot, lambda: _at_bottom(app))


async def test_scrolling_up_stops_following_and_the_bottom_resumes_it(tmp_path):
    first, second, third = asyncio.Event(), asyncio.Event(), asyncio.Event()
    turn = [*(e for n in range(1, 11) for e in _step(n)), first]
    turn += [*(e for n in range(11, 14) for e in _step(n)), second]
    turn += [*(e for n in range(14, 17) for e in _step(n)), third]
    turn += [ev.TurnFinished(answer="done", steps=16)]
    script = Script([turn])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: len(app.trace.rows) == 10)
        await wait_until(pilot, lambda: _at_bottom(app))
        # The user scrolls up with the mouse wheel to read an older step.
        for _ in range(2):
            app.trace.post_message(_wheel_up(app))
        await pilot.pause()
        await wait_until(pilot, lambda: app.trace.scroll_y < app.trace.max_scroll_y)
        held = app.trace.scroll_y
        assert not app.trace.following
        tall = app.trace.max_scroll_y
        first.set()
        await wait_until(pilot, lambda: len(app.trace.rows) == 13 and app.trace.max_scroll_y > tall)
        await pilot.pause()
        assert app.trace.scroll_y == held, "new rows pulled the reader away from their row"
        # Back at the bottom (End), the trace follows again.
        app.trace.scroll_end(animate=False)
        await pilot.pause()
        assert app.trace.following
        second.set()
        await wait_until(pilot, lambda: len(app.trace.rows) == 16)
        await wait_until(pilot, lambda: _at_bottom(app))
        third.set()
        await wait_until(pilot, lambda: not app.turn_running)


def _wheel_up(app):
    from textual.events import MouseScrollUp

    region = app.trace.region
    return MouseScrollUp(
        app.trace,
        x=2,
        y=2,
        delta_x=0,
        delta_y=-1,
        button=0,
        shift=False,
        meta=False,
        ctrl=False,
        screen_x=region.x + 2,
        screen_y=region.y + 2,
    )


async def test_the_trace_still_follows_after_the_terminal_shrinks(tmp_path):
    gate = asyncio.Event()
    turn = [*(e for n in range(1, 9) for e in _step(n)), gate]
    turn += [*(e for n in range(9, 12) for e in _step(n)), ev.TurnFinished(answer="ok", steps=11)]
    script = Script([turn])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: len(app.trace.rows) == 8)
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: _at_bottom(app))
        gate.set()
        await wait_until(pilot, lambda: not app.turn_running)
        await wait_until(pilot, lambda: _at_bottom(app))


async def test_few_rows_start_at_the_top_of_the_panel(tmp_path):
    script = Script([[*_step(1), ev.TurnFinished(answer="ok", steps=1)]])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: not app.turn_running and script.received)
        await pilot.pause()
        assert app.trace.scroll_y == 0
        assert app.trace.rows[0].region.y == app.trace.content_region.y


async def test_a_resumed_sessions_todo_steps_collapse_too():
    from textual.app import App, ComposeResult

    from hello_tui.core.display import ToolStep
    from hello_tui.widgets.trace import TracePanel

    def saved(step: int, tool: str) -> ToolStep:
        return ToolStep(1, step, f"c{step}", tool, {"n": step}, "success", f"board {step}", 0.1)

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield TracePanel(id="trace", clock=lambda: 0.0)

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        trace = app.query_one(TracePanel)
        trace.replay([saved(1, "todo"), saved(2, "todo"), saved(3, "read"), saved(4, "todo")])
        await pilot.pause()
        assert trace.summary_lines() == ["1–2 todo x2 success", "3 read success", "4 todo success"]
        assert trace.rows[0].record.output == "board 2"
