"""The app's own mechanics, driven by exact event sequences: chat, trace, todo board, status, keys."""

from __future__ import annotations

import asyncio

from hello_tui.core import events as ev
from hello_tui.screens.help import HelpScreen
from hello_tui.screens.setup_help import SetupHelpScreen
from hello_tui.widgets.chat_log import WINDOW_PAGE
from tests.ui.engine_double import Script, armed, fake_settings, make_app, wait_until


def _read_turn(answer_words: list[str]) -> list:
    return [
        ev.TurnStarted(turn=1, text="fix"),
        ev.StepStarted(step=1, max_steps=20),
        ev.ThoughtDelta(text="Read the module first.", step=1),
        ev.ToolCallStarted(step=1, call_id="c1", tool="read", arguments={"path": "stats.py"}),
        ev.ToolOutputDelta(call_id="c1", text="partial output\n"),
        ev.ToolCallFinished(
            step=1,
            call_id="c1",
            tool="read",
            status="success",
            text="l1\nl2\nl3\nl4\nl5",
            model_text="l1",
            duration=0.25,
        ),
        ev.TodoChanged(
            items=[
                {"id": "1", "title": "Read stats.py", "status": "completed"},
                {"id": "2", "title": "Fix mean", "status": "in_progress"},
                {"id": "3", "title": "Rerun tests", "status": "pending"},
            ]
        ),
        ev.Usage(
            prompt_tokens=100,
            completion_tokens=20,
            session_prompt_tokens=1200,
            session_completion_tokens=300,
        ),
        ev.StepStarted(step=2, max_steps=20),
        *[ev.AssistantDelta(text=w) for w in answer_words],
        ev.TurnFinished(answer="".join(answer_words), steps=2),
    ]


async def test_a_turn_fills_chat_trace_todos_and_status(tmp_path):
    words = ["The ", "bug ", "is ", "in ", "**mean**", "."]
    script = Script([_read_turn(words)])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        assert app.focused is app.prompt
        await pilot.press(*"fix the bug", "enter")
        await wait_until(pilot, lambda: not app.turn_running and script.received)
        assert script.received == ["fix the bug"]
        text = "\n".join(app.chat.history.plain_lines())
        assert "fix the bug" in text
        assert "The bug is in mean." in text
        assert not app.chat.streaming
        assert app.trace.summary_lines() == ["1 read success", "2 - answered"]
        first = app.trace.rows[0]
        assert first.record.thought == "Read the module first."
        assert first.record.output.startswith("l1")
        assert app.todos.by_status("completed") == ["Read stats.py"]
        assert app.todos.by_status("in_progress") == ["Fix mean"]
        assert app.status.tokens == 1500
        assert app.status.step == 2
        assert app.status.state == "idle"


async def test_trace_row_expands_to_the_full_output(tmp_path):
    script = Script([_read_turn(["done"])])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: not app.turn_running and script.received)
        row = app.trace.rows[0]
        collapsed = row.render().plain
        assert "l3" in collapsed and "l5" not in collapsed and "2 more lines" in collapsed
        row.focus()
        await pilot.press("enter")
        expanded = row.render().plain
        assert "l5" in expanded and "more lines" not in expanded


async def test_collapsed_trace_rows_never_wrap_tabbed_output(tmp_path):
    numbered = "\n".join(f"{n:6}\t{'word ' * 30}" for n in range(1, 9))  # read's format
    turn = [
        ev.StepStarted(step=1, max_steps=5),
        ev.ToolCallStarted(step=1, call_id="r", tool="read", arguments={"path": "a.py"}),
        ev.ToolCallFinished(
            step=1,
            call_id="r",
            tool="read",
            status="success",
            text=numbered,
            model_text=numbered,
            duration=0.1,
        ),
        ev.TurnFinished(answer="ok", steps=1),
    ]
    script = Script([turn])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: not app.turn_running and script.received)
        row = app.trace.rows[0]
        await pilot.pause()
        width = row.content_size.width
        rendered = row.render()
        logical = rendered.plain.split("\n")
        screen_lines = rendered.wrap(app.console, width)
        assert len(screen_lines) == len(logical), "a collapsed row wrapped"


async def test_live_output_streams_into_the_running_step(tmp_path):
    gate = asyncio.Event()
    turn = [
        ev.StepStarted(step=1, max_steps=5),
        ev.ToolCallStarted(step=1, call_id="t", tool="terminal", arguments={"command": "pytest"}),
        ev.ToolOutputDelta(call_id="t", text="collected 1 item\n"),
        gate,
        ev.ToolCallFinished(
            step=1,
            call_id="t",
            tool="terminal",
            status="error",
            text="1 failed",
            model_text="1 failed",
            duration=1.0,
        ),
        ev.TurnFinished(answer="tests fail", steps=1),
    ]
    script = Script([turn])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"run", "enter")
        await wait_until(
            pilot, lambda: bool(app.trace.rows) and app.trace.rows[0].record.live_output
        )
        row = app.trace.rows[0]
        assert "collected 1 item" in row.render().plain
        assert app.status.state == "running a tool"
        gate.set()
        await wait_until(pilot, lambda: not app.turn_running)
        assert row.record.status == "error"
        assert "1 failed" in row.render().plain


async def test_escape_cancels_a_running_turn_and_is_hidden_when_idle(tmp_path):
    never = asyncio.Event()
    turn = [ev.StepStarted(step=1, max_steps=5), ev.AssistantDelta(text="partial answer"), never]
    script = Script([turn, [ev.TurnFinished(answer="second answer", steps=1)]])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        assert app.check_action("cancel_turn", ()) is False
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: app.chat.streaming)
        assert app.check_action("cancel_turn", ()) is True
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.turn_running)
        assert script.cancelled
        text = "\n".join(app.chat.history.plain_lines())
        assert "partial answer" in text and "Turn cancelled." in text
        assert app.status.state == "idle"
        # The app stays usable: the next turn runs.
        await pilot.press(*"again", "enter")
        await wait_until(pilot, lambda: len(script.received) == 2 and not app.turn_running)
        assert "second answer" in "\n".join(app.chat.history.plain_lines())


async def test_engine_error_is_shown_not_raised(tmp_path):
    # A bug inside the engine mid-turn: the turn fails readably, the app stays up.
    script = Script([[ev.StepStarted(step=1, max_steps=5), RuntimeError("socket closed")]])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: not app.turn_running and app.trace.rows)
        assert "RuntimeError: socket closed" in "\n".join(app.chat.history.plain_lines())
        assert app.trace.rows[0].record.status == "error"


async def test_failed_turn_shows_the_hint(tmp_path):
    script = Script([[ev.TurnFailed(error="401 from the model", hint="set LLM_API_KEY")]])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: not app.turn_running and script.received)
        text = "\n".join(app.chat.history.plain_lines())
        assert "401 from the model" in text and "Hint: set LLM_API_KEY" in text


async def test_prompt_history_newlines_and_commands(tmp_path):
    script = Script()
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"first", "enter")
        await wait_until(pilot, lambda: not app.turn_running and script.received)
        await pilot.press(*"line one", "ctrl+j", *"line two")
        assert app.prompt.text == "line one\nline two"
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(script.received) == 2 and not app.turn_running)
        assert script.received[1] == "line one\nline two"
        await pilot.press("up")
        assert app.prompt.text == "line one\nline two"
        # The cursor lands at the end: ↑ first walks up the recalled lines.
        await pilot.press("up", "up")
        assert app.prompt.text == "first"
        await pilot.press("down")
        assert app.prompt.text == "line one\nline two"
        await pilot.press("down")
        assert app.prompt.text == ""
        await pilot.press(*"/help", "enter")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press(*"/nonsense", "enter")
        assert "Unknown command /nonsense" in "\n".join(app.chat.history.plain_lines())
        await pilot.press(*"/clear", "enter")
        assert "first" not in "\n".join(app.chat.history.plain_lines())
        assert app.trace.rows == []
        assert len(script.received) == 2  # commands never reach the model
        await pilot.press(*":q", "enter")
        await pilot.pause()
    assert app.return_value == 0


async def test_plan_command_needs_a_goal_and_never_reaches_the_agent_loop(tmp_path):
    script = Script()  # nothing listens at the model's address: the planner says so
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*":plan", "enter")
        assert "Usage: :plan <goal>" in "\n".join(app.chat.history.plain_lines())
        await pilot.press(*":plan fix the mean", "enter")
        await wait_until(pilot, lambda: not app.turn_running, timeout=20)
        assert script.received == []
        assert "planning failed" in "\n".join(app.chat.history.plain_lines())


async def test_a_prompt_sent_before_the_agent_is_ready_runs_once_it_is(tmp_path):
    script = Script([[ev.TurnFinished(answer="ready now", steps=1)]])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.engine is None
        app.handle_input("early question")
        await wait_until(pilot, lambda: script.received and not app.turn_running)
        text = "\n".join(app.chat.history.plain_lines())
        assert script.received == ["early question"]
        assert text.count("early question") == 1 and "ready now" in text


async def test_ctrl_c_twice_quits(tmp_path):
    app = make_app(fake_settings(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_value == 0


async def test_ctrl_c_twice_quits_only_within_the_window_on_the_apps_clock(tmp_path):
    from hello_tui.screens.main.keys import CTRL_C_WINDOW

    now = [100.0]
    app = make_app(fake_settings(tmp_path), clock=lambda: now[0])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+c")
        now[0] += CTRL_C_WINDOW + 0.5  # too late: this press arms again, it does not quit
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        now[0] += CTRL_C_WINDOW - 0.5
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_value == 0


async def test_no_model_configured_opens_the_setup_screen(tmp_path):
    app = make_app(fake_settings(tmp_path, configured=False))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, SetupHelpScreen)
        text = (
            app.screen.query_one("#setup-intro").source + app.screen.query_one("#setup-text").source
        )
        assert "hello-tui demo" in text
        for provider in ("OpenAI", "DeepSeek", "Qwen", "Ollama", "vLLM"):
            assert provider in text
        await armed(pilot)  # a decision modal: keys count once it has armed
        await pilot.press("escape")
        assert not isinstance(app.screen, SetupHelpScreen)


async def test_resumed_session_shows_only_the_newest_page_then_reveals_more(tmp_path):
    display = []
    for i in range(150):
        display.append({"role": "user", "text": f"question {i}"})
        display.append({"role": "assistant", "text": f"answer **{i}**"})
    app = make_app(fake_settings(tmp_path), display=display)
    async with app.run_test(size=(120, 40)) as pilot:
        history = app.chat.history
        # The saved display is shown once the engine is ready, a message after it is set.
        await wait_until(pilot, lambda: app.engine is not None and history.entries)
        assert len(history.entries) == 300
        assert history.window_start == 300 - WINDOW_PAGE
        text = "\n".join(history.plain_lines())
        assert "answer 149" in text and "question 0" not in text
        assert f"{300 - WINDOW_PAGE} earlier messages" in text
        app.chat.scroll_home(animate=False, immediate=True)
        await wait_until(pilot, lambda: history.window_start < 300 - WINDOW_PAGE)
        assert history.window_start == 300 - 2 * WINDOW_PAGE


async def test_sidebar_toggles_with_ctrl_b(tmp_path):
    app = make_app(fake_settings(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        assert not app.sidebar.display
        await pilot.press("ctrl+b")
        assert app.sidebar.display
        assert app.sidebar.visible_note_titles() == []
        await pilot.press("ctrl+b")
        assert not app.sidebar.display
        assert app.focused is app.prompt


async def test_a_long_reply_moves_finished_paragraphs_to_history_without_losing_text(tmp_path):
    paragraphs = [f"Paragraph {i} " + "word " * 60 for i in range(40)]
    paragraphs[20] = "```python\n" + "\n\n".join(f"x{i} = {i}" for i in range(30)) + "\n```"
    answer = "\n\n".join(paragraphs)
    deltas = [answer[i : i + 7] for i in range(0, len(answer), 7)]
    script = Script(
        [[*[ev.AssistantDelta(text=d) for d in deltas], ev.TurnFinished(answer=answer, steps=1)]]
    )
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: not app.turn_running and script.received, timeout=20)
        parts = [e for e in app.chat.history.entries if e.role in ("assistant", "continued")]
        assert len(parts) > 1
        assert parts[0].role == "assistant"
        assert all(p.role == "continued" for p in parts[1:])
        assert "".join(p.text for p in parts) == answer
        # The fenced block was never cut in two.
        assert sum("```python" in p.text for p in parts) == 1
        fenced = next(p for p in parts if "```python" in p.text)
        assert fenced.text.count("```") == 2
        assert app.chat.live_text == ""


def test_settled_split_keeps_fences_and_the_growing_line():
    from hello_tui.widgets.chat_log import settled_split

    text = "one\n\n```py\nx = 1\n\ny = 2\n```\n\nthree\n\nstill gro"
    cut = settled_split(text)
    assert text[:cut].endswith("three\n\n") and text[cut:] == "still gro"
    assert settled_split("```\na\n\nb") == 0
    assert settled_split("no blank line yet") == 0


async def test_status_bar_shows_cost_when_priced(tmp_path):
    turn = [
        ev.Usage(
            prompt_tokens=10,
            completion_tokens=5,
            session_prompt_tokens=10,
            session_completion_tokens=5,
            cost=0.0125,
        ),
        ev.TurnFinished(answer="ok", steps=1),
    ]
    script = Script([turn])
    app = make_app(fake_settings(tmp_path), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        assert "$" not in app.status.render().plain
        await pilot.press(*"go", "enter")
        await wait_until(pilot, lambda: not app.turn_running and script.received)
        rendered = app.status.render().plain
        assert "15 tokens" in rendered and "$0.0125" in rendered
        assert "idle" in rendered


async def test_notes_filter_narrows_the_list(tmp_path):
    from hello_tui.store.notes import NoteStore

    settings = fake_settings(tmp_path)
    store = NoteStore(settings.state.notes)
    store.create("Patch applied", "stats.py", note_type="action")
    store.create("Flaky test in CI", "retry", note_type="blocker")
    app = make_app(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: len(app.sidebar.visible_note_titles()) == 2)
        titles = app.sidebar.visible_note_titles()
        assert len(titles) == 2 and "Flaky test in CI" in titles[0]  # newest first
        app.sidebar.query_one("#notes-filter").focus()
        await pilot.press(*"blocker")
        assert [t for t in app.sidebar.visible_note_titles()] == ["blocker    Flaky test in CI"]
        await pilot.press(*" nothing-like-this")
        assert app.sidebar.visible_note_titles() == []
