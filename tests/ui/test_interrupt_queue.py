"""Interrupting a turn (Esc, ctrl+c), ctrl+c twice to quit, and messages queued during a turn.

The real agent and the scripted model server: a long answer streams while the
user presses keys.
"""

from __future__ import annotations

import json

import pytest

from hello_tui.app import HelloApp
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.store.sessions import SessionStore
from tests.support.scripted_model import call, held, settings_for_server, text, tool_calls
from tests.ui.engine_double import wait_until

LONG = "word " * 3000


def long_answer():
    """A long answer that streams 20 chunks, then holds the turn open until released."""
    return held(text(LONG, chunk_size=5), after_chunks=20)


def _app(tmp_path, server) -> HelloApp:
    repo = tmp_path / "repo"
    repo.mkdir()
    return HelloApp(settings_for_server(server, repo), preflight=False)


def _chat(app: HelloApp) -> str:
    return "\n".join(app.chat.history.plain_lines())


async def _send(pilot, app: HelloApp, prompt: str) -> None:
    await wait_until(pilot, lambda: app.engine is not None, timeout=15)
    app.prompt.load_text(prompt)
    await pilot.press("enter")


async def test_ctrl_c_interrupts_the_turn_and_the_session_stays_consistent(
    tmp_path, scripted_server
):
    server = scripted_server([long_answer(), text("Second answer.")])
    app = _app(tmp_path, server)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, "write a lot")
        await wait_until(pilot, lambda: app.chat.streaming and len(app.chat.live_text) > 50)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not app.turn_running, timeout=10)
        assert app.is_running  # one ctrl+c during a turn interrupts, it does not quit
        assert "Turn cancelled." in _chat(app)
        session_id = app.engine.session_id
        await _send(pilot, app, "and now?")
        await wait_until(pilot, lambda: not app.turn_running and server.remaining == 0, timeout=15)
        await wait_until(pilot, lambda: "Second answer." in _chat(app))
    session = SessionStore(app.settings.state).load(session_id)
    raw = json.loads(session.path.read_text())
    assert raw["turns"] == 2
    roles = [m["role"] for m in session.history]
    assert roles.count("user") == 2 and roles[-1] == "assistant"


async def test_ctrl_c_during_an_approval_interrupts_and_closes_it(tmp_path, scripted_server):
    server = scripted_server([tool_calls([call("terminal", {"command": "touch x"})])])
    app = _app(tmp_path, server)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, "make x")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandApprovalScreen), timeout=20)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not app.turn_running, timeout=10)
        assert not isinstance(app.screen, CommandApprovalScreen)
        assert not (app.settings.repo / "x").exists()
        assert app.is_running


async def test_ctrl_c_clears_the_prompt_then_twice_on_an_empty_prompt_quits(tmp_path):
    from tests.ui.engine_double import Script, fake_settings, make_app

    app = make_app(fake_settings(tmp_path), Script())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"draft")
        await pilot.press("ctrl+c")
        assert app.prompt.text == "" and app.is_running
        await pilot.press("up")
        assert app.prompt.text == "draft"  # cleared, not lost
        await pilot.press("ctrl+c")
        await pilot.press("ctrl+c")
        assert app.is_running  # the first on the empty prompt only warns
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0


async def test_a_message_sent_during_a_turn_is_queued_and_sent_when_it_ends(
    tmp_path, scripted_server
):
    first = held(text("first " * 600, chunk_size=5), after_chunks=20)
    server = scripted_server([first, text("Answer to the queued one.")])
    app = _app(tmp_path, server)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, "first")
        await wait_until(pilot, lambda: app.chat.streaming)
        app.prompt.load_text("also this")
        await pilot.press("enter")
        assert app.queued.items == ["also this"] and app.queued.display
        assert app.prompt.text == ""
        first.release.set()  # the first turn ends: the queued message goes out
        await wait_until(pilot, lambda: "Answer to the queued one." in _chat(app), timeout=20)
        assert app.queued.items == [] and not app.queued.display
        users = [m["content"] for m in server.chat_requests[-1]["messages"] if m["role"] == "user"]
        assert users[-1].endswith("also this")


async def test_a_queued_message_can_be_edited_or_dropped(tmp_path, scripted_server):
    server = scripted_server([long_answer(), text("Edited answer.")])
    app = _app(tmp_path, server)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, "first")
        await wait_until(pilot, lambda: app.chat.streaming)
        for message in ("drop me", "edit me"):
            app.prompt.load_text(message)
            await pilot.press("enter")
        assert app.queued.items == ["drop me", "edit me"]
        await pilot.press("up")  # the newest comes back to the prompt
        assert app.prompt.text == "edit me" and app.queued.items == ["drop me"]
        await pilot.press(*" again", "enter")
        assert app.queued.items == ["drop me", "edit me again"]
        await pilot.press("ctrl+x")  # drops the newest
        assert app.queued.items == ["drop me"]
        await pilot.press("ctrl+x")
        assert app.queued.items == []


async def test_an_interrupted_turn_hands_the_queue_back_to_the_prompt(tmp_path, scripted_server):
    server = scripted_server([long_answer()])
    app = _app(tmp_path, server)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, "first")
        await wait_until(pilot, lambda: app.chat.streaming)
        app.prompt.load_text("later")
        await pilot.press("enter")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.turn_running, timeout=10)
        assert app.queued.items == []
        assert app.prompt.text == "later"
        assert server.remaining == 0 and len(server.chat_requests) == 1
        await wait_until(pilot, lambda: "queued message is back" in _chat(app))


async def test_two_queued_messages_come_back_in_order_and_the_notice_counts_them(
    tmp_path, scripted_server
):
    server = scripted_server([long_answer()])
    app = _app(tmp_path, server)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, "first")
        await wait_until(pilot, lambda: app.chat.streaming)
        for later in ("then the README", "then the changelog"):
            app.prompt.load_text(later)
            await pilot.press("enter")
        assert app.queued.items == ["then the README", "then the changelog"]
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not app.turn_running, timeout=10)
        assert app.prompt.text == "then the README\n\nthen the changelog"
        await wait_until(pilot, lambda: "Your 2 queued messages are back" in _chat(app))


def _entries(app: HelloApp) -> list[tuple[str, str]]:
    return [(e.role, e.text) for e in app.chat.history.entries]


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_turn_cancelled_comes_after_the_partial_answer_it_cut_off(
    tmp_path, scripted_server, key
):
    server = scripted_server([long_answer()])
    app = _app(tmp_path, server)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, "write a lot")
        await wait_until(pilot, lambda: app.chat.streaming and len(app.chat.live_text) > 50)
        await pilot.press(key)
        await wait_until(pilot, lambda: not app.turn_running and app.chat.idle, timeout=10)
        entries = _entries(app)
        at = entries.index(("notice", "Turn cancelled."))
        roles = [role for role, _ in entries]
        assert "assistant" in roles[:at]  # the partial answer, above its notice
        assert not {"assistant", "continued"} & set(roles[at + 1 :])


async def test_a_turn_cancelled_with_a_queue_says_so_in_the_same_words(tmp_path, scripted_server):
    server = scripted_server([long_answer()])
    app = _app(tmp_path, server)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, "first")
        await wait_until(pilot, lambda: app.chat.streaming)
        app.prompt.load_text("later")
        await pilot.press("enter")
        await pilot.press("escape")
        await wait_until(pilot, lambda: "queued message is back" in _chat(app), timeout=10)
        notices = [t for role, t in _entries(app) if role == "notice"]
        assert notices.count("Turn cancelled.") == 1
        assert not any("interrupted" in t.lower() for t in notices)


async def test_ctrl_x_after_the_queued_message_was_taken_back_keeps_its_text(
    tmp_path, scripted_server
):
    server = scripted_server([long_answer()])
    app = _app(tmp_path, server)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, "first")
        await wait_until(pilot, lambda: app.chat.streaming)
        app.prompt.load_text("line one\nline two")
        await pilot.press("enter")
        hint = str(app.queued.content)
        assert "↑ takes the newest back, ctrl+x drops it" in hint
        await pilot.press("up")
        assert app.prompt.text == "line one\nline two" and app.queued.items == []
        await pilot.press("ctrl+x")  # nothing is queued now: nothing to drop
        assert app.prompt.text == "line one\nline two"
        app.prompt.select_all()
        await pilot.press("ctrl+x")  # a selection is cut, as in any editor
        assert app.prompt.text == ""
