"""The model client against the scripted server: streaming, assembly, retries, cancel, preflight."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import subprocess
import sys
import time

import pytest

from hello_tui.config import load_settings
from hello_tui.llm import (
    Completion,
    LLMClient,
    LLMError,
    ReasoningDelta,
    StreamRestarted,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallDelta,
    cost,
)
from tests.support.scripted_model import (
    call,
    drop,
    error,
    hang,
    malformed,
    reject_tools,
    slow,
    stall,
    stream_error,
    text,
    tool_calls,
)

USER = [{"role": "user", "content": "hello"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read",
            "description": "read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


class SleepRecorder:
    """Stands in for asyncio.sleep so retries are instant but their delays observable."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def client_for(settings, **kwargs) -> tuple[LLMClient, SleepRecorder]:
    sleeper = SleepRecorder()
    return LLMClient(settings, sleep=sleeper, **kwargs), sleeper


async def collect(client: LLMClient, **kwargs) -> list:
    return [event async for event in client.stream_chat(USER, **kwargs)]


async def test_streamed_text_arrives_in_deltas_then_one_completion(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("Hello, streaming world!", chunk_size=3)])
    client, _ = client_for(model_settings(tmp_path, server))
    events = await collect(client)
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 5
    assert "".join(d.text for d in deltas) == "Hello, streaming world!"
    completions = [e for e in events if isinstance(e, Completion)]
    assert completions == [events[-1]]
    done = events[-1]
    assert done.content == "Hello, streaming world!"
    assert done.finish_reason == "stop"
    assert done.tool_calls == []
    assert isinstance(done.usage, TokenUsage) and done.usage.completion_tokens > 0
    body = server.requests[-1]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == USER and body["model"] == "scripted-model"


async def test_explicit_usage_is_reported(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("ok", usage=(120, 7))])
    client, _ = client_for(model_settings(tmp_path, server))
    done = (await collect(client))[-1]
    assert done.usage == TokenUsage(120, 7)
    assert done.usage.total_tokens == 127


async def test_reasoning_deltas_are_separate_from_text(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("answer", reasoning="let me think first")])
    client, _ = client_for(model_settings(tmp_path, server))
    events = await collect(client)
    thought = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    said = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert thought == "let me think first"
    assert said == "answer"
    assert events[-1].reasoning == "let me think first"


async def test_tool_call_arguments_assembled_across_interleaved_chunks(
    tmp_path, scripted_server, model_settings
):
    calls = [
        call("read", {"path": "src/app.py", "start": 1, "end": 40}, id="call_a"),
        call("grep", {"pattern": "def main", "glob": "*.py"}, id="call_b"),
    ]
    server = scripted_server([tool_calls(calls, content="Looking.", chunk_size=3)])
    client, _ = client_for(model_settings(tmp_path, server))
    events = await collect(client, tools=TOOLS)
    fragments = [e for e in events if isinstance(e, ToolCallDelta)]
    # Fragments of both calls alternate: the assembler must sort them by index.
    indexes = [f.index for f in fragments if f.arguments_fragment]
    assert indexes[:4] == [0, 1, 0, 1]
    assert len(fragments) > 10
    done = events[-1]
    assert done.finish_reason == "tool_calls"
    assert done.content == "Looking."
    assert done.tool_calls == [
        ToolCall("call_a", "read", calls[0].arguments),
        ToolCall("call_b", "grep", calls[1].arguments),
    ]
    assert server.requests[-1]["tools"] == TOOLS


async def test_invalid_tool_json_is_passed_through_verbatim(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([tool_calls([call("read", '{"path": "x"', id="c1")])])
    client, _ = client_for(model_settings(tmp_path, server))
    done = (await collect(client, tools=TOOLS))[-1]
    assert done.tool_calls == [ToolCall("c1", "read", '{"path": "x"')]


async def test_429_is_retried_honouring_retry_after(tmp_path, scripted_server, model_settings):
    server = scripted_server([error(429, retry_after=7), text("after the wait")])
    notices: list[tuple[int, float, str]] = []
    client, sleeper = client_for(
        model_settings(tmp_path, server), on_retry=lambda a, d, r: notices.append((a, d, r))
    )
    done = (await collect(client))[-1]
    assert done.content == "after the wait"
    assert sleeper.delays == [7.0]
    assert notices[0][0] == 1 and notices[0][1] == 7.0 and "429" in notices[0][2]


async def test_retry_after_is_capped(tmp_path, scripted_server, model_settings):
    server = scripted_server([error(429, retry_after=3600), text("ok")])
    client, sleeper = client_for(model_settings(tmp_path, server), retry_after_cap=30.0)
    await collect(client)
    assert sleeper.delays == [30.0]


async def test_500s_back_off_exponentially_then_succeed(tmp_path, scripted_server, model_settings):
    server = scripted_server([error(500), error(503), text("third time")])
    client, sleeper = client_for(model_settings(tmp_path, server), jitter=lambda: 0.5)
    done = (await collect(client))[-1]
    assert done.content == "third time"
    # base 0.5 s, doubled each attempt, jitter factor 0.5 + 0.5 = 1.0
    assert sleeper.delays == [0.5, 1.0]


async def test_jitter_spreads_delays(tmp_path, scripted_server, model_settings):
    settings = model_settings(tmp_path, scripted_server([]))
    low = LLMClient(settings, jitter=lambda: 0.0)
    high = LLMClient(settings, jitter=lambda: 0.99)
    err = LLMError("boom", "server")
    assert low.retry_delay(err, 2) == pytest.approx(0.5)
    assert high.retry_delay(err, 2) == pytest.approx(1.49)
    assert low.retry_delay(err, 10) <= low.max_delay


async def test_gives_up_after_three_attempts_with_a_clear_error(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([error(500), error(500), error(500), text("never")])
    client, sleeper = client_for(model_settings(tmp_path, server))
    with pytest.raises(LLMError) as info:
        await collect(client)
    assert info.value.kind == "server"
    assert "3 attempts" in str(info.value)
    assert len(sleeper.delays) == 2
    assert len(server.requests) == 3
    assert server.remaining == 1


async def test_auth_error_is_not_retried_and_names_the_key(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([error(401), text("never")])
    client, sleeper = client_for(model_settings(tmp_path, server))
    with pytest.raises(LLMError) as info:
        await collect(client)
    assert info.value.kind == "auth"
    assert "LLM_API_KEY" in info.value.hint and "--api-key" in info.value.hint
    assert sleeper.delays == []


async def test_insufficient_quota_is_not_retried(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [error(429, "You exceeded your current quota.", code="insufficient_quota"), text("x")]
    )
    client, sleeper = client_for(model_settings(tmp_path, server))
    with pytest.raises(LLMError) as info:
        await collect(client)
    assert info.value.kind == "rate_limit" and not info.value.retryable
    assert sleeper.delays == []


async def test_drop_before_any_text_is_retried(tmp_path, scripted_server, model_settings):
    # One chunk (the empty role delta) reaches the client, then the connection dies:
    # nothing was shown yet, so a retry is safe.
    server = scripted_server([drop(after_chunks=1), text("second try")])
    client, sleeper = client_for(model_settings(tmp_path, server))
    events = await collect(client)
    assert events[-1].content == "second try"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "second try"
    assert len(sleeper.delays) == 1


async def test_drop_after_text_restarts_once_and_says_so(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [drop(after_chunks=3, reply=text("abcdefghij", chunk_size=2)), text("second answer")]
    )
    client, sleeper = client_for(model_settings(tmp_path, server))
    events = await collect(client)
    restart = next(i for i, e in enumerate(events) if isinstance(e, StreamRestarted))
    before = "".join(e.text for e in events[:restart] if isinstance(e, TextDelta))
    after = "".join(e.text for e in events[restart:] if isinstance(e, TextDelta))
    assert before == "abcd"
    assert after == "second answer"
    assert events[restart].attempt == 2 and "cut off" in events[restart].reason
    assert events[-1].content == "second answer"
    assert len(sleeper.delays) == 1


async def test_stall_after_text_still_raises_instead_of_duplicating(tmp_path, scripted_server):
    server = scripted_server([stall(3, 1.0, text("abcdefghij", chunk_size=2)), text("unused")])
    settings = load_settings(
        tmp_path, base_url=server.base_url, model="m", environ={"LLM_TIMEOUT": "0.3"}
    )
    client, sleeper = client_for(settings)
    with pytest.raises(LLMError) as info:
        await collect(client)
    assert info.value.kind == "timeout"
    assert "mid-stream" in str(info.value)
    assert sleeper.delays == []
    assert server.remaining == 1


async def test_malformed_chunk_becomes_a_protocol_error(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [malformed(after_chunks=2), malformed(after_chunks=2), malformed(after_chunks=2)]
    )
    client, _ = client_for(model_settings(tmp_path, server))
    with pytest.raises(LLMError) as info:
        await collect(client)
    assert info.value.kind == "protocol"
    assert "not valid JSON" in str(info.value)


async def test_malformed_before_text_is_retried(tmp_path, scripted_server, model_settings):
    server = scripted_server([malformed(after_chunks=1), text("clean")])
    client, sleeper = client_for(model_settings(tmp_path, server))
    assert (await collect(client))[-1].content == "clean"
    assert len(sleeper.delays) == 1


async def test_timeout_is_retried_then_reported(tmp_path, scripted_server):
    server = scripted_server([hang(1.0), hang(1.0)])
    settings = load_settings(
        tmp_path, base_url=server.base_url, model="m", environ={"LLM_TIMEOUT": "0.2"}
    )
    client, sleeper = client_for(settings, max_attempts=2)
    with pytest.raises(LLMError) as info:
        await collect(client)
    assert info.value.kind == "timeout"
    assert "LLM_TIMEOUT" in info.value.hint
    assert len(sleeper.delays) == 1


async def test_unreachable_url_names_base_url(tmp_path, scripted_server):
    server = scripted_server([])
    url = server.base_url
    server.stop()
    settings = load_settings(tmp_path, base_url=url, model="m", environ={})
    client, sleeper = client_for(settings)
    with pytest.raises(LLMError) as info:
        await collect(client)
    assert info.value.kind == "unreachable"
    assert "LLM_BASE_URL" in info.value.hint
    assert len(sleeper.delays) == 2


async def test_tools_rejected_is_its_own_kind(tmp_path, scripted_server, model_settings):
    server = scripted_server([reject_tools()])
    client, sleeper = client_for(model_settings(tmp_path, server))
    with pytest.raises(LLMError) as info:
        await collect(client, tools=TOOLS)
    assert info.value.kind == "tools_unsupported"
    assert sleeper.delays == []


async def test_server_wide_tool_rejection_lets_plain_requests_through(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("plain answer")], reject_tools=True)
    client, _ = client_for(model_settings(tmp_path, server))
    with pytest.raises(LLMError) as info:
        await collect(client, tools=TOOLS)
    assert info.value.kind == "tools_unsupported"
    assert (await collect(client))[-1].content == "plain answer"


async def test_unknown_model_is_not_found_naming_the_model_setting(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("x")], models=["real-model"])
    client, _ = client_for(model_settings(tmp_path, server, model="imaginary"))
    with pytest.raises(LLMError) as info:
        await collect(client)
    assert info.value.kind == "not_found"
    assert "LLM_MODEL_ID" in info.value.hint and "imaginary" in str(info.value)


async def test_stream_options_rejection_falls_back_and_is_remembered(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("one"), text("two")], reject_stream_options=True)
    client, sleeper = client_for(model_settings(tmp_path, server))
    first = (await collect(client))[-1]
    second = (await collect(client))[-1]
    assert (first.content, second.content) == ("one", "two")
    assert first.usage is None
    assert client.stream_options_supported is False
    # 1 rejected + 1 retried for the first answer, then straight through.
    assert [("stream_options" in r) for r in server.requests] == [True, False, False]
    assert sleeper.delays == []


async def test_cancel_closes_the_stream_at_once(tmp_path, scripted_server, model_settings):
    # 200 chunks x 50 ms = 10 s of stream; cancelling must not wait for it.
    server = scripted_server([slow("x" * 200, delay=0.05)])
    client, _ = client_for(model_settings(tmp_path, server))
    first_text = asyncio.Event()

    async def consume() -> None:
        async for event in client.stream_chat(USER):
            if isinstance(event, TextDelta):
                first_text.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_text.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The stream had about ten seconds left: the server seeing the client hang up proves
    # the cancel closed the connection rather than reading the stream to its end.
    assert await asyncio.to_thread(server.disconnected.wait, 5)


async def test_aclose_closes_the_stream(tmp_path, scripted_server, model_settings):
    server = scripted_server([slow("y" * 200, delay=0.05)])
    client, _ = client_for(model_settings(tmp_path, server))
    async with contextlib.aclosing(client.stream_chat(USER)) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                break
    assert await asyncio.to_thread(server.disconnected.wait, 5)


async def test_complete_returns_text_and_tool_calls(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [text("summary here", usage=(50, 3)), tool_calls([call("read", {"path": "a"}, id="k")])]
    )
    client, _ = client_for(model_settings(tmp_path, server))
    summary = await client.complete(USER, max_tokens=400)
    assert summary.content == "summary here" and summary.usage == TokenUsage(50, 3)
    assert server.requests[-1]["max_tokens"] == 400
    assert server.requests[-1].get("stream") in (None, False)
    called = await client.complete(USER, tools=TOOLS)
    assert called.tool_calls == [ToolCall("k", "read", '{"path": "a"}')]


async def test_complete_retries_too(tmp_path, scripted_server, model_settings):
    server = scripted_server([error(502), text("fine")])
    client, sleeper = client_for(model_settings(tmp_path, server))
    assert (await client.complete(USER)).content == "fine"
    assert len(sleeper.delays) == 1


async def test_local_server_without_key_sends_a_dummy(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("hi")])
    settings = model_settings(tmp_path, server)
    assert settings.api_key is None
    client, _ = client_for(settings)
    await collect(client)
    assert server.headers[-1]["authorization"] == "Bearer not-needed"


async def test_configured_key_is_sent(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("hi")], api_key="sk-test-123")
    client, _ = client_for(model_settings(tmp_path, server))
    assert (await collect(client))[-1].content == "hi"
    assert server.headers[-1]["authorization"] == "Bearer sk-test-123"


# ---------------------------------------------------------------- preflight


async def test_preflight_ok_does_not_consume_the_script(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("real answer")])
    client, _ = client_for(model_settings(tmp_path, server))
    result = await client.preflight()
    assert result.ok and result.hint == "" and result.latency > 0
    assert server.requests[-1]["max_tokens"] == 1
    assert server.remaining == 1
    assert server.chat_requests == []


async def test_preflight_wrong_key(tmp_path, scripted_server):
    server = scripted_server([], api_key="sk-right")
    settings = load_settings(tmp_path, base_url=server.base_url, api_key="sk-wrong", environ={})
    result = await LLMClient(settings).preflight()
    assert not result.ok
    assert "API key was rejected" in result.message
    assert "LLM_API_KEY" in result.message and "--api-key" in result.message


async def test_preflight_unknown_model(tmp_path, scripted_server, model_settings):
    server = scripted_server([], models=["only-this"])
    result = await LLMClient(model_settings(tmp_path, server, model="nope")).preflight()
    assert not result.ok
    assert "LLM_MODEL_ID" in result.message and "--model" in result.message
    assert "nope" in result.message


async def test_preflight_unreachable_does_not_retry(tmp_path, scripted_server):
    server = scripted_server([])
    url = server.base_url
    server.stop()
    settings = load_settings(tmp_path, base_url=url, environ={})
    client, sleeper = client_for(settings)
    result = await client.preflight()
    assert not result.ok
    assert "LLM_BASE_URL" in result.message
    assert sleeper.delays == []


async def test_preflight_retries_a_rate_limit(tmp_path, scripted_server, model_settings):
    server = scripted_server([], preflight=error(429, retry_after=1))
    client, sleeper = client_for(model_settings(tmp_path, server))
    result = await client.preflight()
    assert not result.ok and "rate limited" in result.message.lower()
    assert sleeper.delays == [1.0, 1.0]


async def test_preflight_missing_key_names_the_provider_variable(tmp_path):
    settings = load_settings(
        tmp_path,
        environ={"LLM_BASE_URL": "https://api.deepseek.com/v1", "OPENAI_API_KEY": "sk-openai"},
    )
    assert settings.api_key is None
    result = await LLMClient(settings).preflight()
    assert not result.ok
    assert "DEEPSEEK_API_KEY" in result.hint and "LLM_API_KEY" in result.hint
    assert result.latency == 0.0


# ---------------------------------------------------------------- cost


def test_cost_uses_prices_per_million(tmp_path):
    priced = load_settings(
        tmp_path, environ={"LLM_PRICE_INPUT": "2", "LLM_PRICE_OUTPUT": "8", "LLM_API_KEY": "k"}
    )
    assert cost(TokenUsage(1_000_000, 500_000), priced) == pytest.approx(6.0)
    assert cost(None, priced) is None
    input_only = load_settings(tmp_path, environ={"LLM_PRICE_INPUT": "1", "LLM_API_KEY": "k"})
    assert cost(TokenUsage(2_000_000, 999), input_only) == pytest.approx(2.0)


# ---------------------------------------------------------------- edges


async def test_error_object_inside_the_stream(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [
            stream_error(after_chunks=1, message="worker crashed"),
            text("recovered"),
            stream_error(3, "worker crashed", reply=text("abcdefgh", chunk_size=2)),
        ]
    )
    client, sleeper = client_for(model_settings(tmp_path, server))
    assert (await collect(client))[-1].content == "recovered"
    assert len(sleeper.delays) == 1
    with pytest.raises(LLMError) as info:
        await collect(client)
    assert info.value.kind == "server" and "worker crashed" in str(info.value)


async def test_complete_reads_reasoning(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("42", reasoning="six times seven")])
    client, _ = client_for(model_settings(tmp_path, server))
    done = await client.complete(USER)
    assert (done.content, done.reasoning, done.finish_reason) == ("42", "six times seven", "stop")


def test_retry_after_header_forms():
    from hello_tui.llm.errors import retry_after_seconds as _retry_after_seconds

    assert _retry_after_seconds({"retry-after": "12"}) == 12.0
    assert _retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert _retry_after_seconds({}) is None
    assert _retry_after_seconds({"retry-after": "whenever"}) is None
    future = email.utils.formatdate(time.time() + 20, usegmt=True)
    assert 15 <= _retry_after_seconds({"retry-after": future}) <= 21


def _chunk(tool_calls: list[dict]) -> dict:
    # As decoded from the wire: fields a sloppy server leaves out are simply missing.
    return {
        "id": "x",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"tool_calls": tool_calls}, "finish_reason": None}],
    }


def test_assembler_tolerates_missing_index_and_split_names():
    from hello_tui.llm.assembly import StreamAssembler

    asm = StreamAssembler()
    asm.feed(_chunk([{"id": "a1", "function": {"name": "re", "arguments": ""}}]))
    asm.feed(_chunk([{"function": {"name": "ad", "arguments": '{"pa'}}]))
    asm.feed(_chunk([{"function": {"arguments": 'th": 1}'}}]))
    asm.feed(_chunk([{"id": "b2", "function": {"name": "ls", "arguments": "{}"}}]))
    done = asm.completion()
    assert done.tool_calls == [
        ToolCall("a1", "read", '{"path": 1}'),
        ToolCall("b2", "ls", "{}"),
    ]


def test_assembler_invents_ids_when_the_server_sends_none():
    from hello_tui.llm.assembly import StreamAssembler

    asm = StreamAssembler()
    asm.feed(_chunk([{"index": 0, "function": {"name": "ls", "arguments": "{}"}}]))
    assert asm.completion().tool_calls == [ToolCall("call_0", "ls", "{}")]


def test_importing_the_client_module_does_not_load_openai():
    code = "import sys, hello_tui.llm, hello_tui.commands.doctor; print('openai' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.stdout.strip() == "False", proc.stderr


async def test_url_without_v1_points_at_the_base_url(tmp_path, scripted_server):
    server = scripted_server([])
    settings = load_settings(tmp_path, base_url=f"http://127.0.0.1:{server.port}", environ={})
    result = await LLMClient(settings).preflight()
    assert not result.ok
    assert "LLM_BASE_URL" in result.hint and "/v1" in result.hint


async def test_other_400s_are_bad_requests_and_not_retried(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([error(400, "max_tokens is too large for this model"), text("x")])
    client, sleeper = client_for(model_settings(tmp_path, server))
    with pytest.raises(LLMError) as info:
        await collect(client, tools=TOOLS)
    assert info.value.kind == "bad_request" and info.value.status == 400
    assert "max_tokens is too large" in str(info.value)
    assert sleeper.delays == []
