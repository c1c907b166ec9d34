"""Cancelling mid-stream or mid-tool leaves a valid session that --continue resumes; approvals."""

from __future__ import annotations

import asyncio
import json

from hello_tui.agent.factory import open_session
from hello_tui.core.approval import PolicyApprover
from hello_tui.core.events import (
    AssistantDelta,
    CommandApprovalNeeded,
    ToolCallFinished,
    ToolOutputDelta,
)
from hello_tui.core.tools import Tool, ToolArgs, ToolResult
from hello_tui.testing.scripted_model import call, slow, text, tool_calls
from tests.engine.agent_kit import GatedCommandTool, collect, make_agent, of, registry

GUARD = 20  # seconds: only a deadlock would ever reach it


async def _cancel_after(agent, task_text, predicate):
    seen = []

    async def consume():
        async for event in agent.run_turn(task_text):
            seen.append(event)
            if predicate(event):
                started.set()

    started = asyncio.Event()
    task = asyncio.ensure_future(consume())
    await asyncio.wait_for(started.wait(), GUARD)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    return seen


async def test_cancel_mid_stream_then_continue(tmp_path, scripted_server, model_settings):
    server = scripted_server([slow("a very slow answer " * 40, delay=0.02)])
    st = model_settings(tmp_path, server)
    agent = make_agent(st)
    seen = await _cancel_after(agent, "explain slowly", lambda e: isinstance(e, AssistantDelta))
    assert seen[-1].kind not in ("TurnFinished", "TurnFailed")
    data = json.loads(agent.session.path.read_text())
    assert data["history"] == [{"role": "user", "content": "explain slowly"}]
    assert data["display"][-2]["content"] == "cancelled by the user"
    assert agent.log.read()[-1]["type"] == "TurnCancelled"

    session, notices = open_session(st, continue_latest=True)
    assert session.id == agent.session.id and not notices
    server.add(text("resumed fine"))
    agent2 = make_agent(st, session=session)
    events = await collect(agent2, "go on")
    assert events[-1].answer == "resumed fine"


class WaitArgs(ToolArgs):
    what: str


class HangingTool(Tool):
    name = "hang"
    description = "Never finishes."
    Args = WaitArgs

    def __init__(self):
        self.cancelled = False

    async def run(self, args, ctx):
        ctx.emit(ToolOutputDelta(call_id=ctx.call_id, text="started\n"))
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolResult.ok("never")


async def test_cancel_mid_tool_closes_the_call(tmp_path, scripted_server, model_settings):
    server = scripted_server([tool_calls([call("hang", {"what": "x"}, id="h1")])])
    hanging = HangingTool()
    agent = make_agent(model_settings(tmp_path, server), registry(hanging))
    seen = await _cancel_after(agent, "hang around", lambda e: isinstance(e, ToolOutputDelta))
    assert of(seen, ToolOutputDelta)[0].text == "started\n"
    assert hanging.cancelled
    history = json.loads(agent.session.path.read_text())["history"]
    assert history[1]["tool_calls"][0]["id"] == "h1"
    assert history[2] == {"role": "tool", "tool_call_id": "h1", "content": "cancelled by the user"}


async def test_cancel_mid_tool_in_react(tmp_path, scripted_server, model_settings):
    server = scripted_server([text('Thought: wait\nAction: hang[{"what": "x"}]')])
    agent = make_agent(model_settings(tmp_path, server, protocol="react"), registry(HangingTool()))
    await _cancel_after(agent, "hang", lambda e: isinstance(e, ToolOutputDelta))
    history = json.loads(agent.session.path.read_text())["history"]
    assert history[-1] == {"role": "user", "content": "Observation: cancelled by the user"}


async def test_declined_without_yes_and_the_model_is_told(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([tool_calls([call("run", {"command": "rm -rf build"})]), text("ok")])
    gated = GatedCommandTool()
    agent = make_agent(model_settings(tmp_path, server), registry(gated), yes=False)
    events = await collect(agent, "clean")
    assert gated.ran == []
    assert "declined" in server.chat_requests[1]["messages"][-1]["content"]
    assert of(events, ToolCallFinished)[0].status == "error"


async def test_approved_with_yes(tmp_path, scripted_server, model_settings):
    server = scripted_server([tool_calls([call("run", {"command": "make"})]), text("ok")])
    gated = GatedCommandTool()
    agent = make_agent(
        model_settings(tmp_path, server), registry(gated), approver=PolicyApprover(yes=True)
    )
    events = await collect(agent, "build")
    assert gated.ran == ["make"]
    assert of(events, ToolOutputDelta)[0].text == "working\n"


class WaitingApprover:
    """Like the TUI: decides only after the UI has shown the approval request."""

    def __init__(self):
        self.shown = asyncio.Event()

    async def review_patch(self, plan):
        raise AssertionError("no patches here")

    async def approve_command(self, command, reason):
        await self.shown.wait()
        return "once"


async def test_tool_events_reach_the_consumer_before_the_tool_returns(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([tool_calls([call("run", {"command": "make"})]), text("ok")])
    approver = WaitingApprover()
    agent = make_agent(
        model_settings(tmp_path, server), registry(GatedCommandTool()), approver=approver
    )
    order = []

    async def consume():
        async for event in agent.run_turn("build"):
            order.append(event.kind)
            if isinstance(event, CommandApprovalNeeded):
                approver.shown.set()

    await asyncio.wait_for(consume(), GUARD)
    i = order.index("CommandApprovalNeeded")
    assert (
        order.index("ToolCallStarted")
        < i
        < order.index("ToolOutputDelta")
        < order.index("ToolCallFinished")
    )
