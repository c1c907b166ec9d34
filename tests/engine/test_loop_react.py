"""The agent loop in the ReAct text dialect, and the automatic switch to it."""

from __future__ import annotations

from hello_tui.core.events import Notice, ThoughtDelta, ToolCallFinished, TurnFinished
from tests.engine.agent_kit import EchoTool, answer_text, collect, of, open_engine, registry, saved
from tests.support.scripted_model import call, text, tool_calls


async def test_react_tool_then_finish(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [
            text('Thought: echo it\nAction: echo[{"text": "hey"}]'),
            text("Thought: got it\nAction: Finish[The echo replied hey.]"),
        ]
    )
    echo = EchoTool()
    engine = await open_engine(model_settings(tmp_path, server, protocol="react"), registry(echo))
    events = await collect(engine, "echo hey")
    assert echo.calls == ["hey"]
    assert events[-1].answer == "The echo replied hey."
    assert answer_text(events) == "The echo replied hey."
    assert "echo it" in "".join(e.text for e in of(events, ThoughtDelta))
    first, second = server.chat_requests
    assert "tools" not in first and "tools" not in second
    system = first["messages"][0]["content"]
    assert "Action: tool_name[" in system  # react.md
    assert "- echo[{text: string}]" in system  # the generated catalogue
    assert second["messages"][-1] == {"role": "user", "content": "Observation: echo: hey"}
    assert second["messages"][-2]["role"] == "assistant"


async def test_react_tolerant_forms_run(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [
            text('思考：数一数\n行动：count[{"n": 2}]]'),
            text("**Thought:** done\n**Action:** Finish[counted]"),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server, protocol="react"))
    events = await collect(engine, "count two")
    assert of(events, ToolCallFinished)[0].text == "1 2"
    assert events[-1].answer == "counted"


async def test_react_errors_are_told_to_the_model(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [
            text('Thought: t\nAction: echo[{"text": "x"]'),
            text('Thought: t\nAction: nosuch[{"a": 1}]'),
            text('Thought: t\nAction: count[{"n": "lots"}]'),
            text("Thought: I am not sure"),
            text(""),
            text("Action: Finish[gave up politely]"),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server, protocol="react"))
    events = await collect(engine, "try")
    assert events[-1].answer == "gave up politely"
    obs = [r["messages"][-1]["content"] for r in server.chat_requests[1:]]
    assert "not valid JSON" in obs[0]
    assert "Unknown tool 'nosuch'" in obs[1]
    assert "Invalid arguments for tool 'count'" in obs[2]
    assert "no Action" in obs[3]
    assert "Your last message was empty" in obs[4]


async def test_react_plain_answer_without_markers(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("This repo is empty.")])
    engine = await open_engine(model_settings(tmp_path, server, protocol="react"))
    events = await collect(engine, "what is in this repo")
    assert events[-1].answer == "This repo is empty."


async def test_react_max_steps_converges_with_parsed_answer(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server(
        [
            text('Thought: a\nAction: count[{"n": 1}]'),
            text("Thought: out of steps\nAction: Finish[Evidence: counted 1. Next: count more.]"),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server, protocol="react", max_steps=1))
    events = await collect(engine, "count")
    finished = events[-1]
    assert finished.reason == "max_steps"
    assert finished.answer == "Evidence: counted 1. Next: count more."
    assert answer_text(events) == finished.answer


async def test_react_third_identical_call_not_run(tmp_path, scripted_server, model_settings):
    same = 'Thought: again\nAction: echo[{"text": "same"}]'
    server = scripted_server([text(same), text(same), text(same), text("Final Answer: stop")])
    echo = EchoTool()
    engine = await open_engine(model_settings(tmp_path, server, protocol="react"), registry(echo))
    events = await collect(engine, "loop")
    assert echo.calls == ["same", "same"]
    assert events[-1].reason == "repeated_call" and events[-1].answer == "stop"


async def test_auto_switches_to_react_when_tools_are_rejected(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server(
        [
            text('Thought: t\nAction: echo[{"text": "via react"}]'),
            text("Action: Finish[switched]"),
        ],
        reject_tools=True,
    )
    echo = EchoTool()
    engine = await open_engine(model_settings(tmp_path, server), registry(echo))
    events = await collect(engine, "echo via react")
    assert engine.protocol == "react"
    assert any("ReAct" in n.text for n in of(events, Notice))
    assert echo.calls == ["via react"]
    assert events[-1].answer == "switched"
    reqs = server.chat_requests
    assert "tools" in reqs[0] and "tools" not in reqs[1]
    # The session remembers, so the next turn does not try tools again.
    assert saved(engine)["protocol"] == "react"
    server.add(text("Final Answer: second turn"))
    events = await collect(engine, "and again")
    assert events[-1].answer == "second turn"
    assert "tools" not in server.chat_requests[-1]


async def test_protocol_tools_does_not_fall_back(tmp_path, scripted_server, model_settings):
    server = scripted_server([], reject_tools=True)
    engine = await open_engine(model_settings(tmp_path, server, protocol="tools"))
    events = await collect(engine, "do something")
    assert type(events[-1]).__name__ == "TurnFailed"
    assert "does not accept tool calls" in events[-1].error
    assert events[-1].hint == "use --protocol react (or auto)"


async def test_switch_mid_session_flattens_earlier_tool_calls(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([tool_calls([call("echo", {"text": "one"}, id="e1")]), text("first")])
    settings = model_settings(tmp_path, server)
    engine = await open_engine(settings)
    await collect(engine, "turn one")
    server.reject_tools = True
    server.add(text("Final Answer: second"))
    events = await collect(engine, "turn two")
    assert isinstance(events[-1], TurnFinished) and events[-1].answer == "second"
    msgs = server.chat_requests[-1]["messages"]
    assert all(m["role"] != "tool" and "tool_calls" not in m for m in msgs)
    assert any("Observation (echo): echo: one" in (m["content"] or "") for m in msgs)
