"""The first ten minutes without a key: the setup dialog shows the demo and the form at
80×24, "local server" probes the usual ports off the loop and saves the URL that
answered, and closing the dialog leaves a hint in the chat."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select

from hello_tui.app import HelloApp
from hello_tui.config import load_settings
from hello_tui.screens.setup_help import SetupHelpScreen
from hello_tui.userconfig import config_path, load
from tests.support.scripted_model import text
from tests.ui.engine_double import armed, fake_settings, make_app, wait_until


def _chat(app) -> str:
    return "\n".join(app.chat.history.plain_lines())


def _visible(app) -> str:
    """The screen's text as the terminal shows it (what is scrolled away is not in it)."""
    return app.export_screenshot().replace("&#160;", " ")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_demo_and_the_form_are_in_view(tmp_path, size):
    app = make_app(fake_settings(tmp_path, configured=False))
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupHelpScreen))
        await pilot.pause()
        shown = _visible(app)
        assert "hello-tui demo" in shown
        assert "Save" in shown and "OpenAI" in shown
        save = app.screen.query_one("#setup-save")
        assert save.region.bottom <= size[1] - 1  # above the footer


async def test_closing_the_setup_says_how_to_go_on(tmp_path):
    app = make_app(fake_settings(tmp_path, configured=False))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupHelpScreen))
        await armed(pilot)  # a decision modal: keys count once it has armed
        await pilot.press("escape")
        await wait_until(pilot, lambda: "/setup" in _chat(app))
        chat = _chat(app)
        assert "No model is configured" in chat and "hello-tui demo" in chat


async def test_a_local_server_found_by_the_probe_is_saved_and_used(tmp_path, scripted_server):
    from hello_tui.llm.local_servers import probe_local_servers

    server = scripted_server([text("hello from the local model")], models=["coder-7b"])
    repo = tmp_path / "repo"
    repo.mkdir()
    app = HelloApp(load_settings(repo, environ={}), preflight=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupHelpScreen), timeout=15)
        screen = app.screen
        # The usual ports are this machine's business: ask the test's server instead.
        screen.probe = lambda: probe_local_servers(((server.port, "llama.cpp"),))
        screen.query_one("#setup-provider", Select).value = "local"
        await wait_until(pilot, lambda: screen.servers, timeout=15)
        await pilot.pause()
        shown = _visible(app)
        assert f"Found llama.cpp at {server.base_url}: coder-7b" in shown
        assert screen.query_one("#setup-key", Input).value == server.base_url
        assert screen.query_one("#setup-model", Input).value == "coder-7b"
        await armed(pilot)
        await pilot.click("#setup-save")
        # The engine the app started without a model is there all along: what says the
        # choice was saved and taken up is the app's settings, then a new engine for them.
        await wait_until(pilot, lambda: app.settings.base_url == server.base_url, 15)
        await wait_until(pilot, lambda: app.engine is not None and not app.turn_running, 15)
        assert app.settings.base_url == server.base_url and app.settings.model == "coder-7b"
        assert app.settings.model_configured
        saved = load(config_path())
        assert saved["base_url"] == server.base_url and saved["model"] == "coder-7b"
        assert "custom" not in saved.get("keys", {})
        app.prompt.load_text("hi")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "hello from the local model" in _chat(app), timeout=20)
        assert "coder-7b" in app.status.render().plain


async def test_no_local_server_says_which_ports_were_asked(tmp_path):
    from hello_tui.llm.local_servers import probe_local_servers

    app = make_app(fake_settings(tmp_path, configured=False))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupHelpScreen))
        screen = app.screen
        screen.probe = lambda: probe_local_servers(((9, "llama.cpp"),), timeout=0.2)
        screen.query_one("#setup-provider", Select).value = "local"
        await wait_until(pilot, lambda: screen.servers, timeout=15)
        await pilot.pause()
        status = str(screen.query_one("#setup-probe").render())
        assert status.startswith("No local server answered. Asked ports 9")
        await pilot.click("#setup-save")
        await pilot.pause()
        assert "base URL" in str(screen.query_one("#setup-error").render())
        assert isinstance(app.screen, SetupHelpScreen)
