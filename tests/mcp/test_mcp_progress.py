"""MCP start-up and long tools report progress: typed events from the engine, shown by exec,
sent as ACP updates, drawn by the app. Real SDK servers over stdio."""

from __future__ import annotations

import json

from hello_tui.acp.updates import EventUpdates
from hello_tui.core import events as ev
from hello_tui.core.events import McpStartup, ToolCallFinished, ToolCallStarted, ToolProgress
from hello_tui.mcp import McpServerConfig
from tests.engine.agent_kit import collect, of, open_engine
from tests.mcp.conftest import (
    AskedApprover,
    run_exec,
    stdio_config,
    stdio_definition,
    write_mcp_json,
)
from tests.support.scripted_model import call, text, tool_calls

GUARD = 120


async def test_servers_starting_are_reported_before_the_first_model_call(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("fine")])
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers(
        [
            stdio_config("slow", extra_args=("--slow-start", "0.5")),
            McpServerConfig(name="ghost", command="no-such-program-anywhere", source="client"),
        ]
    )
    try:
        events = await collect(engine, "summarise the repo")
    finally:
        await engine.aclose()
    startup = of(events, McpStartup)
    assert startup[0].phase == "starting" and startup[0].servers == ["slow", "ghost"]
    assert startup[0].text == "starting 2 MCP servers: slow, ghost"
    by_server = {e.server: e for e in startup[1:]}
    assert by_server["slow"].phase == "ready" and by_server["slow"].detail == "12 tools"
    assert by_server["ghost"].phase == "failed" and by_server["ghost"].detail
    assert "MCP server 'ghost' failed: " in by_server["ghost"].text
    assert sorted(e.ended for e in startup[1:]) == [1, 2] and {e.total for e in startup} == {2}
    # All of it before the turn began talking to the model.
    first_turn_event = events.index(of(events, ev.TurnStarted)[0])
    assert max(events.index(e) for e in startup) < first_turn_event


async def test_a_server_that_never_answers_is_reported_as_timed_out(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("fine")])
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.mcp.start_timeout = 0.5
    engine.add_mcp_servers([stdio_config("mute", extra_args=("--slow-start", "3600"))])
    try:
        events = await collect(engine, "summarise the repo")
    finally:
        await engine.aclose()
    starting, mute = of(events, McpStartup)
    assert starting.text == "starting 1 MCP server: mute"
    assert mute.phase == "timed_out"
    assert mute.text == "MCP server 'mute' timed out: did not answer within 0.5 s"
    assert isinstance(events[-1], ev.TurnFinished)


async def test_a_long_tool_reports_its_progress_while_it_runs(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server(
        [tool_calls([call("mcp__demo__progress", {"steps": 3}, id="p1")]), text("done")]
    )
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers([stdio_config()])
    try:
        events = await collect(engine, "work")
    finally:
        await engine.aclose()
    reports = of(events, ToolProgress)
    assert [(p.progress, p.total, p.message) for p in reports] == [
        (1, 3, "step 1 of 3"),
        (2, 3, "step 2 of 3"),
        (3, 3, "step 3 of 3"),
    ]
    assert {p.call_id for p in reports} == {"p1"}
    assert reports[0].text == "1 of 3 (33%): step 1 of 3"
    started = events.index(of(events, ToolCallStarted)[0])
    finished = events.index(of(events, ToolCallFinished)[0])
    assert all(started < events.index(p) < finished for p in reports)
    assert of(events, ToolCallFinished)[0].text == "did 3 steps"


def test_exec_prints_start_up_and_progress_on_stderr(tmp_path, scripted_server):
    write_mcp_json(tmp_path, {"demo": stdio_definition()})
    server = scripted_server(
        [tool_calls([call("mcp__demo__progress", {"steps": 2})]), text("done")]
    )
    proc = run_exec(tmp_path, server, "--yes", "work")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
    lines = proc.stderr.splitlines()
    assert "mcp: starting 1 MCP server: demo" in lines
    assert "mcp: MCP server 'demo' ready, 12 tools" in lines
    assert "  mcp__demo__progress: 1 of 2 (50%): step 1 of 2" in lines
    assert "  mcp__demo__progress: 2 of 2 (100%): step 2 of 2" in lines

    server = scripted_server(
        [tool_calls([call("mcp__demo__progress", {"steps": 1})]), text("done")]
    )
    proc = run_exec(tmp_path, server, "--yes", "--json", "work")
    kinds = [json.loads(line)["type"] for line in proc.stdout.splitlines()]
    assert kinds[:2] == ["McpStartup", "McpStartup"] and "ToolProgress" in kinds


def test_acp_updates_show_start_up_as_a_tool_call_and_progress_as_its_content(tmp_path):
    updates = EventUpdates(tmp_path)
    started = updates.updates(
        McpStartup(phase="starting", servers=["a", "b"], total=2, text="starting 2 MCP servers")
    )
    first = updates.updates(
        McpStartup(phase="ready", server="a", ended=1, total=2, text="MCP server 'a' ready")
    )
    last = updates.updates(
        McpStartup(phase="timed_out", server="b", ended=2, total=2, text="MCP server 'b' timed out")
    )
    [start], [one], [two] = started, first, last
    assert start.title == "Starting MCP servers: a, b" and start.status == "in_progress"
    assert one.tool_call_id == two.tool_call_id == start.tool_call_id
    assert one.status == "in_progress" and two.status == "completed"
    assert two.content[0].content.text == "MCP server 'a' ready\nMCP server 'b' timed out"
    [progress] = updates.updates(
        ToolProgress(call_id="c9", tool="mcp__x__y", progress=1, total=4, text="1 of 4 (25%)")
    )
    assert progress.tool_call_id == "c9" and progress.content[0].content.text == "1 of 4 (25%)"
