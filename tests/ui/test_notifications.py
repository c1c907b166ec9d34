"""Notifications: when a turn ends or a decision modal waits while the terminal is not focused,
the app writes the bell and/or a desktop notification (OSC 9 / OSC 777) to its terminal, as set
by `notifications`; nothing while focused or when off; model text cannot smuggle control
characters into the sequence. Real engine, scripted model server, the driver's writes read."""

from __future__ import annotations

import pytest
from textual import events

from hello_tui.app import HelloApp
from hello_tui.commands.doctor import _describe
from hello_tui.config import ConfigError, load_settings
from hello_tui.notify import clean, desktop_sequence, notification
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.screens.confirm import ConfirmScreen
from hello_tui.screens.review import PatchReviewScreen
from hello_tui.screens.review_help import ReviewHelpScreen
from tests.support.scripted_model import call, settings_for_server, text, tool_calls
from tests.ui.engine_double import DriverWrites, armed, wait_until

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
XTERM = {"TERM": "xterm-256color"}


@pytest.fixture
def plain_terminal(monkeypatch):
    """A terminal that takes OSC 9, outside tmux (the app reads the real environment)."""
    monkeypatch.setenv("TERM", "xterm-256color")
    for name in ("VTE_VERSION", "TMUX", "TERM_PROGRAM"):
        monkeypatch.delenv(name, raising=False)


async def _blur(pilot, app: HelloApp) -> None:
    app.post_message(events.AppBlur())
    await wait_until(pilot, lambda: not app.app_focus)


async def _focus(pilot, app: HelloApp) -> None:
    app.post_message(events.AppFocus())
    await wait_until(pilot, lambda: app.app_focus)


async def _turn(pilot, app: HelloApp, prompt: str) -> None:
    def answers() -> int:
        return sum(e.role == "assistant" for e in app.chat.history.entries)

    await wait_until(pilot, lambda: app.engine is not None, timeout=15)
    before = answers()
    # Sent without a key press: a key tells Textual the terminal has the focus again.
    app.prompt.load_text(prompt)
    app.prompt.submit()
    await wait_until(pilot, lambda: answers() > before and not app.turn_running, timeout=15)


def _app(server, tmp_path, setting: str) -> HelloApp:
    settings = settings_for_server(server, tmp_path, environ={"CODE_AGENT_NOTIFICATIONS": setting})
    return HelloApp(settings, preflight=False, clock=lambda: 0.0)


# ---------------------------------------------------------------- the sequences


def test_clean_keeps_no_control_or_format_character():
    hostile = "done\x1b]52;c;ZXZpbA==\x07\x9b31m\u202eevil\u200b\r\nnext\tline\x7f"
    cleaned = clean(hostile)
    assert cleaned == "done]52;c;ZXZpbA==31mevil next line"
    assert all(ch.isprintable() for ch in cleaned)
    assert clean("x" * 500) == "x" * 159 + "…"


def test_osc9_by_default_osc777_for_foot_rxvt_and_vte():
    assert desktop_sequence("hello-tui", "Turn finished", XTERM) == (
        "\x1b]9;hello-tui: Turn finished\a"
    )
    for environ in ({"TERM": "foot"}, {"TERM": "rxvt-unicode-256color"}, {"VTE_VERSION": "7600"}):
        assert desktop_sequence("hello-tui (a;b)", "done", environ) == (
            "\x1b]777;notify;hello-tui (a,b);done\a"
        )


def test_inside_tmux_the_sequence_is_wrapped_for_passthrough():
    wrapped = desktop_sequence("t", "b", {"TERM": "tmux-256color", "TMUX": "/tmp/tmux-1/default"})
    assert wrapped == "\x1bPtmux;\x1b\x1b]9;t: b\a\x1b\\"


def test_each_setting_writes_its_own_calls():
    assert notification("off", "t", "b", XTERM) == ""
    assert notification("bell", "t", "b", XTERM) == "\a"
    assert notification("desktop", "t", "b", XTERM) == "\x1b]9;t: b\a"
    assert notification("both", "t", "b", XTERM) == "\x1b]9;t: b\a\a"


def test_the_setting_comes_from_the_environment_then_the_user_config(tmp_path, monkeypatch):
    config = tmp_path / "xdg" / "hello-tui" / "config.toml"
    config.parent.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    repo = tmp_path / "repo"
    repo.mkdir()
    assert load_settings(repo, environ={}).notifications == "both"
    config.write_text('notifications = "bell"\n')
    settings = load_settings(repo, environ={})
    assert (settings.notifications, settings.sources["notifications"]) == (
        "bell",
        "user config notifications",
    )
    settings = load_settings(repo, environ={"CODE_AGENT_NOTIFICATIONS": "Desktop"})
    assert (settings.notifications, settings.sources["notifications"]) == (
        "desktop",
        "env CODE_AGENT_NOTIFICATIONS",
    )
    config.write_text('notifications = "on"\n')  # the older name
    assert load_settings(repo, environ={}).notifications == "both"
    (repo / ".env").write_text("CODE_AGENT_NOTIFICATIONS=off\n")
    assert load_settings(repo, environ={}).notifications == "both"  # not the repo's choice
    settings = load_settings(repo, environ={"CODE_AGENT_NOTIFICATIONS": "bell"})
    rows = {label: (value, source) for label, value, source in _describe(settings)}
    assert rows["notifications"] == ("bell", "env CODE_AGENT_NOTIFICATIONS")  # doctor shows it
    with pytest.raises(ConfigError, match="off, bell, desktop, both"):
        load_settings(repo, environ={"CODE_AGENT_NOTIFICATIONS": "loud"})


# ---------------------------------------------------------------- in the app


async def test_a_turn_ending_while_blurred_sends_both_calls_with_clean_text(
    tmp_path, scripted_server, plain_terminal
):
    server = scripted_server([text("All done\x1b]0;owned\x07 now.\nSecond line.")])
    app = _app(server, tmp_path, "both")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        writes = DriverWrites(app)
        await _blur(pilot, app)
        await _turn(pilot, app, "finish it")
        title = f"hello-tui ({tmp_path.name})"
        # The answer reaches the app with its escape made visible (core.terminal_text); the
        # notifier then sends it with no control character in it.
        body = "Turn finished: All done\u241b]0;owned\u2407 now. Second line."
        assert writes.calls() == [f"\x1b]9;{title}: {body}\a\a"]


async def test_nothing_is_sent_while_the_terminal_is_focused(
    tmp_path, scripted_server, plain_terminal
):
    server = scripted_server([text("first"), text("second")])
    app = _app(server, tmp_path, "both")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        writes = DriverWrites(app)
        await _turn(pilot, app, "one")
        await _blur(pilot, app)
        await _focus(pilot, app)  # back before the turn ends
        await _turn(pilot, app, "two")
        assert writes.calls() == []


@pytest.mark.parametrize(
    ("setting", "expected"), [("off", []), ("bell", ["\a"]), ("desktop", ["\x1b]9;"])]
)
async def test_off_sends_nothing_bell_only_the_bell_desktop_no_bell(
    tmp_path, scripted_server, plain_terminal, setting, expected
):
    server = scripted_server([text("answer")])
    app = _app(server, tmp_path, setting)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        writes = DriverWrites(app)
        await _blur(pilot, app)
        await _turn(pilot, app, "go")
        calls = writes.calls()
        assert len(calls) == len(expected), calls
        for call_data, start in zip(calls, expected, strict=True):
            assert call_data.startswith(start)
            assert call_data.count("\a") == 1  # desktop alone has no bell; bell is one BEL


async def test_a_review_waiting_while_blurred_calls_once_and_the_turn_end_after_focus_not(
    tmp_path, scripted_server, plain_terminal
):
    (tmp_path / "a.txt").write_text("one\n")
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("done")])
    app = _app(server, tmp_path, "desktop")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        writes = DriverWrites(app)
        await _blur(pilot, app)
        app.prompt.load_text("make it loud")
        app.prompt.submit()
        await wait_until(pilot, lambda: isinstance(app.screen, PatchReviewScreen), timeout=15)
        await wait_until(pilot, lambda: writes.calls())
        title = f"hello-tui ({tmp_path.name})"
        assert writes.calls() == [f"\x1b]9;{title}: A patch waits for your review.\a"]
        # A dialog over the review and back: the review is not announced again.
        await app.push_screen(ReviewHelpScreen())
        await pilot.pause()
        app.pop_screen()
        await wait_until(pilot, lambda: isinstance(app.screen, PatchReviewScreen))
        await pilot.pause()
        assert len(writes.calls()) == 1
        await _focus(pilot, app)
        await armed(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        assert (tmp_path / "a.txt").read_text() == "ONE\n"
        assert len(writes.calls()) == 1  # nothing for the turn's end: the user is back


async def test_a_command_approval_waiting_while_blurred_names_the_command(
    tmp_path, scripted_server, plain_terminal
):
    server = scripted_server(
        [tool_calls([call("terminal", {"command": "touch made.txt"})]), text("ok")]
    )
    app = _app(server, tmp_path, "both")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        writes = DriverWrites(app)
        await _blur(pilot, app)
        app.prompt.load_text("make a file")
        app.prompt.submit()
        await wait_until(pilot, lambda: isinstance(app.screen, CommandApprovalScreen), timeout=15)
        await wait_until(pilot, lambda: writes.calls())
        title = f"hello-tui ({tmp_path.name})"
        body = "A command waits for your approval: touch made.txt"
        assert writes.calls() == [f"\x1b]9;{title}: {body}\a\a"]
        await _focus(pilot, app)
        await armed(pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        assert not (tmp_path / "made.txt").exists()
        assert len(writes.calls()) == 1


async def test_any_decision_modal_calls_once_when_it_appears_while_blurred(
    tmp_path, scripted_server, plain_terminal
):
    server = scripted_server([])
    app = _app(server, tmp_path, "bell")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        writes = DriverWrites(app)
        await _blur(pilot, app)
        answers: list[bool] = []
        app.push_screen(ConfirmScreen("Restore?", "Put the backup back?"), answers.append)
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await wait_until(pilot, lambda: writes.calls())
        assert writes.calls() == ["\a"]
        assert app.notifier.sent == ["A question waits for your answer."]
        app.screen.dismiss(False)
        await wait_until(pilot, lambda: answers == [False])
        assert writes.calls() == ["\a"]
