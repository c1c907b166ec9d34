"""The client against misbehaving servers: cut-off streams, runaway answers, pages that are no model."""

from __future__ import annotations

import json

import pytest

from hello_tui.config import load_settings
from hello_tui.llm import Completion, LLMClient, LLMError, StreamRestarted, TextDelta
from tests.support.scripted_model import (
    CompletionReply,
    call,
    drop,
    endless,
    html_page,
    page,
    text,
    tool_calls,
    unstreamed,
)

USER = [{"role": "user", "content": "hello"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "terminal",
            "description": "run a command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


class SleepRecorder:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def client_for(settings) -> tuple[LLMClient, SleepRecorder]:
    sleeper = SleepRecorder()
    return LLMClient(settings, sleep=sleeper), sleeper


def settings_with(tmp_path, server, **env: str):
    return load_settings(tmp_path, base_url=server.base_url, model="scripted-model", environ=env)


async def collect(client: LLMClient, **kwargs) -> list:
    return [event async for event in client.stream_chat(USER, **kwargs)]


async def failure(client: LLMClient, **kwargs) -> tuple[LLMError, list]:
    seen: list = []
    with pytest.raises(LLMError) as info:
        async for event in client.stream_chat(USER, **kwargs):
            seen.append(event)
    return info.value, seen


# ---------------------------------------------------------------- truncation


@pytest.mark.parametrize("framing", ["close", "chunked"])
async def test_a_cut_off_stream_is_retried_once_then_fails_as_truncated(
    tmp_path, scripted_server, framing
):
    cut = text("partial answer that never ends", chunk_size=3)
    server = scripted_server(
        [drop(5, cut, framing=framing), drop(5, cut, framing=framing), text("never asked")]
    )
    client, sleeper = client_for(settings_with(tmp_path, server))
    err, seen = await failure(client)
    assert err.kind == "truncated" and not err.retryable
    assert "cut off" in err.message and "gave up after 2 attempts" in err.message
    assert "\n" not in str(err)
    assert "LLM_BASE_URL" in err.hint
    assert not any(isinstance(e, Completion) for e in seen)
    assert sum(isinstance(e, StreamRestarted) for e in seen) == 1
    assert len(server.chat_requests) == 2 and server.remaining == 1
    assert len(sleeper.delays) == 1


@pytest.mark.parametrize("framing", ["close", "chunked"])
async def test_a_cut_off_stream_then_a_whole_one_gives_only_the_whole_answer(
    tmp_path, scripted_server, framing
):
    server = scripted_server(
        [drop(4, text("first try, cut", chunk_size=2), framing=framing), text("whole answer")]
    )
    client, _ = client_for(settings_with(tmp_path, server))
    events = await collect(client)
    restart = next(i for i, e in enumerate(events) if isinstance(e, StreamRestarted))
    after = "".join(e.text for e in events[restart:] if isinstance(e, TextDelta))
    assert after == "whole answer"
    assert events[-1] == Completion(
        content="whole answer", finish_reason="stop", usage=events[-1].usage
    )


async def test_a_half_sent_tool_call_is_never_returned(tmp_path, scripted_server):
    rm = call("terminal", {"command": "rm -rf build && make"}, id="call_rm")
    cut = tool_calls([rm], chunk_size=4)
    server = scripted_server([drop(6, cut, framing="close"), drop(6, cut)])
    client, _ = client_for(settings_with(tmp_path, server))
    err, seen = await failure(client, tools=TOOLS)
    assert err.kind == "truncated"
    assert not any(isinstance(e, Completion) for e in seen)


async def test_a_cut_tool_call_retried_whole_arrives_whole(tmp_path, scripted_server):
    rm = call("terminal", {"command": "make test"}, id="call_ok")
    server = scripted_server([drop(6, tool_calls([rm], chunk_size=4)), tool_calls([rm])])
    client, _ = client_for(settings_with(tmp_path, server))
    done = (await collect(client, tools=TOOLS))[-1]
    assert [(c.name, json.loads(c.arguments)) for c in done.tool_calls] == [
        ("terminal", {"command": "make test"})
    ]


async def test_nothing_streamed_before_the_cut_means_no_restart_item(tmp_path, scripted_server):
    server = scripted_server([drop(0, framing="close"), text("ok")])
    client, _ = client_for(settings_with(tmp_path, server))
    events = await collect(client)
    assert not any(isinstance(e, StreamRestarted) for e in events)
    assert events[-1].content == "ok"


async def test_a_finish_reason_without_done_is_a_whole_answer(tmp_path, scripted_server):
    # The answer and its finish reason arrived; only usage and [DONE] were lost.
    server = scripted_server([drop(0, text("complete"), after_finish=True, framing="close")])
    client, _ = client_for(settings_with(tmp_path, server))
    events = await collect(client)
    assert events[-1].content == "complete" and events[-1].finish_reason == "stop"
    assert len(server.chat_requests) == 1


async def test_done_without_a_finish_reason_is_a_whole_answer(tmp_path, scripted_server):
    server = scripted_server([CompletionReply(content="sloppy but whole", omit_finish=True)])
    client, _ = client_for(settings_with(tmp_path, server))
    events = await collect(client)
    assert events[-1].content == "sloppy but whole" and events[-1].finish_reason is None


async def test_an_empty_event_stream_is_a_truncation(tmp_path, scripted_server):
    empty = page(b"", "text/event-stream", framing="close")
    server = scripted_server([empty, empty])
    client, _ = client_for(settings_with(tmp_path, server))
    err, _ = await failure(client)
    assert err.kind == "truncated"


async def test_complete_retries_a_cut_body_once(tmp_path, scripted_server):
    cut = page(b'{"id": "x", "choices": [{"index": 0, "mess', "application/json", framing="close")
    server = scripted_server([cut, text("whole")])
    client, _ = client_for(settings_with(tmp_path, server))
    assert (await client.complete(USER)).content == "whole"


# ---------------------------------------------------------------- runaway answers


async def test_a_fast_endless_stream_stops_at_the_answer_cap(tmp_path, scripted_server):
    server = scripted_server([endless("x" * 1000)])
    client, sleeper = client_for(settings_with(tmp_path, server, LLM_MAX_ANSWER_BYTES="50000"))
    err, seen = await failure(client)
    assert err.kind == "answer_too_large" and "LLM_MAX_ANSWER_BYTES" in str(err)
    shown = sum(len(e.text) for e in seen if isinstance(e, TextDelta))
    assert 49000 <= shown <= 50000  # nothing past the cap was kept or shown
    assert sleeper.delays == [] and len(server.chat_requests) == 1
    assert server.disconnected.wait(5)  # the stream was closed, not left running


async def test_one_enormous_event_is_stopped_too(tmp_path, scripted_server):
    chunk = {"choices": [{"index": 0, "delta": {"content": "y" * 300_000}}]}
    body = b"data: " + json.dumps(chunk).encode() * 3
    server = scripted_server([page(body, "text/event-stream", framing="close")])
    client, _ = client_for(settings_with(tmp_path, server, LLM_MAX_ANSWER_BYTES="100000"))
    err, _ = await failure(client)
    assert err.kind == "answer_too_large"


async def test_a_slow_endless_stream_stops_at_the_deadline(tmp_path, scripted_server):
    server = scripted_server([endless("tick ", delay=0.05)])
    client, sleeper = client_for(settings_with(tmp_path, server, LLM_REQUEST_DEADLINE="1"))
    err, seen = await failure(client)
    assert err.kind == "deadline" and "LLM_REQUEST_DEADLINE" in str(err)
    assert "1s" in err.message and not err.retryable
    assert any(isinstance(e, TextDelta) for e in seen)
    assert sleeper.delays == []
    assert server.disconnected.wait(5)


async def test_the_deadline_bounds_a_server_that_never_answers(tmp_path, scripted_server):
    from tests.support.scripted_model import hang

    server = scripted_server([hang(3.0)])
    settings = settings_with(tmp_path, server, LLM_REQUEST_DEADLINE="0.5", LLM_TIMEOUT="30")
    client, _ = client_for(settings)
    err, _ = await failure(client)
    assert err.kind == "deadline"


async def test_complete_has_the_cap_too(tmp_path, scripted_server):
    server = scripted_server([text("z" * 5000)])
    client, _ = client_for(settings_with(tmp_path, server, LLM_MAX_ANSWER_BYTES="1000"))
    with pytest.raises(LLMError) as info:
        await client.complete(USER)
    assert info.value.kind == "answer_too_large"


def test_cap_and_deadline_settings(tmp_path):
    from hello_tui.config import ConfigError

    default = load_settings(tmp_path, environ={})
    assert default.max_answer_bytes == 1 << 20 and default.request_deadline == 600.0
    assert default.sources["max_answer_bytes"] == "default"
    tuned = load_settings(
        tmp_path, environ={"LLM_MAX_ANSWER_BYTES": "2048", "LLM_REQUEST_DEADLINE": "12.5"}
    )
    assert (tuned.max_answer_bytes, tuned.request_deadline) == (2048, 12.5)
    assert tuned.sources["request_deadline"] == "env LLM_REQUEST_DEADLINE"
    for bad in ({"LLM_MAX_ANSWER_BYTES": "0"}, {"LLM_REQUEST_DEADLINE": "-1"}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            load_settings(tmp_path, environ=bad)
    with pytest.raises(ConfigError, match="whole number"):
        load_settings(tmp_path, environ={"LLM_MAX_ANSWER_BYTES": "1MiB"})


# ---------------------------------------------------------------- not a model


async def test_an_html_page_mid_turn_is_one_clear_error(tmp_path, scripted_server):
    server = scripted_server([html_page("Corporate Proxy – Sign in"), text("never")])
    client, sleeper = client_for(settings_with(tmp_path, server))
    err, seen = await failure(client, tools=TOOLS)
    assert err.kind == "not_openai" and not err.retryable
    assert f"{server.base_url}/chat/completions" in err.message
    assert "HTML page" in err.message and "Corporate Proxy" in err.message
    assert "sign in" in err.hint.lower() or "proxy" in err.hint.lower()
    assert "\n" not in str(err)
    assert seen == [] and sleeper.delays == [] and len(server.chat_requests) == 1


@pytest.mark.parametrize("framing", ["length", "chunked", "close"])
async def test_an_html_page_without_a_content_type_is_found_by_its_body(
    tmp_path, scripted_server, framing
):
    body = "<!DOCTYPE html><html><head><title>Welcome</title></head><body>hi</body></html>"
    server = scripted_server([page(body, "application/octet-stream", framing=framing)])
    client, _ = client_for(settings_with(tmp_path, server))
    err, _ = await failure(client)
    assert err.kind == "not_openai" and '"Welcome"' in err.message


async def test_plain_text_is_not_an_answer(tmp_path, scripted_server):
    server = scripted_server([page("It works!\n", "text/plain")])
    client, _ = client_for(settings_with(tmp_path, server))
    err, _ = await failure(client)
    assert err.kind == "not_openai" and 'plain text ("It works!")' in err.message


async def test_json_that_is_not_a_completion_is_not_an_answer(tmp_path, scripted_server):
    server = scripted_server([page('{"detail": "Not Found"}', "application/json")])
    client, _ = client_for(settings_with(tmp_path, server))
    err, _ = await failure(client)
    assert err.kind == "not_openai" and '{"detail": "Not Found"}' in err.message


async def test_an_event_stream_of_foreign_events_is_not_an_answer(tmp_path, scripted_server):
    body = (
        'event: message_start\ndata: {"type": "message_start"}\n\n'
        'event: content_block_delta\ndata: {"type": "content_block_delta"}\n\n'
    )
    server = scripted_server([page(body, "text/event-stream", framing="chunked")])
    client, _ = client_for(settings_with(tmp_path, server))
    err, _ = await failure(client)
    assert err.kind == "not_openai" and "message_start" in err.message


async def test_a_json_error_with_status_200_is_a_server_error(tmp_path, scripted_server):
    oops = page('{"error": {"message": "upstream overloaded"}}', "application/json")
    server = scripted_server([oops, text("recovered")])
    client, sleeper = client_for(settings_with(tmp_path, server))
    assert (await collect(client))[-1].content == "recovered"
    assert len(sleeper.delays) == 1


async def test_a_server_that_ignores_stream_still_answers(tmp_path, scripted_server):
    server = scripted_server([unstreamed(text("all at once"))])
    client, _ = client_for(settings_with(tmp_path, server))
    events = await collect(client)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["all at once"]
    assert events[-1].content == "all at once"


async def test_a_server_that_streams_unasked_still_answers(tmp_path, scripted_server):
    sse = (
        'data: {"choices": [{"index": 0, "delta": {"content": "str"}}]}\n\n'
        'data: {"choices": [{"index": 0, "delta": {"content": "eamed"}, '
        '"finish_reason": "stop"}]}\n\ndata: [DONE]\n\n'
    )
    server = scripted_server([page(sse, "text/event-stream")])
    client, _ = client_for(settings_with(tmp_path, server))
    assert (await client.complete(USER)).content == "streamed"


async def test_preflight_against_an_html_page_names_the_url_and_the_fix(tmp_path, scripted_server):
    server = scripted_server([], preflight=html_page("Sign in to continue"))
    result = await LLMClient(settings_with(tmp_path, server)).preflight()
    assert not result.ok
    assert "AttributeError" not in result.message
    assert f"{server.base_url}/chat/completions" in result.message
    assert "HTML page" in result.message


async def test_a_base_url_missing_v1_is_named_as_the_fix(tmp_path, scripted_server):
    server = scripted_server([], site_page=html_page("My Web App", "Welcome"))
    root = f"http://127.0.0.1:{server.port}"
    result = await LLMClient(load_settings(tmp_path, base_url=root, environ={})).preflight()
    assert not result.ok
    assert f"{root}/chat/completions answered 200 with an HTML page" in result.message
    assert f"--base-url {root}/v1" in result.hint
    assert "/chat/completions" in server.native_requests


async def test_a_proxy_login_page_is_named_as_the_likely_cause(tmp_path, scripted_server):
    server = scripted_server([html_page("Sign in", "Enter your password")])
    client, _ = client_for(settings_with(tmp_path, server))
    err, _ = await failure(client)
    assert "proxy or login page" in err.hint


async def test_an_html_error_page_is_described_in_one_line(tmp_path, scripted_server):
    bad_gateway = page(
        "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body>\n</html>\n",
        status=502,
    )
    server = scripted_server([bad_gateway] * 3)
    client, _ = client_for(settings_with(tmp_path, server))
    err, _ = await failure(client)
    assert err.kind == "server" and '502: an HTML page ("502 Bad Gateway")' in err.message
    assert "\n" not in str(err) and "<html>" not in str(err)


# ---------------------------------------------------------------- which 4xx mean "no tools here"


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "registry.ollama.ai/library/gemma:2b does not support tools"),
        (
            400,
            '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
        ),
        (500, "tools param requires --jinja flag"),
        (400, "deepseek-reasoner does not support Function Calling"),
        (400, "Unrecognized request argument supplied: tools"),
        (422, "tools: Extra inputs are not permitted"),
    ],
)
async def test_endpoints_that_cannot_take_tools(tmp_path, scripted_server, status, message):
    from tests.support.scripted_model import error

    server = scripted_server([error(status, message)])
    client, sleeper = client_for(settings_with(tmp_path, server))
    err, _ = await failure(client, tools=TOOLS)
    assert err.kind == "tools_unsupported", err
    assert sleeper.delays == []


@pytest.mark.parametrize(
    "message",
    [
        (
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'."
        ),
        (
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'."
        ),
        "Invalid 'tools[0].function.name': string does not match pattern.",
    ],
)
async def test_a_malformed_request_mentioning_tools_is_not_a_reason_to_drop_them(
    tmp_path, scripted_server, message
):
    from tests.support.scripted_model import error

    server = scripted_server([error(400, message)])
    client, _ = client_for(settings_with(tmp_path, server))
    err, _ = await failure(client, tools=TOOLS)
    assert err.kind == "bad_request", err
