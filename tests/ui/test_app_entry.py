"""`run_tui(args)`: settings from the flags, a readable exit 2 on a configuration error,
--resume / --continue handed to the engine, and the palette's commands."""

from __future__ import annotations

from hello_tui.app import HelloApp, run_tui
from hello_tui.cli import build_parser
from hello_tui.core.display import ChatMessage
from hello_tui.store.sessions import SessionStore
from tests.ui.engine_double import fake_settings, make_app, wait_until


def test_configuration_error_exits_2_with_the_setting_named(tmp_path, capsys):
    args = build_parser().parse_args(["--repo", str(tmp_path / "missing")])
    assert run_tui(args) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_flags_reach_the_app_and_resume_reopens_the_session(tmp_path, monkeypatch):
    repo = tmp_path / "stats-demo"
    repo.mkdir()
    from hello_tui.config import load_settings

    store = SessionStore(load_settings(repo, environ={}).state)
    session = store.new()
    session.display = [
        ChatMessage("user", "earlier question"),
        ChatMessage("assistant", "earlier answer"),
    ]
    session.save()
    seen: dict = {}
    original_run = HelloApp.run

    async def pilot_script(pilot) -> None:
        app = pilot.app
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        await wait_until(pilot, lambda: app.chat.idle)
        seen["model"] = app.settings.model
        seen["max_steps"] = app.settings.max_steps
        seen["session"] = app.engine.session_id
        seen["chat"] = "\n".join(app.chat.history.plain_lines())
        app.exit(0)

    monkeypatch.setattr(
        HelloApp,
        "run",
        lambda self, *a, **k: original_run(
            self, headless=True, size=(120, 40), auto_pilot=pilot_script
        ),
    )
    args = build_parser().parse_args(
        [
            "--repo",
            str(repo),
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m-1",
            "--max-steps",
            "7",
            "--resume",
            session.id,
        ]
    )
    assert run_tui(args) == 0
    assert seen["model"] == "m-1" and seen["max_steps"] == 7
    assert seen["session"] == session.id
    assert "earlier question" in seen["chat"] and "earlier answer" in seen["chat"]


async def test_palette_offers_the_app_commands(tmp_path):
    app = make_app(fake_settings(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for title in (
            "Help",
            "Toggle sidebar",
            "Undo last patch",
            "Clear chat",
            "Resume session",
            "Plan",
        ):
            assert title in titles
        assert "Cancel turn" not in titles
        plan = next(c for c in app.get_system_commands(app.screen) if c.title == "Plan")
        plan.callback()
        assert app.prompt.text == ":plan "


async def test_undo_with_nothing_to_undo_says_so(tmp_path):
    app = make_app(fake_settings(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        await pilot.press(*"/undo", "enter")
        await wait_until(pilot, lambda: app.chat.idle)
        assert "Nothing to undo" in "\n".join(app.chat.history.plain_lines())
        await pilot.press(*"/resume", "enter")
        await wait_until(pilot, lambda: app.chat.idle)
        assert "No saved sessions yet." in "\n".join(app.chat.history.plain_lines())


async def test_the_user_configs_theme_is_applied_at_start(tmp_path):
    settings = fake_settings(tmp_path).with_changes(theme="nord")
    app = make_app(settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.theme == "nord"


async def test_an_unknown_theme_in_the_user_config_is_named_in_a_notice(tmp_path):
    settings = fake_settings(tmp_path).with_changes(theme="no-such-theme")
    app = make_app(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.chat.idle and app.chat.history.entries)
        default = HelloApp(fake_settings(tmp_path)).theme
        assert app.theme == default
        chat = "\n".join(e.text for e in app.chat.history.entries)
        assert "no-such-theme" in chat and "nord" in chat  # what it was, and what there is


async def test_a_state_change_arriving_as_the_app_closes_is_harmless(tmp_path):
    # The engine's ready message (or a turn's end) can come after the last screen is gone:
    # a user who quits at once must not meet an "unhandled error" on the way out.
    app = make_app(fake_settings(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
    assert not app.screen_stack
    app.set_state("idle")
    assert app.views.status.state == "idle"
