"""The daily features in the app, on the real engine and the scripted model server:
permission modes (shift+tab, the status bar, what each lets through), /model and its
picker, the session picker, /new and /clear, `!cmd`, /init, the help table."""

from __future__ import annotations

import pytest

from hello_tui.app import HelloApp
from hello_tui.engine.facade import CONTEXT_CLEARED
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.screens.command_table import SLASH_COMMANDS
from hello_tui.screens.help import HelpScreen
from hello_tui.screens.picker import OTHER_PROVIDERS, PickerScreen
from hello_tui.screens.review import PatchReviewScreen
from hello_tui.store.sessions import SessionStore
from tests.support.scripted_model import call, settings_for_server, text, tool_calls
from tests.ui.engine_double import armed, fake_settings, wait_until

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"


def _app(settings, **kwargs) -> HelloApp:
    return HelloApp(settings, preflight=False, clock=lambda: 0.0, **kwargs)


async def _ready(pilot, app: HelloApp) -> None:
    await wait_until(pilot, lambda: app.engine is not None, timeout=15)


async def _send(pilot, app: HelloApp, prompt: str) -> None:
    app.prompt.load_text(prompt)
    await pilot.press("enter")


def _chat(app: HelloApp) -> str:
    return "\n".join(app.chat.history.plain_lines())


async def test_shift_tab_cycles_the_mode_and_the_status_bar_follows(tmp_path, scripted_server):
    server = scripted_server([])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        assert app.status.mode == "ask"
        seen = []
        for _ in range(3):
            await pilot.press("shift+tab")
            seen.append((app.engine.mode, app.status.mode))
        assert seen == [
            ("auto-edit", "auto-edit"),
            ("read-only", "read-only"),
            ("ask", "ask"),
        ]
        assert app.focused is app.prompt  # the key did not move the focus
        rendered = str(app.status.render())
        assert "sandbox:" in rendered and "ask" in rendered


async def test_auto_edit_in_the_app_applies_without_the_review(tmp_path, scripted_server):
    (tmp_path / "a.txt").write_text("one\n")
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("done")])
    app = _app(settings_for_server(server, tmp_path, mode="auto-edit"))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        assert app.status.mode == "auto-edit"
        await _send(pilot, app, "make it loud")
        while app.turn_running:
            assert not isinstance(app.screen, PatchReviewScreen)
            await pilot.pause(0.05)
        assert (tmp_path / "a.txt").read_text() == "ONE\n"
        chat = _chat(app)
        assert "Applied without review" in chat and "+ONE" in chat


async def test_read_only_in_the_app_writes_nothing(tmp_path, scripted_server):
    (tmp_path / "a.txt").write_text("one\n")
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("a plan")])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "/mode plan")
        assert app.status.mode == "read-only"
        await _send(pilot, app, "make it loud")
        while app.turn_running:
            assert not isinstance(app.screen, PatchReviewScreen)
            await pilot.pause(0.05)
        assert (tmp_path / "a.txt").read_text() == "one\n"
        assert "read-only (plan) mode" in server.chat_requests[0]["messages"][0]["content"]


async def test_ask_mode_in_the_app_still_opens_the_review(tmp_path, scripted_server):
    (tmp_path / "a.txt").write_text("one\n")
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("done")])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "make it loud")
        await wait_until(pilot, lambda: isinstance(app.screen, PatchReviewScreen), timeout=15)
        await pilot.press("shift+tab")  # the review's own key: the mode does not change
        assert app.engine.mode == "ask"


async def test_model_name_switches_and_the_status_bar_follows(tmp_path, scripted_server):
    server = scripted_server([text("hello")])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "/model gpt-4o")
        assert app.status.model == "gpt-4o" and app.engine.model == "gpt-4o"
        assert server.chat_requests == []  # not sent to the model as a task
        await _send(pilot, app, "hi there")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        assert server.chat_requests[-1]["model"] == "gpt-4o"


async def test_model_picker_lists_the_endpoint_and_recent_models(tmp_path, scripted_server):
    server = scripted_server([], models=["scripted-model", "big-model", "small-model"])
    settings = settings_for_server(server, tmp_path)
    store = SessionStore(settings.state)
    old = store.new()
    old.model = "yesterdays-model"
    old.save()
    app = _app(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "/model")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen))
        await armed(pilot)  # a picker takes keys once it has armed
        picker = app.screen
        await wait_until(pilot, lambda: any(i.value == "big-model" for i in picker.items))
        groups = {i.value: i.group for i in picker.items}
        assert groups["scripted-model"] == "in use"
        assert groups["yesterdays-model"] == "recent"
        assert groups["small-model"] == "endpoint"
        # Other providers' defaults are listed, in one group; each row names its provider.
        assert groups["deepseek-chat"] == OTHER_PROVIDERS
        assert next(i.detail for i in picker.items if i.value == "deepseek-chat") == "deepseek"
        await pilot.press(*"small")
        assert [i.value for i in picker.shown] == ["small-model"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, PickerScreen))
        assert app.engine.model == "small-model" and app.status.model == "small-model"


async def test_picking_another_providers_model_explains_instead_of_switching(
    tmp_path, scripted_server
):
    server = scripted_server([])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "/model")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen))
        await armed(pilot)  # a picker takes keys once it has armed
        picker = app.screen
        await wait_until(pilot, lambda: any(i.value == "deepseek-chat" for i in picker.items))
        await pilot.press(*"deepseek-chat", "enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, PickerScreen))
        assert app.engine.model == "scripted-model"
        assert "DEEPSEEK_API_KEY" in _chat(app)


async def test_session_picker_filters_marks_the_current_and_resumes(tmp_path, scripted_server):
    server = scripted_server([text("first answer"), text("second answer")])
    settings = settings_for_server(server, tmp_path)
    app = _app(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "explain the parser")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        first = app.engine.session_id
        await _send(pilot, app, "/new")
        await wait_until(pilot, lambda: app.engine.session_id != first)
        assert "explain the parser" not in _chat(app)
        await _send(pilot, app, "fix the tests")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        await _send(pilot, app, "/resume")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen))
        await armed(pilot)  # a picker takes keys once it has armed
        picker = app.screen
        titles = [(i.label, i.current) for i in picker.shown]
        assert titles == [("fix the tests", True), ("explain the parser", False)]
        assert "1 turn" in picker.shown[0].detail and "scripted-model" in picker.shown[0].detail
        await pilot.press(*"parser")
        assert [i.label for i in picker.shown] == ["explain the parser"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.engine.session_id == first)
        await wait_until(pilot, lambda: "first answer" in _chat(app))


async def test_session_picker_arrows_and_escape(tmp_path, scripted_server):
    server = scripted_server([text("one"), text("two")])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "alpha")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        first = app.engine.session_id
        await _send(pilot, app, "/new")
        await wait_until(pilot, lambda: app.engine.session_id != first)
        await _send(pilot, app, "beta")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        await _send(pilot, app, "/resume")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen))
        await armed(pilot)  # a picker takes keys once it has armed
        await pilot.press("escape")
        assert not isinstance(app.screen, PickerScreen) and app.engine.session_id != first
        await _send(pilot, app, "/resume")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen))
        await armed(pilot)  # a picker takes keys once it has armed
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: app.engine.session_id == first)


async def test_resume_flag_without_an_id_opens_the_picker(tmp_path, scripted_server):
    server = scripted_server([])
    settings = settings_for_server(server, tmp_path)
    saved = SessionStore(settings.state).new()
    saved.save()
    app = _app(settings, resume="")
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        # On the stack is not yet on screen: wait for its list to be filled.
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen) and app.screen.shown)
        assert saved.id in [i.value for i in app.screen.items]


async def test_clear_empties_the_models_context_with_a_divider(tmp_path, scripted_server):
    server = scripted_server([text("the secret is 42"), text("I do not know")])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "remember 42")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        await _send(pilot, app, "/clear")
        await wait_until(pilot, lambda: "context cleared" in _chat(app))
        assert "the secret is 42" not in _chat(app)
        # The session's record keeps the chat above the divider, for a resume.
        record = [e.text for e in app.engine.display()]
        assert record.index("remember 42") < record.index(CONTEXT_CLEARED)
        await _send(pilot, app, "what was the number?")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        sent = str(server.chat_requests[-1]["messages"])
        assert "remember 42" not in sent and "the secret is 42" not in sent


async def test_bang_runs_a_read_only_command_at_once_into_the_context(tmp_path, scripted_server):
    (tmp_path / "notes.txt").write_text("hello\n")
    server = scripted_server([text("I saw notes.txt")])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "!ls")
        await wait_until(pilot, lambda: "notes.txt" in _chat(app), timeout=15)
        assert server.chat_requests == []  # the model was not called for it
        await wait_until(pilot, lambda: not app.turn_running)
        await _send(pilot, app, "what did you see?")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        sent = str(server.chat_requests[-1]["messages"])
        assert "I ran `ls` myself" in sent and "notes.txt" in sent


async def test_bang_asks_before_a_command_that_writes(tmp_path, scripted_server):
    server = scripted_server([])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "!touch made.txt")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandApprovalScreen), timeout=15)
        await armed(pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        assert not (tmp_path / "made.txt").exists()
        assert "declined" in _chat(app)


async def test_init_proposes_agents_md_through_the_review(tmp_path, scripted_server):
    (tmp_path / "main.py").write_text("print('hi')\n")
    patch = (
        "*** Begin Patch\n*** Add File: AGENTS.md\n+# Agents\n+Run python main.py.\n*** End Patch\n"
    )
    server = scripted_server([tool_calls([call("apply_patch", {"patch": patch})]), text("done")])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "/init")
        await wait_until(pilot, lambda: isinstance(app.screen, PatchReviewScreen), timeout=15)
        assert [f.path for f in app.screen.plan.files] == ["AGENTS.md"]
        assert "AGENTS.md" in server.chat_requests[0]["messages"][-1]["content"]
        assert not (tmp_path / "AGENTS.md").exists()  # nothing before the user accepts


async def test_help_is_generated_from_the_table_and_the_real_bindings(tmp_path, scripted_server):
    server = scripted_server([])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        page = app.help_text()
        for command in SLASH_COMMANDS:
            assert command.usage in page
        assert "/resume [ID]" in page
        for binding in PatchReviewScreen.BINDINGS:
            if binding.description:
                assert (binding.tooltip or binding.description) in page
        assert "Cycle the permission mode" in page
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)


def test_every_table_command_has_a_handler_and_every_handler_is_listed(tmp_path):
    app = _app(fake_settings(tmp_path))
    assert set(app.prompt_ctl.commands) == {c.name for c in SLASH_COMMANDS}
    handlers = dict(app.prompt_ctl.commands)
    with pytest.raises(ValueError, match="without a handler"):
        app.prompt_ctl.set_commands({k: v for k, v in handlers.items() if k != "undo"})
    with pytest.raises(ValueError, match="not listed"):
        app.prompt_ctl.set_commands({**handlers, "nope": handlers["undo"]})


async def test_slash_commands_complete_as_you_type_with_their_help(tmp_path, scripted_server):
    server = scripted_server([])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await pilot.press("/")
        assert app.completion.shown
        assert {s.value for s in app.completion.suggestions} == {c.name for c in SLASH_COMMANDS}
        await pilot.press("r")
        assert [s.value for s in app.completion.suggestions] == ["resume", "redo"]
        assert "saved session" in app.completion.suggestions[0].help
        await pilot.press("down", "tab")
        assert app.prompt.text == "/redo " and not app.completion.shown
        app.prompt.load_text("")
        await pilot.press(*"/mo")
        await pilot.press("escape")
        assert not app.completion.shown and app.prompt.text == "/mo"


async def test_at_completes_repo_files_and_attaches_the_chosen_one(tmp_path, scripted_server):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "stats.py").write_text("def mean(values):\n    return 42\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "stats_old.py").write_text("old\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-secret\n")
    server = scripted_server([text("seen")])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await wait_until(pilot, lambda: app.engine.file_index().ready)
        await pilot.press(*"look at @sta")
        assert [s.value for s in app.completion.suggestions] == ["src/stats.py"]
        await pilot.press("enter")  # takes the suggestion, does not send
        assert app.prompt.text == "look at @src/stats.py " and server.chat_requests == []
        assert app.chips.paths == ["src/stats.py"]
        await pilot.press(*"please")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        sent = server.chat_requests[-1]["messages"][-1]["content"]
        assert sent.startswith("look at @src/stats.py please")
        assert "Attached file `src/stats.py`" in sent and "return 42" in sent
        assert "📎 Attached: src/stats.py" in _chat(app)
        app.prompt.load_text("")
        await pilot.press("@")
        offered = [s.value for s in app.completion.suggestions]
        assert "src/stats.py" in offered and ".gitignore" in offered
        assert "build/stats_old.py" not in offered and ".env" not in offered


async def test_without_a_key_the_setup_opens_nothing_is_sent_and_a_key_can_be_saved(tmp_path):
    from hello_tui.screens.setup_help import SetupHelpScreen
    from hello_tui.userconfig import config_path
    from tests.ui.engine_double import Script, fake_settings, make_app

    script = Script()
    app = make_app(fake_settings(tmp_path, configured=False), script)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SetupHelpScreen))
        text = (
            app.screen.query_one("#setup-intro").source + app.screen.query_one("#setup-text").source
        )
        assert "DEEPSEEK_API_KEY" in text and "config.toml" in text and "hello-tui demo" in text
        await armed(pilot)  # a decision modal: keys count once it has armed
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        await _send(pilot, app, "fix the bug")
        await pilot.pause()
        assert script.received == []  # no provider is called without a key
        assert isinstance(app.screen, SetupHelpScreen)  # the dialog comes back
        assert "nothing was sent" in _chat(app)
        assert app.prompt.text == "fix the bug"  # the words are kept
        await armed(pilot)
        await pilot.press("escape")
        await _send(pilot, app, "/setup")
        assert isinstance(app.screen, SetupHelpScreen)
        await armed(pilot)
        await pilot.press(*"sk-test-1234567890")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.engine is not None and app.settings.api_key, 15)
        assert app.settings.model_configured and app.status.model == "gpt-4o-mini"
        path = config_path()
        assert (path.stat().st_mode & 0o777) == 0o600
        assert 'openai = "sk-test-1234567890"' in path.read_text()


async def test_the_palettes_screenshot_goes_to_the_state_folder(tmp_path, scripted_server):
    server = scripted_server([])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await _ready(pilot, app)
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "Screenshot")
        command.callback()
        folder = tmp_path / ".helloagents" / "screenshots"
        await wait_until(pilot, lambda: folder.is_dir() and any(folder.glob("*.svg")))


async def test_the_users_own_command_is_announced_as_theirs(tmp_path, scripted_server):
    server = scripted_server([tool_calls([call("terminal", {"command": "touch by-agent"})])])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "!touch x")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandApprovalScreen), timeout=15)
        title = str(app.screen.query_one("#command-title").content)
        assert "you" in title.lower() and "agent" not in title.lower()
        await armed(pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        await _send(pilot, app, "make it")  # the agent's own command is the agent's
        await wait_until(pilot, lambda: isinstance(app.screen, CommandApprovalScreen), timeout=15)
        title = str(app.screen.query_one("#command-title").content)
        assert title == "The agent wants to run a command"


def _help_row(page: str, first_cell: str) -> str:
    return next(line for line in page.splitlines() if line.startswith(f"| {first_cell} |"))


def test_help_says_what_clear_and_ctrl_c_really_do(tmp_path):
    page = _app(fake_settings(tmp_path)).help_text()
    clear = _help_row(page, "`/clear`")
    assert "new session" not in clear and "divider" in clear
    ctrl_c = _help_row(page, "ctrl+c")
    assert "interrupt" in ctrl_c.lower() and "twice" in ctrl_c and "| Quit |" not in ctrl_c
    assert "ctrl+c twice" in _help_row(page, "ctrl+q")


def test_every_main_screen_key_is_in_the_help_with_its_binding(tmp_path):
    from hello_tui.screens.command_table import binding_rows

    app = _app(fake_settings(tmp_path))
    page = app.help_text()
    for keys, action in binding_rows(app.BINDINGS):
        assert f"| {keys} | {action} |" in page


async def test_new_and_clear_reset_the_step_and_context_counts(tmp_path, scripted_server):
    server = scripted_server([text("one"), text("two")])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _ready(pilot, app)
        await _send(pilot, app, "alpha")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        assert app.status.step >= 1 and app.status.context is not None
        await _send(pilot, app, "/clear")
        await wait_until(pilot, lambda: "context cleared" in _chat(app))
        assert app.status.step == 0 and app.status.context is None
        await _send(pilot, app, "beta")
        await wait_until(pilot, lambda: not app.turn_running, timeout=15)
        assert app.status.step >= 1 and app.status.context is not None
        first = app.engine.session_id
        await _send(pilot, app, "/new")
        await wait_until(pilot, lambda: app.engine.session_id != first)
        await wait_until(pilot, lambda: "New session" in _chat(app))
        assert app.status.step == 0 and app.status.context is None
