"""Cancelling mid-stream or mid-tool leaves a valid session that --continue resumes; approvals.

Cancelling the consumer and `Engine.cancel()` both stop the turn; `aclose()` stops a tool
that is still running (a real process, killed with its group)."""

from __future__ import annotations

import asyncio
import secrets

from hello_tui.core.approval import PolicyApprover
from hello_tui.core.events import (
    AssistantDelta,
    CommandApprovalNeeded,
    ToolCallFinished,
    ToolOutputDelta,
)
from hello_tui.core.tools import Tool, ToolArgs, ToolResult
from hello_tui.tools.registry import ToolRegistry
from tests.engine.agent_kit import (
    GatedCommandTool,
    collect,
    of,
    open_engine,
    registry,
    saved,
    transcript,
)
from tests.support.processes import running
from tests.support.scripted_model import call, slow, text, tool_calls

GUARD = 20  # seconds: only a deadlock would ever reach it


async def _cancel_after(engine, task_text, predicate):
    seen = []

    async def consume():
        async for event in engine.run_turn(task_text):
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
    engine = await open_engine(st)
    seen = await _cancel_after(engine, "explain slowly", lambda e: isinstance(e, AssistantDelta))
    assert seen[-1].kind not in ("TurnFinished", "TurnFailed")
    data = saved(engine)
    assert data["history"] == [{"role": "user", "content": "explain slowly"}]
    assert data["display"][-1]["text"] == "Turn cancelled."
    assert data["display"][-2]["role"] == "assistant"  # the part that streamed is kept
    assert transcript(engine)[-1]["type"] == "TurnCancelled"

    server.add(text("resumed fine"))
    engine2 = await open_engine(st, continue_latest=True)
    assert engine2.session_id == engine.session_id and not engine2.take_notices()
    events = await collect(engine2, "go on")
    assert events[-1].answer == "resumed fine"


async def test_engine_cancel_ends_the_stream_with_turn_cancelled(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([slow("a very slow answer " * 40, delay=0.02)])
    engine = await open_engine(model_settings(tmp_path, server))
    kinds = []
    async for event in engine.run_turn("explain slowly"):
        kinds.append(event.kind)
        if event.kind == "AssistantDelta" and engine.running:
            engine.cancel()
    assert kinds[0] == "TurnStarted" and kinds[-1] == "TurnCancelled"
    assert kinds.count("TurnCancelled") == 1 and not engine.running
    assert saved(engine)["history"] == [{"role": "user", "content": "explain slowly"}]


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
    engine = await open_engine(model_settings(tmp_path, server), registry(hanging))
    seen = await _cancel_after(engine, "hang around", lambda e: isinstance(e, ToolOutputDelta))
    assert of(seen, ToolOutputDelta)[0].text == "started\n"
    assert hanging.cancelled
    history = saved(engine)["history"]
    assert history[1]["tool_calls"][0]["id"] == "h1"
    assert history[2] == {"role": "tool", "tool_call_id": "h1", "content": "cancelled by the user"}


async def test_cancel_mid_tool_in_react(tmp_path, scripted_server, model_settings):
    server = scripted_server([text('Thought: wait\nAction: hang[{"what": "x"}]')])
    engine = await open_engine(
        model_settings(tmp_path, server, protocol="react"), registry(HangingTool())
    )
    await _cancel_after(engine, "hang", lambda e: isinstance(e, ToolOutputDelta))
    history = saved(engine)["history"]
    assert history[-1] == {"role": "user", "content": "Observation: cancelled by the user"}


async def test_declined_without_yes_and_the_model_is_told(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([tool_calls([call("run", {"command": "rm -rf build"})]), text("ok")])
    gated = GatedCommandTool()
    engine = await open_engine(model_settings(tmp_path, server), registry(gated), yes=False)
    events = await collect(engine, "clean")
    assert gated.ran == []
    assert "declined" in server.chat_requests[1]["messages"][-1]["content"]
    assert of(events, ToolCallFinished)[0].status == "error"


async def test_approved_with_yes(tmp_path, scripted_server, model_settings):
    server = scripted_server([tool_calls([call("run", {"command": "make"})]), text("ok")])
    gated = GatedCommandTool()
    engine = await open_engine(
        model_settings(tmp_path, server), registry(gated), approver=PolicyApprover(yes=True)
    )
    events = await collect(engine, "build")
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
    engine = await open_engine(
        model_settings(tmp_path, server), registry(GatedCommandTool()), approver=approver
    )
    order = []

    async def consume():
        async for event in engine.run_turn("build"):
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


async def test_aclose_stops_a_tool_that_is_stillrunning(tmp_path, scripted_server, model_settings):
    server = scripted_server([tool_calls([call("hang", {"what": "x"}, id="h1")])])
    hanging = HangingTool()
    engine = await open_engine(model_settings(tmp_path, server), registry(hanging))
    started = asyncio.Event()

    async def consume():
        async for event in engine.run_turn("hang around"):
            if isinstance(event, ToolOutputDelta):
                started.set()

    consumer = asyncio.ensure_future(consume())
    await asyncio.wait_for(started.wait(), GUARD)
    assert engine.running and not hanging.cancelled
    await asyncio.wait_for(engine.aclose(), GUARD)
    assert hanging.cancelled and not engine.running
    await asyncio.wait_for(consumer, GUARD)  # the stream ends with the turn
    history = saved(engine)["history"]
    assert history[-1] == {"role": "tool", "tool_call_id": "h1", "content": "cancelled by the user"}
    assert transcript(engine)[-1]["type"] == "TurnCancelled"


async def test_aclose_kills_a_running_terminal_command(tmp_path, scripted_server, model_settings):
    from hello_tui.tools.terminal import TerminalTool

    marker = f"300.{secrets.randbelow(10**9):09d}"  # seconds, and no one else's
    (tmp_path / "spawn.sh").write_text(f"sleep {marker} &\necho started > child.pid\nwait\n")
    server = scripted_server([tool_calls([call("terminal", {"command": "bash spawn.sh"})])])
    engine = await open_engine(
        model_settings(tmp_path, server), ToolRegistry([TerminalTool()]), yes=True
    )
    consumer = asyncio.ensure_future(collect(engine, "run the script"))
    pid_file = tmp_path / "child.pid"
    for _ in range(400):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.05)
    assert running(marker)
    await asyncio.wait_for(engine.aclose(), GUARD)
    for _ in range(200):
        if not running(marker):
            break
        await asyncio.sleep(0.05)
    assert not running(marker)
    events = await asyncio.wait_for(consumer, GUARD)
    assert events[-1].kind == "TurnCancelled"
