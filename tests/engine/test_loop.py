"""The agent loop in the native tool-call dialect, against the scripted model server."""

from __future__ import annotations

import json

from hello_tui.core.events import (
    StepStarted,
    ToolCallFinished,
    ToolCallStarted,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    Usage,
)
from tests.engine.agent_kit import (
    EchoTool,
    answer_text,
    collect,
    of,
    open_engine,
    registry,
    saved,
)
from tests.support.scripted_model import call, error, text, tool_calls


async def test_tool_call_result_is_bound_by_tool_call_id(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [
            tool_calls([call("echo", {"text": "hi there"}, id="call_abc")]),
            text("The echo said hi there."),
        ]
    )
    echo = EchoTool()
    engine = await open_engine(model_settings(tmp_path, server), registry(echo))
    events = await collect(engine, "please echo hi there")

    assert isinstance(events[0], TurnStarted)
    assert isinstance(events[-1], TurnFinished)
    assert events[-1].answer == "The echo said hi there."
    assert events[-1].reason == "answer"
    assert echo.calls == ["hi there"]
    assert answer_text(events) == "The echo said hi there."
    started = of(events, ToolCallStarted)[0]
    assert (started.tool, started.call_id, started.arguments) == (
        "echo",
        "call_abc",
        {"text": "hi there"},
    )
    assert of(events, ToolCallFinished)[0].text == "echo: hi there"

    first, second = server.chat_requests
    assert [t["function"]["name"] for t in first["tools"]] == ["echo", "count", "broken", "big"]
    assistant = [m for m in second["messages"] if m["role"] == "assistant"][-1]
    assert assistant["tool_calls"][0]["id"] == "call_abc"
    tool_msg = second["messages"][-1]
    assert tool_msg == {"role": "tool", "tool_call_id": "call_abc", "content": "echo: hi there"}


async def test_parallel_calls_each_get_a_result(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [
            tool_calls([call("echo", {"text": "a"}, id="c1"), call("count", {"n": 3}, id="c2")]),
            text("done"),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "do two things")
    assert events[-1].answer == "done"
    tool_msgs = [m for m in server.chat_requests[1]["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_msgs] == [
        ("c1", "echo: a"),
        ("c2", "1 2 3"),
    ]


async def test_usage_is_reported_per_call_and_summed(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [tool_calls([call("echo", {"text": "x"})], usage=(100, 10)), text("ok", usage=(150, 5))]
    )
    settings = model_settings(
        tmp_path, server, environ={"LLM_PRICE_INPUT": "2", "LLM_PRICE_OUTPUT": "10"}
    )
    engine = await open_engine(settings)
    events = await collect(engine, "go")
    usage = of(events, Usage)
    assert [(u.prompt_tokens, u.completion_tokens) for u in usage] == [(100, 10), (150, 5)]
    assert usage[-1].session_prompt_tokens == 250 and usage[-1].session_completion_tokens == 15
    assert abs(usage[-1].cost - (250 * 2 + 15 * 10) / 1e6) < 1e-12
    assert engine.usage.prompt_tokens == 250 and engine.usage.completion_tokens == 15
    # A second turn adds to the session's totals; the events carry those totals.
    server.add(text("again", usage=(40, 4)))
    second = of(await collect(engine, "go on"), Usage)
    assert (second[-1].session_prompt_tokens, second[-1].session_completion_tokens) == (290, 19)
    assert abs(second[-1].cost - (290 * 2 + 19 * 10) / 1e6) < 1e-12
    assert saved(engine)["usage"]["prompt_tokens"] == 290


async def test_max_steps_then_converge_answer_is_shown(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [
            tool_calls([call("count", {"n": 1})]),
            tool_calls([call("count", {"n": 2})]),
            text("Evidence: counted to 2. Next: 1. count further."),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server, max_steps=2))
    events = await collect(engine, "count a lot")
    assert [e.step for e in of(events, StepStarted)] == [1, 2]
    finished = events[-1]
    assert isinstance(finished, TurnFinished)
    assert finished.reason == "max_steps"
    assert finished.answer == "Evidence: counted to 2. Next: 1. count further."
    assert answer_text(events) == finished.answer
    last = server.chat_requests[-1]
    assert "tools" not in last
    assert "Do not call any more tools" in last["messages"][-1]["content"]
    # The converge request carries the tool steps as plain text (no tool_calls without tools).
    assert all("tool_calls" not in m and m["role"] != "tool" for m in last["messages"])


async def test_converge_failure_still_shows_an_answer(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [tool_calls([call("count", {"n": 1})]), error(400, "bad request for this call")]
    )
    engine = await open_engine(model_settings(tmp_path, server, max_steps=1))
    events = await collect(engine, "count")
    finished = events[-1]
    assert isinstance(finished, TurnFinished) and finished.reason == "max_steps"
    assert "I stopped after 1 steps" in finished.answer
    assert "Next steps" in finished.answer
    assert answer_text(events) == finished.answer


async def test_third_identical_call_is_not_run(tmp_path, scripted_server, model_settings):
    same = lambda: tool_calls([call("echo", {"text": "again"})])
    server = scripted_server([same(), same(), same(), text("Concluding: echo works.")])
    echo = EchoTool()
    engine = await open_engine(model_settings(tmp_path, server), registry(echo))
    events = await collect(engine, "echo forever")
    assert echo.calls == ["again", "again"]
    finished = events[-1]
    assert finished.reason == "repeated_call"
    assert finished.answer == "Concluding: echo works."
    third = of(events, ToolCallFinished)[2]
    assert third.status == "error" and "third identical call" in third.model_text
    converge = server.chat_requests[-1]
    assert "tools" not in converge
    flat = json.dumps(converge["messages"])
    assert "third identical call" in flat


async def test_tool_error_reaches_the_model_verbatim(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [tool_calls([call("broken", {"path": "x.txt"}, id="b1")]), text("It failed.")]
    )
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "open x")
    assert of(events, ToolCallFinished)[0].status == "error"
    tool_msg = server.chat_requests[1]["messages"][-1]
    assert tool_msg["content"] == "cannot open x.txt: Permission denied (errno 13)"


async def test_bad_calls_are_explained_and_the_loop_goes_on(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server(
        [
            tool_calls([call("echo", '{"text": "unterminated', id="j1")]),
            tool_calls([call("nosuchtool", {"x": 1}, id="u1")]),
            tool_calls([call("count", {"n": "many"}, id="t1")]),
            text("Finally done."),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "try things")
    assert events[-1].answer == "Finally done."
    reqs = server.chat_requests
    invalid_json = reqs[1]["messages"][-1]
    assert invalid_json["tool_call_id"] == "j1"
    assert "Invalid JSON in the arguments for tool 'echo'" in invalid_json["content"]
    unknown = reqs[2]["messages"][-1]
    assert "Unknown tool 'nosuchtool'" in unknown["content"] and "echo" in unknown["content"]
    wrong_type = reqs[3]["messages"][-1]
    assert "Invalid arguments for tool 'count'" in wrong_type["content"]
    assert "n:" in wrong_type["content"]


async def test_empty_model_message_is_answered_and_loop_continues(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text(""), text("Here is the answer.")])
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "explain the repo")
    assert events[-1].answer == "Here is the answer."
    assert "Your last message was empty" in server.chat_requests[1]["messages"][-1]["content"]


async def test_model_unreachable_after_retries_fails_the_turn(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([error(503), error(503), error(503)])
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "anything")
    assert isinstance(events[-1], TurnFailed)
    assert "gave up after 3 attempts" in events[-1].error
    # The session stays usable: the user's message is kept, the file is valid JSON.
    assert saved(engine)["history"][0] == {"role": "user", "content": "anything"}


async def test_retry_after_429_then_success(tmp_path, scripted_server, model_settings):
    server = scripted_server([error(429, retry_after=0.01), text("fine")])
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "hello repo, what is here")
    assert events[-1].answer == "fine"


async def test_retries_are_shown_as_notices(tmp_path, scripted_server, model_settings):
    from hello_tui.core.events import Notice

    server = scripted_server([error(500), text("recovered")])
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "go ahead with the task")
    notices = [e.text for e in of(events, Notice)]
    assert any("Retrying" in n and "attempt 2" in n for n in notices)
    assert events[-1].answer == "recovered"


async def test_dropped_stream_fails_the_turn_and_keeps_the_session(
    tmp_path, scripted_server, model_settings
):
    from tests.support.scripted_model import drop, malformed

    server = scripted_server(
        [drop(after_chunks=2, reply=text("a long answer that breaks " * 5)), malformed(2)]
    )
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "first try")
    assert isinstance(events[-1], TurnFailed) and "broke off" in events[-1].error
    events = await collect(engine, "second try")
    assert isinstance(events[-1], TurnFailed)
    assert [m["content"] for m in saved(engine)["history"]] == ["first try", "second try"]
