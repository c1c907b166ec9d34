"""The app shows MCP servers starting in its status bar and a long tool's progress in its
trace row (a real SDK server over stdio, the scripted model)."""

from __future__ import annotations

import json

from hello_tui.app import HelloApp
from hello_tui.screens.main.engine_events import MCP_STARTING
from hello_tui.screens.mcp_approval import ToolApprovalScreen
from tests.mcp.conftest import stdio_definition, write_user_config
from tests.support.scripted_model import call, settings_for_server, text, tool_calls
from tests.ui.engine_double import armed, wait_until


class StateLog(HelloApp):
    """The app as it is, remembering every turn state its status bar showed."""

    states: list[str]

    def set_state(self, state: str) -> None:
        self.__dict__.setdefault("states", []).append(state)
        super().set_state(state)


async def test_start_up_in_the_status_bar_and_progress_in_the_trace(tmp_path, scripted_server):
    definition = stdio_definition("--slow-start", "0.3")
    write_user_config(
        "[mcp_servers.demo]\n"
        f"command = {json.dumps(definition['command'])}\n"
        f"args = {json.dumps(definition['args'])}\n"
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    server = scripted_server(
        [tool_calls([call("mcp__demo__progress", {"steps": 3}, id="p1")]), text("done")]
    )
    app = StateLog(settings_for_server(server, repo), preflight=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        app.prompt.load_text("work")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ToolApprovalScreen), timeout=60)
        await armed(pilot)
        await pilot.press("y")  # the call, once
        await wait_until(pilot, lambda: not app.turn_running and app.trace.rows, timeout=60)
        [row] = [r for r in app.trace.rows if r.record.tool == "mcp__demo__progress"]
        live = row.record.live_output
    assert f"{MCP_STARTING} 0/1" in app.states
    assert app.states.index(f"{MCP_STARTING} 0/1") < app.states.index("running a tool")
    assert "1 of 3 (33%): step 1 of 3\n" in live and "3 of 3 (100%): step 3 of 3\n" in live
