"""MCP servers through the engine facade: real servers (stdio and streamable HTTP on
127.0.0.1), the scripted model calling their tools, approvals asked and remembered."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal

from hello_tui.core.events import Notice, ToolCallFinished, TurnCancelled, TurnFinished
from hello_tui.mcp import McpServerConfig
from tests.engine.agent_kit import collect, of, open_engine
from tests.mcp.conftest import (
    TOKEN,
    AskedApprover,
    NeverAsked,
    stdio_config,
    stdio_definition,
    write_mcp_json,
    write_user_config,
)
from tests.support.scripted_model import call, text, tool_calls


def offered(request: dict) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


def tool_result(request: dict) -> str:
    return next(m["content"] for m in reversed(request["messages"]) if m["role"] == "tool")


async def test_tools_are_offered_and_an_approved_call_is_answered(
    tmp_path, scripted_server, model_settings
):
    write_user_config(
        "[mcp_servers.demo]\n"
        f"command = {json.dumps(stdio_definition()['command'])}\n"
        f"args = {json.dumps(stdio_definition()['args'])}\n"
    )
    server = scripted_server(
        [tool_calls([call("mcp__demo__add", {"a": 2, "b": 3})]), text("It is 5.")]
    )
    approver = AskedApprover(tool="once")
    engine = await open_engine(model_settings(tmp_path, server), approver=approver)
    try:
        events = await collect(engine, "add 2 and 3 with the demo server")
        first = server.chat_requests[0]
        assert {"mcp__demo__add", "mcp__demo__shout", "mcp__demo__refuse"} <= set(offered(first))
        schema = next(t for t in first["tools"] if t["function"]["name"] == "mcp__demo__add")
        assert schema["function"]["parameters"]["required"] == ["a", "b"]
        assert schema["function"]["description"] == "Add two whole numbers."
        [asked] = approver.tool_requests
        assert (asked.server, asked.tool, asked.arguments) == ("demo", "add", {"a": 2, "b": 3})
        [finished] = of(events, ToolCallFinished)
        assert finished.status == "success" and finished.text == "5"
        assert tool_result(server.chat_requests[1]) == "5"
        assert isinstance(events[-1], TurnFinished) and events[-1].answer == "It is 5."
        [state] = engine.mcp_servers()
        assert (state.name, state.state, state.source) == ("demo", "running", "user")
        assert "mcp__demo__add" in {t.function for t in state.tools if t.offered}
    finally:
        await engine.aclose()
    assert engine.mcp_servers()[0].state == "closed"


async def test_a_denied_call_never_reaches_the_server(tmp_path, scripted_server, model_settings):
    target = tmp_path / "touched.txt"
    server = scripted_server(
        [tool_calls([call("mcp__demo__touch", {"path": str(target)})]), text("Not done.")]
    )
    engine = await open_engine(
        model_settings(tmp_path, server), approver=AskedApprover(tool="deny")
    )
    engine.add_mcp_servers([stdio_config()])
    try:
        events = await collect(engine, "touch the file")
        [finished] = of(events, ToolCallFinished)
        assert finished.status == "error"
        assert "declined" in tool_result(server.chat_requests[1])
        assert not target.exists()
        assert isinstance(events[-1], TurnFinished)
    finally:
        await engine.aclose()


async def test_an_is_error_result_goes_back_as_an_error(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [
            tool_calls([call("mcp__demo__refuse", {"reason": "no stock"})]),
            tool_calls([call("mcp__demo__weather", {"city": "Oslo"})]),
            text("Done."),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers([stdio_config()])
    try:
        events = await collect(engine, "try both")
        refused, weather = of(events, ToolCallFinished)
        assert refused.status == "error" and "refused: no stock" in refused.text
        assert "refused: no stock" in tool_result(server.chat_requests[1])
        assert weather.status == "success"
        assert weather.data["structured_content"] == {"city": "Oslo", "celsius": 21}
        assert json.loads(tool_result(server.chat_requests[2])) == {"city": "Oslo", "celsius": 21}
    finally:
        await engine.aclose()


async def test_a_server_that_crashes_mid_session_loses_its_tools_and_the_session_goes_on(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server(
        [
            tool_calls([call("mcp__demo__add", {"a": 1, "b": 1})]),
            tool_calls([call("mcp__demo__die", {})]),
            text("The server is gone."),
            text("Still here."),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers([stdio_config()])
    try:
        events = await collect(engine, "add, then stop the server")
        added, died = of(events, ToolCallFinished)
        assert added.status == "success" and died.status == "error"
        assert "stopped" in died.text and "no longer available" in died.text
        assert any("demo" in n.text and "stopped" in n.text for n in of(events, Notice))
        assert isinstance(events[-1], TurnFinished)
        assert "mcp__demo__add" in offered(server.chat_requests[1])
        assert not [n for n in offered(server.chat_requests[2]) if n.startswith("mcp__")]
        [state] = engine.mcp_servers()
        assert state.state == "crashed" and state.tools == ()
        more = await collect(engine, "summarise the repo")
        assert isinstance(more[-1], TurnFinished) and more[-1].answer == "Still here."
        assert not [n for n in offered(server.chat_requests[3]) if n.startswith("mcp__")]
    finally:
        await engine.aclose()


async def test_a_repo_server_is_refused_until_approved_and_then_remembered(
    tmp_path, scripted_server, model_settings
):
    marker = tmp_path.parent / f"{tmp_path.name}-marker.txt"
    write_mcp_json(tmp_path, {"demo": stdio_definition(env={"DEMO_MARKER": str(marker)})})
    server = scripted_server([text("one"), text("two"), text("three"), text("four")])
    settings = model_settings(tmp_path, server)

    refuser = AskedApprover(server="deny")
    engine = await open_engine(settings, approver=refuser)
    try:
        events = await collect(engine, "summarise the repo")
        [asked] = refuser.server_requests
        assert asked.server == "demo" and asked.origin == ".mcp.json"
        assert str(marker) not in asked.summary and asked.env_names == ("DEMO_MARKER",)
        assert not marker.exists()
        assert not [n for n in offered(server.chat_requests[0]) if n.startswith("mcp__")]
        assert any("not approved" in n.text for n in of(events, Notice))
        assert engine.mcp_servers()[0].state == "not approved"
        await collect(engine, "summarise the repo again")
        assert len(refuser.server_requests) == 1  # not asked twice in one session
    finally:
        await engine.aclose()

    approver = AskedApprover(server="always")
    engine = await open_engine(settings, approver=approver)
    try:
        await collect(engine, "summarise the repo")
        assert len(approver.server_requests) == 1
        assert marker.read_text() == "started\n"
        assert "mcp__demo__add" in offered(server.chat_requests[2])
    finally:
        await engine.aclose()

    # Remembered outside the repo: the next session starts it unasked.
    engine = await open_engine(settings, approver=NeverAsked())
    try:
        await collect(engine, "summarise the repo")
        assert marker.read_text() == "started\nstarted\n"
    finally:
        await engine.aclose()
    assert not list(tmp_path.glob("**/*approv*"))


async def test_a_changed_definition_needs_approval_again(tmp_path, scripted_server, model_settings):
    write_mcp_json(tmp_path, {"demo": stdio_definition()})
    server = scripted_server([text("one"), text("two")])
    settings = model_settings(tmp_path, server)
    engine = await open_engine(settings, approver=AskedApprover(server="always"))
    await collect(engine, "summarise the repo")
    await engine.aclose()

    write_mcp_json(tmp_path, {"demo": stdio_definition("--many", "1")})
    approver = AskedApprover(server="deny")
    engine = await open_engine(settings, approver=approver)
    try:
        await collect(engine, "summarise the repo")
        assert [r.server for r in approver.server_requests] == ["demo"]
    finally:
        await engine.aclose()


async def test_allow_for_the_session_and_always_for_this_tool(
    tmp_path, scripted_server, model_settings
):
    calls = [tool_calls([call("mcp__demo__shout", {"text": "hi"})]), text("ok")]
    server = scripted_server(calls * 4)
    settings = model_settings(tmp_path, server)
    approver = AskedApprover(tool="session")
    engine = await open_engine(settings, approver=approver)
    engine.add_mcp_servers([stdio_config()])
    try:
        await collect(engine, "shout")
        await collect(engine, "shout again")
        assert len(approver.tool_requests) == 1
        assert tool_result(server.chat_requests[3]) == "HI"
    finally:
        await engine.aclose()

    always = AskedApprover(tool="always")
    engine = await open_engine(settings, approver=always)
    engine.add_mcp_servers([stdio_config()])
    try:
        await collect(engine, "shout")
        assert len(always.tool_requests) == 1
    finally:
        await engine.aclose()

    engine = await open_engine(settings, approver=NeverAsked())
    engine.add_mcp_servers([stdio_config()])
    try:
        events = await collect(engine, "shout")
        assert of(events, ToolCallFinished)[0].status == "success"
    finally:
        await engine.aclose()


async def test_streamable_http_with_headers(tmp_path, scripted_server, model_settings, http_demo):
    write_user_config(
        f'[mcp_servers."web demo"]\ntype = "http"\nurl = "{http_demo.url}"\n'
        'headers = { Authorization = "Bearer ${DEMO_TOKEN}" }\n'
    )
    server = scripted_server(
        [tool_calls([call("mcp__web_demo__shout", {"text": "over http"})]), text("Loud.")]
    )
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.mcp.environ["DEMO_TOKEN"] = TOKEN.removeprefix("Bearer ")
    try:
        events = await collect(engine, "shout over http")
        [finished] = of(events, ToolCallFinished)
        assert finished.status == "success" and finished.text == "OVER HTTP"
        [state] = engine.mcp_servers()
        assert (state.transport, state.state) == ("http", "running")
    finally:
        await engine.aclose()


async def test_an_http_server_that_refuses_us_is_a_notice(
    tmp_path, scripted_server, model_settings, http_demo
):
    server = scripted_server([text("fine")])
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers(
        [McpServerConfig(name="web", transport="http", url=http_demo.url, source="client")]
    )
    try:
        events = await collect(engine, "summarise the repo")
        assert isinstance(events[-1], TurnFinished) and events[-1].answer == "fine"
        assert any("'web' could not start" in n.text for n in of(events, Notice))
        assert engine.mcp_servers()[0].state == "failed"
    finally:
        await engine.aclose()


async def test_a_server_that_cannot_start_is_a_notice(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("fine")])
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers(
        [McpServerConfig(name="ghost", command="no-such-program-anywhere", source="client")]
    )
    try:
        events = await collect(engine, "summarise the repo")
        assert isinstance(events[-1], TurnFinished)
        assert any("'ghost' could not start" in n.text for n in of(events, Notice))
    finally:
        await engine.aclose()


async def test_a_slow_call_times_out_and_the_server_stays(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server(
        [
            tool_calls([call("mcp__demo__sleep", {"seconds": 30})]),
            tool_calls([call("mcp__demo__add", {"a": 1, "b": 2})]),
            text("done"),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers([stdio_config(timeout=0.5)])
    try:
        events = await collect(engine, "sleep")
        slept, added = of(events, ToolCallFinished)
        assert slept.status == "error" and "no answer within 0.5 s" in slept.text
        assert added.status == "success" and added.text == "3"
    finally:
        await engine.aclose()


async def test_cancel_stops_a_running_call(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [tool_calls([call("mcp__demo__sleep", {"seconds": 30})]), text("after")]
    )
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers([stdio_config()])
    try:
        events = []
        async for event in engine.run_turn("sleep"):
            events.append(event)
            if event.kind == "ToolCallStarted":
                asyncio.get_running_loop().call_later(0.3, engine.cancel)
        assert isinstance(events[-1], TurnCancelled)
        more = await collect(engine, "summarise the repo")
        assert more[-1].answer == "after"
        assert engine.mcp_servers()[0].state == "running"
    finally:
        await engine.aclose()


async def test_the_server_environment_is_allow_listed(
    tmp_path, scripted_server, model_settings, monkeypatch
):
    monkeypatch.setenv("SECRET_SERVICE_TOKEN", "hunter2")
    server = scripted_server(
        [
            tool_calls(
                [
                    call("mcp__demo__env", {"name": "SECRET_SERVICE_TOKEN"}, id="c1"),
                    call("mcp__demo__env", {"name": "CONFIGURED"}, id="c2"),
                    call("mcp__demo__env", {"name": "PATH"}, id="c3"),
                ]
            ),
            text("done"),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers([stdio_config(env={"CONFIGURED": "yes"})])
    try:
        events = await collect(engine, "env")
        secret, configured, path = (f.text for f in of(events, ToolCallFinished))
        assert secret == "(unset)" and configured == "yes" and path != "(unset)"
    finally:
        await engine.aclose()


async def test_hundreds_of_tools_are_trimmed_with_a_notice(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("fine")])
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers([stdio_config(extra_args=("--many", "300"))])
    try:
        events = await collect(engine, "summarise the repo")
        names = [n for n in offered(server.chat_requests[0]) if n.startswith("mcp__")]
        assert 0 < len(names) <= 96
        assert "mcp__demo__add" in names  # the first tools stay; the last are left out
        assert "mcp__demo__tool_299" not in names
        texts = [n.text for n in of(events, Notice)]
        assert any("'demo' brings more tools" in t for t in texts)
        [state] = engine.mcp_servers()
        assert len(state.tools) == 312 and sum(t.offered for t in state.tools) == len(names)
    finally:
        await engine.aclose()


async def test_a_turn_cancelled_while_a_server_starts_retries_it_next_turn(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("second")])
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers([stdio_config(extra_args=("--slow-start", "30"))])
    try:
        consumer = asyncio.create_task(collect(engine, "summarise the repo"))
        await asyncio.sleep(1.0)
        assert engine.mcp_servers()[0].state == "starting"
        consumer.cancel()  # what the app does when Esc is pressed before the turn started
        with contextlib.suppress(asyncio.CancelledError):
            await consumer
        assert engine.mcp_servers()[0].state == "not started"
        engine.add_mcp_servers([stdio_config()])
        events = await collect(engine, "summarise the repo")
        assert events[-1].answer == "second"
        assert "mcp__demo__add" in offered(server.chat_requests[0])
    finally:
        await engine.aclose()


async def test_an_approver_that_cannot_ask_about_servers_refuses_them(
    tmp_path, scripted_server, model_settings
):
    class CommandsOnly:
        async def review_patch(self, plan):
            raise AssertionError("no patch here")

        async def approve_command(self, command, reason):
            return "deny"

    write_mcp_json(tmp_path, {"demo": stdio_definition()})
    server = scripted_server([text("fine")])
    engine = await open_engine(model_settings(tmp_path, server), approver=CommandsOnly())
    try:
        events = await collect(engine, "summarise the repo")
        assert events[-1].answer == "fine"
        assert any("asking for approval failed" in n.text for n in of(events, Notice))
        assert engine.mcp_servers()[0].state == "not approved"
    finally:
        await engine.aclose()


async def test_a_missing_variable_makes_the_server_invalid_not_started(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("fine")])
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers([stdio_config(env={"TOKEN": "${HELLO_TUI_TEST_UNSET_VARIABLE}"})])
    try:
        events = await collect(engine, "summarise the repo")
        assert any("HELLO_TUI_TEST_UNSET_VARIABLE is not set" in n.text for n in of(events, Notice))
        [state] = engine.mcp_servers()
        assert state.state == "invalid" and "is not set" in state.error
    finally:
        await engine.aclose()


async def test_an_http_server_that_goes_away_mid_session(
    tmp_path, scripted_server, model_settings, http_demo
):
    server = scripted_server(
        [
            tool_calls([call("mcp__web__shout", {"text": "one"})]),
            text("first"),
            tool_calls([call("mcp__web__shout", {"text": "two"})]),
            text("second"),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers(
        [
            McpServerConfig(
                name="web",
                transport="http",
                url=http_demo.url,
                headers={"Authorization": TOKEN},
                source="client",
                timeout=10,
            )
        ]
    )
    try:
        events = await collect(engine, "shout once")
        assert of(events, ToolCallFinished)[0].text == "ONE"
        await asyncio.to_thread(http_demo.stop)
        events = await collect(engine, "shout again")
        [finished] = of(events, ToolCallFinished)
        assert finished.status == "error"
        assert events[-1].answer == "second"
        assert engine.mcp_servers()[0].state == "crashed"
    finally:
        await engine.aclose()


async def test_a_server_that_died_between_turns_is_not_offered_again(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([tool_calls([call("mcp__demo__pid", {})]), text("got it"), text("ok")])
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers([stdio_config()])
    try:
        events = await collect(engine, "what is the server's pid")
        pid = int(of(events, ToolCallFinished)[0].text)
        os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.5)
        events = await collect(engine, "summarise the repo")
        assert events[-1].answer == "ok"
        assert not [n for n in offered(server.chat_requests[2]) if n.startswith("mcp__")]
        assert any("'demo' stopped" in n.text for n in of(events, Notice))
        assert engine.mcp_servers()[0].state == "crashed"
    finally:
        await engine.aclose()


async def test_read_only_mode_declines_mcp_calls_without_asking(
    tmp_path, scripted_server, model_settings
):
    target = tmp_path / "touched.txt"
    server = scripted_server(
        [tool_calls([call("mcp__demo__touch", {"path": str(target)})]), text("Planned only.")]
    )
    approver = AskedApprover(tool="once")
    engine = await open_engine(model_settings(tmp_path, server), approver=approver)
    engine.add_mcp_servers([stdio_config()])
    engine.set_mode("read-only")
    try:
        events = await collect(engine, "touch the file")
        [finished] = of(events, ToolCallFinished)
        assert finished.status == "error"
        assert approver.tool_requests == []
        assert not target.exists()
    finally:
        await engine.aclose()
