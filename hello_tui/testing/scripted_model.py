"""A scripted OpenAI-compatible model server on 127.0.0.1 (tests, benchmarks and `hello-tui demo`).

It speaks the real wire format: `POST /v1/chat/completions` (JSON or SSE
streaming, with content and tool-call arguments split across many chunks)
and `GET /v1/models`. Each chat request is answered by the next scripted
reply (or by a callable script), so a test decides exactly what the "model"
says, which errors it returns, how slowly it streams and where the
connection breaks. Preflight requests (`max_tokens=1`) are answered
automatically without consuming the script.

The server runs in a background thread (ThreadingHTTPServer), so it serves
sync tests, async tests, CLI subprocesses and the Textual app alike.
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

DEFAULT_MODEL = "scripted-model"


# ---------------------------------------------------------------- replies


@dataclass(frozen=True)
class ScriptedCall:
    """One tool call the scripted model makes."""

    name: str
    arguments: str  # JSON text, exactly as it goes on the wire
    id: str = ""


def call(name: str, arguments: dict | str | None = None, id: str | None = None) -> ScriptedCall:
    """A tool call; `arguments` may be a dict or raw (possibly invalid) JSON text."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return ScriptedCall(name=name, arguments=args, id=id or f"call_{uuid.uuid4().hex[:12]}")


@dataclass(frozen=True)
class CompletionReply:
    """An assistant message: text and/or tool calls, streamed in small chunks."""

    content: str = ""
    calls: tuple[ScriptedCall, ...] = ()
    reasoning: str | None = None
    chunk_size: int = 4
    delay: float = 0.0  # seconds before each streamed chunk
    finish_reason: str | None = None
    usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens)

    def resolved_finish_reason(self) -> str:
        if self.finish_reason:
            return self.finish_reason
        return "tool_calls" if self.calls else "stop"

    def token_usage(self, request: dict) -> dict[str, int]:
        if self.usage is not None:
            prompt, completion = self.usage
        else:
            # A rough 4-characters-per-token estimate keeps usage plausible.
            prompt_chars = sum(len(json.dumps(m)) for m in request.get("messages", []))
            completion_chars = len(self.content) + sum(len(c.arguments) for c in self.calls)
            prompt, completion = max(1, prompt_chars // 4), max(1, completion_chars // 4)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    def deltas(self) -> Iterator[dict]:
        """The `delta` objects of a streamed answer, in order (without finish)."""
        size = max(1, self.chunk_size)
        yield {"role": "assistant", "content": ""}
        for piece in _split(self.reasoning or "", size):
            yield {"reasoning_content": piece}
        for piece in _split(self.content, size):
            yield {"content": piece}
        # Every call opens with its id and name, then the argument fragments of
        # all calls are interleaved by index, as parallel tool calls arrive.
        for index, c in enumerate(self.calls):
            yield {
                "tool_calls": [
                    {
                        "index": index,
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": ""},
                    }
                ]
            }
        fragments = [list(_split(c.arguments, size)) for c in self.calls]
        for row in itertools.zip_longest(*fragments):
            for index, piece in enumerate(row):
                if piece is not None:
                    yield {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}

    def message(self) -> dict:
        msg: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.reasoning:
            msg["reasoning_content"] = self.reasoning
        if self.calls:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.calls
            ]
        return msg


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error with an OpenAI-style JSON body."""

    status: int
    message: str
    retry_after: float | None = None
    code: str | None = None
    type: str = "invalid_request_error"


@dataclass(frozen=True)
class DropReply:
    """Streams `after_chunks` chunks of `reply`, then closes the connection abruptly."""

    after_chunks: int
    reply: CompletionReply


@dataclass(frozen=True)
class MalformedReply:
    """Streams `after_chunks` chunks of `reply`, then a `data:` line that is not JSON."""

    after_chunks: int
    reply: CompletionReply


@dataclass(frozen=True)
class StreamErrorReply:
    """Streams `after_chunks` chunks of `reply`, then an error object inside the stream.

    Some servers (vLLM, proxies) report failures this way after a 200 status.
    """

    after_chunks: int
    reply: CompletionReply
    message: str


@dataclass(frozen=True)
class HangReply:
    """Waits `seconds` before answering at all (to exercise client timeouts)."""

    seconds: float
    reply: CompletionReply


@dataclass(frozen=True)
class RejectToolsReply:
    """400 "tools not supported" when the request carries tools; otherwise `otherwise`.

    With `otherwise=None` a request without tools is answered by the next
    scripted reply instead.
    """

    otherwise: Reply | None = None


Reply = (
    CompletionReply
    | ErrorReply
    | DropReply
    | MalformedReply
    | StreamErrorReply
    | HangReply
    | RejectToolsReply
)
Script = Sequence[Reply] | Callable[[dict], Reply]


def text(
    content: str,
    chunk_size: int = 4,
    delay: float = 0.0,
    reasoning: str | None = None,
    usage: tuple[int, int] | None = None,
    finish_reason: str | None = None,
) -> CompletionReply:
    """A plain text answer."""
    return CompletionReply(
        content=content,
        reasoning=reasoning,
        chunk_size=chunk_size,
        delay=delay,
        usage=usage,
        finish_reason=finish_reason,
    )


def tool_calls(
    calls: Sequence[ScriptedCall],
    content: str = "",
    chunk_size: int = 4,
    delay: float = 0.0,
    reasoning: str | None = None,
    usage: tuple[int, int] | None = None,
) -> CompletionReply:
    """An answer that calls tools (finish_reason "tool_calls")."""
    return CompletionReply(
        content=content,
        calls=tuple(calls),
        reasoning=reasoning,
        chunk_size=chunk_size,
        delay=delay,
        usage=usage,
    )


def slow(content: str, delay: float = 0.05, chunk_size: int = 1) -> CompletionReply:
    """A text answer streamed one small chunk at a time with a pause before each."""
    return text(content, chunk_size=chunk_size, delay=delay)


def error(
    status: int,
    message: str | None = None,
    retry_after: float | None = None,
    code: str | None = None,
) -> ErrorReply:
    """An HTTP error; 401/404/429/5xx get OpenAI's usual codes and messages by default."""
    defaults = {
        401: ("Incorrect API key provided.", "invalid_api_key", "invalid_request_error"),
        404: (
            "The model does not exist or you do not have access to it.",
            "model_not_found",
            "invalid_request_error",
        ),
        429: ("Rate limit reached. Please try again later.", "rate_limit_exceeded", "requests"),
        500: ("The server had an error while processing your request.", None, "server_error"),
        502: ("Bad gateway.", None, "server_error"),
        503: ("The engine is currently overloaded.", None, "server_error"),
    }
    msg, default_code, kind = defaults.get(
        status, ("Request failed.", None, "invalid_request_error")
    )
    return ErrorReply(
        status=status,
        message=message or msg,
        retry_after=retry_after,
        code=code if code is not None else default_code,
        type=kind,
    )


def drop(after_chunks: int = 2, reply: CompletionReply | None = None) -> DropReply:
    """Close the connection mid-stream after `after_chunks` chunks."""
    return DropReply(after_chunks, reply or text("this answer is cut off half way through"))


def malformed(after_chunks: int = 2, reply: CompletionReply | None = None) -> MalformedReply:
    """Send a non-JSON `data:` line after `after_chunks` chunks."""
    return MalformedReply(after_chunks, reply or text("this answer turns into garbage"))


def stream_error(
    after_chunks: int = 2,
    message: str = "The model crashed while generating.",
    reply: CompletionReply | None = None,
) -> StreamErrorReply:
    """Send `data: {"error": {...}}` after `after_chunks` chunks, as some servers do."""
    return StreamErrorReply(after_chunks, reply or text("this answer fails half way"), message)


def hang(seconds: float, reply: CompletionReply | None = None) -> HangReply:
    """Answer only after `seconds` (longer than the client's timeout, typically)."""
    return HangReply(seconds, reply or text("too late"))


def reject_tools(otherwise: Reply | None = None) -> RejectToolsReply:
    """Reject a request that carries tools with a 400 "tools are not supported"."""
    return RejectToolsReply(otherwise)


TOOLS_UNSUPPORTED_MESSAGE = "This model does not support tools (function calling is not enabled)."


def _split(s: str, size: int) -> Iterator[str]:
    for i in range(0, len(s), size):
        yield s[i : i + size]


# ---------------------------------------------------------------- server


class _ClientGone(Exception):
    """The client closed the connection while we were writing."""


class _QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (cancelled streams, closed keep-alive connections)
        # are part of the script, not failures worth a stderr traceback.
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class ScriptedModelServer:
    """An OpenAI-compatible HTTP server answering from a script.

    Options: `reject_tools` (every request with tools gets a 400), `api_key`
    (401 unless `Authorization: Bearer <api_key>`), `models` (unknown model
    -> 404 model_not_found), `reject_stream_options` (400 when the request
    asks for stream_options, as some endpoints do), `preflight` (the reply
    to `max_tokens=1` requests; by default a one-token answer).
    """

    def __init__(
        self,
        script: Script = (),
        *,
        reject_tools: bool = False,
        api_key: str | None = None,
        models: Sequence[str] | None = None,
        reject_stream_options: bool = False,
        preflight: Reply | None = None,
    ) -> None:
        self._script_fn: Callable[[dict], Reply] | None = script if callable(script) else None
        self._queue: list[Reply] = [] if callable(script) else list(script)
        self.reject_tools = reject_tools
        self.api_key = api_key
        self.models = list(models) if models is not None else None
        self.reject_stream_options = reject_stream_options
        self.preflight = preflight
        self.requests: list[dict] = []  # every chat-completions body, preflight included
        self.headers: list[dict[str, str]] = []  # the matching request headers, names lower-cased
        self.client_disconnects = 0  # streams the client closed before the end
        self.disconnected = threading.Event()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> Self:
        handler = type("ScriptedHandler", (_Handler,), {"owner": self})
        self._httpd = _QuietHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the scripted model server is not running; call start() first")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- script

    def add(self, *replies: Reply) -> None:
        """Append replies to a list script."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def chat_requests(self) -> list[dict]:
        """Received bodies without the automatic preflight requests."""
        return [r for r in self.requests if not _is_preflight(r)]

    def _record(self, body: dict, headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)

    def _next_reply(self, body: dict) -> Reply:
        if self._script_fn is not None:
            return self._script_fn(body)
        with self._lock:
            if self._queue:
                return self._queue.pop(0)
        return ErrorReply(
            500,
            f"script exhausted: the scripted model has no reply left for request "
            f"#{len(self.requests)}",
            type="server_error",
        )

    def _note_disconnect(self) -> None:
        with self._lock:
            self.client_disconnects += 1
        self.disconnected.set()


def _is_preflight(body: dict) -> bool:
    return body.get("max_tokens") == 1 or body.get("max_completion_tokens") == 1


def _error_body(message: str, code: str | None, kind: str, param: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedModelServer
    protocol_version = "HTTP/1.1"  # chunked streams: a dropped stream is detectably incomplete
    timeout = 30  # idle keep-alive connections free their thread eventually

    def log_message(self, format: str, *args: Any) -> None:
        # Silence the default per-request stderr log.
        return

    # -- plumbing

    def _send_json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_error_reply(self, reply: ErrorReply) -> None:
        headers = {}
        if reply.retry_after is not None:
            headers["Retry-After"] = f"{reply.retry_after:g}"
        self._send_json(reply.status, _error_body(reply.message, reply.code, reply.type), headers)

    def _write_chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as exc:
            raise _ClientGone from exc

    def _check_auth(self) -> bool:
        expected = self.owner.api_key
        if expected is None:
            return True
        if self.headers.get("Authorization", "") == f"Bearer {expected}":
            return True
        self._send_error_reply(
            ErrorReply(
                401,
                "Incorrect API key provided. You can find your API key in your account settings.",
                code="invalid_api_key",
            )
        )
        return False

    # -- endpoints

    def do_GET(self) -> None:
        if self.path.rstrip("/") != "/v1/models":
            self._send_json(
                404, _error_body(f"Unknown path {self.path}", None, "invalid_request_error")
            )
            return
        if not self._check_auth():
            return
        names = self.owner.models if self.owner.models is not None else [DEFAULT_MODEL]
        self._send_json(
            200,
            {
                "object": "list",
                "data": [
                    {"id": n, "object": "model", "created": 0, "owned_by": "scripted"}
                    for n in names
                ],
            },
        )

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send_json(
                404, _error_body(f"Unknown path {self.path}", None, "invalid_request_error")
            )
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send_json(
                400,
                _error_body("The request body is not valid JSON.", None, "invalid_request_error"),
            )
            return
        self.owner._record(body, {k.lower(): v for k, v in self.headers.items()})
        if not self._check_auth():
            return
        model = body.get("model")
        if self.owner.models is not None and model not in self.owner.models:
            self._send_json(
                404,
                _error_body(
                    f"The model `{model}` does not exist or you do not have access to it.",
                    "model_not_found",
                    "invalid_request_error",
                ),
            )
            return
        if self.owner.reject_stream_options and "stream_options" in body:
            self._send_json(
                400,
                _error_body(
                    "Unrecognized request argument supplied: stream_options",
                    None,
                    "invalid_request_error",
                    "stream_options",
                ),
            )
            return
        has_tools = bool(body.get("tools"))
        if self.owner.reject_tools and has_tools:
            self._send_tools_rejected()
            return
        if _is_preflight(body):
            reply: Reply = self.owner.preflight or text("o", usage=(1, 1))
        else:
            reply = self.owner._next_reply(body)
        while isinstance(reply, RejectToolsReply):
            if has_tools:
                self._send_tools_rejected()
                return
            reply = reply.otherwise or self.owner._next_reply(body)
        self._serve(reply, body)

    def _send_tools_rejected(self) -> None:
        self._send_json(
            400,
            _error_body(
                TOOLS_UNSUPPORTED_MESSAGE, "tools_not_supported", "invalid_request_error", "tools"
            ),
        )

    def _serve(self, reply: Reply, body: dict) -> None:
        if isinstance(reply, ErrorReply):
            self._send_error_reply(reply)
            return
        if isinstance(reply, HangReply):
            time.sleep(reply.seconds)
            reply = reply.reply
        stream = bool(body.get("stream"))
        try:
            if isinstance(reply, CompletionReply):
                if stream:
                    self._stream(reply, body)
                else:
                    self._send_json(200, self._full_response(reply, body))
            elif isinstance(reply, DropReply):
                if stream:
                    self._stream(reply.reply, body, stop_after=reply.after_chunks)
                self.close_connection = True
                # Shutting the socket down without finishing the chunked body
                # is what a dropped connection looks like to the client.
                self.connection.shutdown(2)
            elif isinstance(reply, StreamErrorReply):
                if stream:
                    failure = _error_body(reply.message, None, "server_error")
                    self._stream(reply.reply, body, error_after=(reply.after_chunks, failure))
                else:
                    self._send_error_reply(ErrorReply(500, reply.message, type="server_error"))
            elif isinstance(reply, MalformedReply):
                if stream:
                    self._stream(reply.reply, body, garbage_after=reply.after_chunks)
                else:
                    data = b'{"id": "broken", "choices": [ {'
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
        except _ClientGone:
            self.close_connection = True
            self.owner._note_disconnect()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True
            self.owner._note_disconnect()

    def _full_response(self, reply: CompletionReply, body: dict) -> dict:
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or DEFAULT_MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": reply.message(),
                    "finish_reason": reply.resolved_finish_reason(),
                    "logprobs": None,
                }
            ],
            "usage": reply.token_usage(body),
        }

    def _stream(
        self,
        reply: CompletionReply,
        body: dict,
        *,
        stop_after: int | None = None,
        garbage_after: int | None = None,
        error_after: tuple[int, dict] | None = None,
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        created = int(time.time())
        model = body.get("model") or DEFAULT_MODEL

        def envelope(choices: list, usage: dict | None = None) -> bytes:
            chunk: dict[str, Any] = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": choices,
            }
            if usage is not None:
                chunk["usage"] = usage
            return b"data: " + json.dumps(chunk).encode() + b"\n\n"

        for sent, delta in enumerate(reply.deltas()):
            if stop_after is not None and sent >= stop_after:
                return
            if error_after is not None and sent >= error_after[0]:
                self._write_chunk(b"data: " + json.dumps(error_after[1]).encode() + b"\n\n")
                self._write_chunk(b"data: [DONE]\n\n")
                self._write_chunk(b"")
                return
            if garbage_after is not None and sent >= garbage_after:
                self._write_chunk(b'data: {"id": "broken", "choices": [{"delta": \n\n')
                self._write_chunk(b"data: [DONE]\n\n")
                self._write_chunk(b"")
                return
            if reply.delay:
                time.sleep(reply.delay)
            self._write_chunk(envelope([{"index": 0, "delta": delta, "finish_reason": None}]))
        if stop_after is not None:
            return
        self._write_chunk(
            envelope([{"index": 0, "delta": {}, "finish_reason": reply.resolved_finish_reason()}])
        )
        if (body.get("stream_options") or {}).get("include_usage"):
            self._write_chunk(envelope([], reply.token_usage(body)))
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")  # the zero-length chunk ends the chunked body


def settings_for_server(
    server: ScriptedModelServer,
    repo: Any,
    *,
    environ: dict[str, str] | None = None,
    model: str = DEFAULT_MODEL,
    **load_kwargs: Any,
):
    """Settings pointed at `server`, resolved from `environ` only (default: empty).

    The process environment is ignored so a developer's real keys never reach
    a scripted session.
    """
    from hello_tui.config import load_settings

    return load_settings(
        repo,
        base_url=server.base_url,
        api_key=server.api_key,
        model=model,
        environ=dict(environ or {}),
        **load_kwargs,
    )
