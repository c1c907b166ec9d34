"""MCP schemas within the model's window: four real servers, the window taken from the
endpoint (vLLM's `max_model_len` on the scripted server), the newest tool result whole;
with a tiny window, tools are left out and the user is told which."""

from __future__ import annotations

from hello_tui.core.events import ContextUsage, Notice, ToolCallFinished, TurnFinished
from tests.engine.agent_kit import collect, of, open_engine
from tests.mcp.conftest import AskedApprover, stdio_config
from tests.support.scripted_model import call, text, tool_calls

SERVERS = ("alpha", "beta", "gamma", "delta")
# 1,700 characters: short of being summarised, more than 8,000 tokens less the schemas left.
ANSWER = "word " * 340


def four_servers() -> list:
    return [stdio_config(name=name, extra_args=("--many", "6")) for name in SERVERS]


def offered(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def last_tool_result(request: dict) -> str:
    return next(m["content"] for m in reversed(request["messages"]) if m["role"] == "tool")


async def test_with_the_window_from_the_endpoint_the_newest_result_reaches_the_model_whole(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server(
        [tool_calls([call("mcp__alpha__shout", {"text": ANSWER})]), text("Done.")],
        model_fields={"max_model_len": 131072},
    )
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers(four_servers())
    try:
        events = await collect(engine, "shout the text with the alpha server")
        assert isinstance(events[-1], TurnFinished)
        first, second = server.chat_requests[:2]
        mcp_tools = [n for n in offered(first) if n.startswith("mcp__")]
        assert len(mcp_tools) == 4 * 18  # every tool of every server
        assert last_tool_result(second) == ANSWER.upper()
        assert "omitted" not in last_tool_result(second)
        usage = of(events, ContextUsage)[-1]
        assert usage.budget == 131072 and usage.source == "vLLM: /v1/models max_model_len"
        assert not [n for n in of(events, Notice) if "left out" in n.text]
    finally:
        await engine.aclose()


async def test_with_a_tiny_window_the_user_is_told_which_tools_were_left_out(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server(
        [tool_calls([call("mcp__alpha__shout", {"text": ANSWER})]), text("Done.")],
        model_fields={"max_model_len": 4096},
    )
    engine = await open_engine(model_settings(tmp_path, server), approver=AskedApprover())
    engine.add_mcp_servers(four_servers())
    try:
        events = await collect(engine, "shout the text with the alpha server")
        assert isinstance(events[-1], TurnFinished)
        (finished,) = of(events, ToolCallFinished)
        assert finished.status == "success"
        notices = [n.text for n in of(events, Notice)]
        trimmed = [t for t in notices if "MCP share of the context budget" in t]
        assert trimmed, notices  # at least one server brought more than its share
        assert all("1,024 tokens of schemas" in t and "left out:" in t for t in trimmed)
        first, second = server.chat_requests[:2]
        assert len([n for n in offered(first) if n.startswith("mcp__")]) < 4 * 15
        # The newest result is whole in the next request, whatever the schemas needed.
        assert last_tool_result(second) == ANSWER.upper()
        assert all(u.budget == 4096 for u in of(events, ContextUsage))
    finally:
        await engine.aclose()
