"""The MCP approval modals (a tool call, a repo server's start) through the TUI approver."""

from __future__ import annotations

from typing import Any

import pytest
from textual import work
from textual.app import App
from textual.widgets import Static

from hello_tui.core.approval import ServerStartRequest, ToolCallRequest
from hello_tui.screens.approver import TuiApprover
from hello_tui.screens.mcp_approval import ServerApprovalScreen, ToolApprovalScreen
from tests.ui.engine_double import armed

CALL = ToolCallRequest("time", "get_current_time", {"timezone": "Europe/Oslo"}, "What time.")
START = ServerStartRequest(
    "time", ".mcp.json", "uvx mcp-server-time", ("TZ",), header_names=("X-Api-Key",)
)


class _ApproverApp(App[Any]):
    def __init__(self) -> None:
        super().__init__()
        self.approver = TuiApprover(self)
        self.answers: list[Any] = []

    @work(exclusive=True, group="turn")
    async def ask_tool(self) -> None:
        self.answers.append(await self.approver.approve_tool_call(CALL))

    @work(exclusive=True, group="turn")
    async def ask_server(self) -> None:
        self.answers.append(await self.approver.approve_server(START))


@pytest.mark.parametrize(
    ("key", "verdict"),
    [("y", "once"), ("a", "session"), ("r", "always"), ("n", "deny"), ("escape", "deny")],
)
async def test_a_tool_call_is_answered_with_one_key(key, verdict):
    app = _ApproverApp()
    async with app.run_test(size=(100, 30)) as pilot:
        app.ask_tool()
        await pilot.pause()
        assert isinstance(app.screen, ToolApprovalScreen)
        shown = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "get_current_time" in shown and "'time'" in shown and "Europe/Oslo" in shown
        await armed(pilot)
        await pilot.press(key)
        await app.workers.wait_for_complete()
    assert app.answers == [verdict]


async def test_enter_on_the_focused_button_denies():
    app = _ApproverApp()
    async with app.run_test(size=(100, 30)) as pilot:
        app.ask_tool()
        await pilot.pause()
        await armed(pilot)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
    assert app.answers == ["deny"]


@pytest.mark.parametrize(("key", "verdict"), [("y", "once"), ("r", "always"), ("escape", "deny")])
async def test_a_repo_server_start_is_answered_with_one_key(key, verdict):
    app = _ApproverApp()
    async with app.run_test(size=(100, 30)) as pilot:
        app.ask_server()
        await pilot.pause()
        assert isinstance(app.screen, ServerApprovalScreen)
        shown = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "uvx mcp-server-time" in shown and ".mcp.json" in shown and "TZ" in shown
        assert "sends the HTTP headers X-Api-Key" in shown
        await armed(pilot)
        await pilot.press(key)
        await app.workers.wait_for_complete()
    assert app.answers == [verdict]


async def test_the_app_asks_for_a_repo_server_then_for_the_call_and_lists_it(
    tmp_path, scripted_server
):
    from hello_tui.app import HelloApp
    from tests.mcp.conftest import stdio_definition, write_mcp_json
    from tests.support.scripted_model import call, settings_for_server, text, tool_calls
    from tests.ui.engine_double import armed, wait_until

    repo = tmp_path / "repo"
    repo.mkdir()
    write_mcp_json(repo, {"demo": stdio_definition()})
    server = scripted_server(
        [tool_calls([call("mcp__demo__add", {"a": 4, "b": 5})]), text("Nine it is.")]
    )
    app = HelloApp(settings_for_server(server, repo), preflight=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        app.handle_input("add 4 and 5 with the demo server")
        await wait_until(pilot, lambda: isinstance(app.screen, ServerApprovalScreen), timeout=20)
        await armed(pilot)
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolApprovalScreen), timeout=30)
        await armed(pilot)
        await pilot.press("y")
        await wait_until(pilot, lambda: not app.turn_running, timeout=30)
        [request] = [r for r in server.chat_requests[1]["messages"] if r["role"] == "tool"]
        assert request["content"] == "9"
        app.handle_input("/mcp")
        await wait_until(pilot, lambda: app.chat.idle)
        shown = "\n".join(app.chat.history.plain_lines())
        assert "demo [stdio, repo, .mcp.json]: running" in shown
        assert "mcp__demo__add" in shown


@pytest.mark.real_arming  # typing while the modal arms, on the real clock
async def test_keys_typed_before_the_modal_armed_never_answer_it():
    from tests.ui.arming_keys import ManualClock, deliver, keys

    app = _ApproverApp()
    clock = ManualClock()  # time moves only when this test says: nothing races a timer
    app.arming_clock = clock
    async with app.run_test(size=(100, 30)) as pilot:
        app.ask_tool()
        await pilot.pause()
        assert isinstance(app.screen, ToolApprovalScreen) and not app.screen.armed
        await deliver(pilot, keys("yar", clock.now()))  # typed for the prompt, not for this modal
        await clock.advance(0.3)
        assert isinstance(app.screen, ToolApprovalScreen) and app.answers == []
        assert not app.screen.armed  # each key restarted the wait
        await clock.advance(0.5)
        assert app.screen.armed
        await deliver(pilot, keys("n", clock.now()))
        await clock.advance(0.5)
        await app.workers.wait_for_complete()
    assert app.answers == ["deny"]
