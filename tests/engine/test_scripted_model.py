"""The scripted model server on the wire: SSE framing, scripts, errors and options (raw HTTP)."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlparse

import pytest

from tests.support.scripted_model import (
    TOOLS_UNSUPPORTED_MESSAGE,
    ScriptedModelServer,
    call,
    drop,
    error,
    malformed,
    reject_tools,
    text,
    tool_calls,
)


def post(server: ScriptedModelServer, body: dict, headers: dict | None = None):
    """POST /v1/chat/completions; returns (status, headers, raw body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    payload = json.dumps({"model": "scripted-model", "messages": [], **body})
    conn.request(
        "POST",
        "/v1/chat/completions",
        payload,
        {"Content-Type": "application/json", **(headers or {})},
    )
    resp = conn.getresponse()
    try:
        data = resp.read()
    except http.client.IncompleteRead as exc:
        data = exc.partial + b"<INCOMPLETE>"
    conn.close()
    return resp.status, dict(resp.getheaders()), data


def get(server: ScriptedModelServer, path: str, headers: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("GET", path, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, json.loads(data)


def sse_payloads(raw: bytes) -> list[str]:
    """The `data:` payloads of an SSE body, in order."""
    return [
        line[len("data: ") :] for line in raw.decode().split("\n\n") if line.startswith("data: ")
    ]


def chunks(raw: bytes) -> list[dict]:
    return [json.loads(p) for p in sse_payloads(raw) if p != "[DONE]"]


def test_base_url_and_lifecycle():
    server = ScriptedModelServer([text("x")])
    with pytest.raises(RuntimeError):
        _ = server.base_url
    with server:
        url = urlparse(server.base_url)
        assert url.hostname == "127.0.0.1" and url.path == "/v1" and url.port == server.port
    with pytest.raises(RuntimeError):
        _ = server.port


def test_stream_is_real_sse_with_done_and_usage_when_asked(scripted_server):
    server = scripted_server([text("hello there", chunk_size=2)])
    status, headers, raw = post(server, {"stream": True, "stream_options": {"include_usage": True}})
    assert status == 200
    assert headers["Content-Type"] == "text/event-stream"
    assert headers["Transfer-Encoding"] == "chunked"
    payloads = sse_payloads(raw)
    assert payloads[-1] == "[DONE]"
    parsed = chunks(raw)
    assert all(c["object"] == "chat.completion.chunk" for c in parsed)
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in parsed if c["choices"])
    assert content == "hello there"
    assert len(parsed) >= 8  # 6 content pieces + role + finish + usage
    assert parsed[-2]["choices"][0]["finish_reason"] == "stop"
    assert parsed[-1]["choices"] == [] and parsed[-1]["usage"]["completion_tokens"] >= 1


def test_stream_without_include_usage_has_no_usage(scripted_server):
    server = scripted_server([text("hi")])
    _, _, raw = post(server, {"stream": True})
    assert all("usage" not in c for c in chunks(raw))


def test_non_stream_answer_always_has_usage(scripted_server):
    server = scripted_server([text("whole answer", usage=(11, 2))])
    status, headers, raw = post(server, {})
    body = json.loads(raw)
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "whole answer"}
    assert body["usage"] == {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13}


def test_tool_calls_stream_split_and_interleaved(scripted_server):
    calls = [call("read", {"path": "a.py"}, id="call_1"), call("ls", {"path": "."}, id="call_2")]
    server = scripted_server([tool_calls(calls, chunk_size=2)])
    _, _, raw = post(server, {"stream": True})
    parts = [c["choices"][0] for c in chunks(raw)]
    assert parts[-1]["finish_reason"] == "tool_calls"
    opened = [tc for p in parts for tc in p["delta"].get("tool_calls", []) if "id" in tc]
    assert [(t["index"], t["id"], t["function"]["name"]) for t in opened] == [
        (0, "call_1", "read"),
        (1, "call_2", "ls"),
    ]
    fragments: dict[int, list[str]] = {0: [], 1: []}
    order = []
    for p in parts:
        for tc in p["delta"].get("tool_calls", []):
            if tc["function"].get("arguments"):
                fragments[tc["index"]].append(tc["function"]["arguments"])
                order.append(tc["index"])
    assert "".join(fragments[0]) == json.dumps({"path": "a.py"})
    assert "".join(fragments[1]) == json.dumps({"path": "."})
    assert order[:4] == [0, 1, 0, 1]
    assert all(len(f) <= 2 for f in fragments[0])


def test_tool_calls_non_stream(scripted_server):
    server = scripted_server([tool_calls([call("read", {"path": "b"}, id="c9")], content="hm")])
    _, _, raw = post(server, {})
    choice = json.loads(raw)["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "hm"
    assert choice["message"]["tool_calls"] == [
        {"id": "c9", "type": "function", "function": {"name": "read", "arguments": '{"path": "b"}'}}
    ]


def test_generated_call_ids_are_distinct():
    assert call("a").id != call("a").id
    assert call("a").id.startswith("call_")


def test_reasoning_streams_as_reasoning_content(scripted_server):
    server = scripted_server([text("done", reasoning="think")])
    _, _, raw = post(server, {"stream": True})
    deltas = [c["choices"][0]["delta"] for c in chunks(raw)]
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "think"
    assert "".join(d.get("content", "") or "" for d in deltas) == "done"


def test_replies_are_consumed_in_order_then_exhausted(scripted_server):
    server = scripted_server([text("one"), text("two")])
    answers = [
        json.loads(post(server, {})[2])["choices"][0]["message"]["content"] for _ in range(2)
    ]
    assert answers == ["one", "two"]
    status, _, raw = post(server, {})
    assert status == 500
    assert "script exhausted" in json.loads(raw)["error"]["message"]
    assert len(server.requests) == 3


def test_callable_script_sees_the_request(scripted_server):
    def script(body: dict):
        return text("you said " + body["messages"][-1]["content"])

    server = scripted_server(script)
    _, _, raw = post(server, {"messages": [{"role": "user", "content": "ping"}]})
    assert json.loads(raw)["choices"][0]["message"]["content"] == "you said ping"


def test_add_extends_the_script(scripted_server):
    server = scripted_server([])
    server.add(text("late"))
    assert server.remaining == 1
    assert json.loads(post(server, {})[2])["choices"][0]["message"]["content"] == "late"
    assert server.remaining == 0


def test_errors_have_openai_bodies_and_retry_after(scripted_server):
    server = scripted_server([error(429, retry_after=3), error(500), error(404)])
    status, headers, raw = post(server, {})
    assert status == 429 and headers["Retry-After"] == "3"
    assert json.loads(raw)["error"]["code"] == "rate_limit_exceeded"
    status, headers, raw = post(server, {})
    assert status == 500 and "Retry-After" not in headers
    assert json.loads(raw)["error"]["type"] == "server_error"
    status, _, raw = post(server, {})
    assert status == 404 and json.loads(raw)["error"]["code"] == "model_not_found"


def test_drop_cuts_the_chunked_body(scripted_server):
    server = scripted_server([drop(after_chunks=2)])
    status, _, raw = post(server, {"stream": True})
    assert status == 200
    assert raw.endswith(b"<INCOMPLETE>")
    assert b"[DONE]" not in raw
    assert len(sse_payloads(raw.replace(b"<INCOMPLETE>", b""))) == 2


def test_malformed_sends_a_non_json_data_line(scripted_server):
    server = scripted_server([malformed(after_chunks=1), malformed()])
    _, _, raw = post(server, {"stream": True})
    payloads = sse_payloads(raw)
    json.loads(payloads[0])
    with pytest.raises(json.JSONDecodeError):
        json.loads(payloads[1])
    _, _, raw = post(server, {})
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)


def test_preflight_is_answered_without_consuming_the_script(scripted_server):
    server = scripted_server([text("kept")])
    status, _, raw = post(server, {"max_tokens": 1})
    assert status == 200 and json.loads(raw)["usage"]["completion_tokens"] == 1
    assert server.remaining == 1 and server.chat_requests == []
    assert len(server.requests) == 1


def test_preflight_reply_can_be_scripted(scripted_server):
    server = scripted_server([], preflight=error(500))
    assert post(server, {"max_tokens": 1})[0] == 500


def test_required_api_key(scripted_server):
    server = scripted_server([text("a"), text("b")], api_key="sk-test")
    status, _, raw = post(server, {})
    assert status == 401 and json.loads(raw)["error"]["code"] == "invalid_api_key"
    status, _, _ = post(server, {}, {"Authorization": "Bearer sk-other"})
    assert status == 401
    status, _, raw = post(server, {}, {"Authorization": "Bearer sk-test"})
    assert status == 200 and json.loads(raw)["choices"][0]["message"]["content"] == "a"
    assert get(server, "/v1/models")[0] == 401


def test_known_models(scripted_server):
    server = scripted_server([text("a")], models=["m1", "m2"])
    status, raw_body = get(server, "/v1/models")
    assert status == 200 and [m["id"] for m in raw_body["data"]] == ["m1", "m2"]
    status, _, raw = post(server, {"model": "m3"})
    assert status == 404 and json.loads(raw)["error"]["code"] == "model_not_found"
    assert "m3" in json.loads(raw)["error"]["message"]
    assert post(server, {"model": "m1"})[0] == 200


def test_models_default_list(scripted_server):
    status, body = get(scripted_server([]), "/v1/models")
    assert status == 200 and body["data"][0]["id"] == "scripted-model"


def test_reject_tools_reply_only_for_requests_with_tools(scripted_server):
    tools = [{"type": "function", "function": {"name": "read", "parameters": {}}}]
    server = scripted_server([reject_tools(), reject_tools(text("no tools, fine")), text("next")])
    status, _, raw = post(server, {"tools": tools})
    assert status == 400 and json.loads(raw)["error"]["message"] == TOOLS_UNSUPPORTED_MESSAGE
    status, _, raw = post(server, {})
    assert json.loads(raw)["choices"][0]["message"]["content"] == "no tools, fine"


def test_reject_tools_without_tools_falls_through_to_the_next_reply(scripted_server):
    server = scripted_server([reject_tools(), text("next")])
    status, _, raw = post(server, {})
    assert status == 200 and json.loads(raw)["choices"][0]["message"]["content"] == "next"


def test_server_option_rejects_every_request_with_tools(scripted_server):
    tools = [{"type": "function", "function": {"name": "read", "parameters": {}}}]
    server = scripted_server([text("plain")], reject_tools=True)
    assert post(server, {"tools": tools})[0] == 400
    assert post(server, {"tools": tools})[0] == 400
    assert server.remaining == 1
    assert post(server, {})[0] == 200


def test_reject_stream_options(scripted_server):
    server = scripted_server([text("x")], reject_stream_options=True)
    status, _, raw = post(server, {"stream": True, "stream_options": {"include_usage": True}})
    assert status == 400 and "stream_options" in json.loads(raw)["error"]["message"]
    assert post(server, {"stream": True})[0] == 200


def test_unknown_path_and_bad_json(scripted_server):
    server = scripted_server([])
    assert get(server, "/v1/nothing")[0] == 404
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/v1/chat/completions", b"{not json", {"Content-Type": "application/json"})
    assert conn.getresponse().status == 400
    conn.close()


def test_keep_alive_serves_several_requests_on_one_connection(scripted_server):
    server = scripted_server([text("a"), text("b", chunk_size=1)])
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    for stream, expected in ((False, "a"), (True, "b")):
        conn.request(
            "POST",
            "/v1/chat/completions",
            json.dumps({"model": "m", "messages": [], "stream": stream}),
        )
        raw = conn.getresponse().read()
        got = (
            json.loads(raw)["choices"][0]["message"]["content"]
            if not stream
            else "".join(
                c["choices"][0]["delta"].get("content", "") for c in chunks(raw) if c["choices"]
            )
        )
        assert got == expected
    conn.close()
