"""The demo's model: a small OpenAI-compatible server on 127.0.0.1 that answers from a script.

It speaks the real wire format, `POST /v1/chat/completions` (JSON, or SSE
streaming with content and tool-call arguments split across many chunks) and
`GET /v1/models`, so `hello-tui demo` and the benchmarks drive the project's
real `openai` client end to end. Each chat request is answered by the next
scripted reply, or by a callable script. Preflight requests (`max_tokens=1`)
are answered without consuming the script.

Only the happy path lives here. The test suite's server, which also plays
HTTP errors, dropped and stalled streams, foreign pages and Ollama's native
API, builds on this one (`tests/support/scripted_model.py`); the two share
the wire format through `ModelHandler`.
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
    omit_finish: bool = False  # end with [DONE] but never send a finish_reason (sloppy servers)

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
        for piece in split(self.reasoning or "", size):
            yield {"reasoning_content": piece}
        for piece in split(self.content, size):
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
        fragments = [list(split(c.arguments, size)) for c in self.calls]
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


def split(s: str, size: int) -> Iterator[str]:
    for i in range(0, len(s), size):
        yield s[i : i + size]


def is_preflight(body: dict) -> bool:
    return body.get("max_tokens") == 1 or body.get("max_completion_tokens") == 1


def error_body(message: str, code: str | None, kind: str, param: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


class ClientGone(Exception):
    """The client closed the connection while we were writing."""


class QuietHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (cancelled streams, closed keep-alive connections)
        # are part of the script, not failures worth a stderr traceback.
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class ScriptedModelServer:
    """An OpenAI-compatible HTTP server answering from a script of CompletionReply."""

    handler: type[ModelHandler]  # set below the handler's definition

    def __init__(self, script: Any = (), *, preflight: Any = None) -> None:
        self._script_fn: Callable[[dict], Any] | None = script if callable(script) else None
        self._queue: list[Any] = [] if callable(script) else list(script)
        self.preflight = preflight
        self.api_key: str | None = None
        self.models: list[str] | None = None
        self.listings = 0  # GET /v1/models requests answered
        self.requests: list[dict] = []  # every chat-completions body, preflight included
        self.headers: list[dict[str, str]] = []  # the matching request headers, names lower-cased
        self.client_disconnects = 0  # streams the client closed before the end
        self.disconnected = threading.Event()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> Self:
        handler = type("ScriptedHandler", (self.handler,), {"owner": self})
        self._httpd = QuietHTTPServer(("127.0.0.1", 0), handler)
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

    @property
    def running(self) -> bool:
        return self._httpd is not None

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

    def add(self, *replies: Any) -> None:
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
        return [r for r in self.requests if not is_preflight(r)]

    def record(self, body: dict, headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)

    def next_reply(self, body: dict) -> Any:
        if self._script_fn is not None:
            return self._script_fn(body)
        with self._lock:
            if self._queue:
                return self._queue.pop(0)
        return self.exhausted()

    def exhausted(self) -> Any:
        """The reply once a list script has none left: the end of the demo's story."""
        return text("(the scripted model has nothing more to say)")

    def note_disconnect(self) -> None:
        with self._lock:
            self.client_disconnects += 1
        self.disconnected.set()


class ModelHandler(BaseHTTPRequestHandler):
    """The wire format: chat completions (whole or streamed) and the model list.

    Subclasses answer more paths (`serve_other`), refuse requests (`refuse`)
    and serve more kinds of reply (`serve`).
    """

    owner: ScriptedModelServer
    protocol_version = "HTTP/1.1"  # chunked streams: a dropped stream is detectably incomplete
    timeout = 30  # idle keep-alive connections free their thread eventually
    framing = "chunked"  # of the response being written: "chunked" or "close"

    def log_message(self, format: str, *args: Any) -> None:
        # Silence the default per-request stderr log.
        return

    # -- plumbing

    def send_json(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def write_chunk(self, data: bytes) -> None:
        try:
            if self.framing == "close":
                # The body ends where the connection does: no framing at all.
                if data:
                    self.wfile.write(data)
            else:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as exc:
            raise ClientGone from exc

    def start_body(self, status: int, content_type: str, framing: str) -> None:
        """Status and headers for a body framed by chunks or by closing the connection."""
        self.framing = framing
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        if framing == "close":
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def not_found(self) -> None:
        self.send_json(404, error_body(f"Unknown path {self.path}", None, "invalid_request_error"))

    # -- hooks for the test suite's server

    def serve_other(self, method: str, raw: bytes) -> bool:
        """Answer a path outside /v1; False if there is nothing to answer."""
        return False

    def refuse(self, body: dict | None) -> bool:
        """Answer a request with an error instead of the script (True if it did)."""
        return False

    def serve(self, reply: Any, body: dict) -> None:
        """Answer with one scripted reply."""
        if bool(body.get("stream")):
            self.stream(reply, body)
        else:
            self.send_json(200, self.full_response(reply, body))

    # -- endpoints

    def do_GET(self) -> None:
        if not self.path.startswith("/v1/") and self.serve_other("GET", b""):
            return
        if self.path.rstrip("/") != "/v1/models":
            self.not_found()
            return
        if self.refuse(None):
            return
        names = self.owner.models if self.owner.models is not None else [DEFAULT_MODEL]
        self.owner.listings += 1
        self.send_json(200, {"object": "list", "data": [self.model_entry(n) for n in names]})

    def model_entry(self, name: str) -> dict[str, Any]:
        """One entry of the `/v1/models` list."""
        return {"id": name, "object": "model", "created": 0, "owned_by": "scripted"}

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.startswith("/v1/") and self.serve_other("POST", raw):
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self.not_found()
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self.send_json(
                400,
                error_body("The request body is not valid JSON.", None, "invalid_request_error"),
            )
            return
        self.owner.record(body, {k.lower(): v for k, v in self.headers.items()})
        if self.refuse(body):
            return
        if is_preflight(body):
            reply = self.owner.preflight or text("o", usage=(1, 1))
        else:
            reply = self.owner.next_reply(body)
        try:
            self.serve(reply, body)
        except (ClientGone, BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True
            self.owner.note_disconnect()

    # -- answers

    def full_response(self, reply: CompletionReply, body: dict) -> dict:
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

    def envelope(self, body: dict, choices: list, usage: dict | None = None) -> bytes:
        """One SSE `data:` line of a streamed answer."""
        chunk: dict[str, Any] = {
            "id": getattr(self, "_completion_id", "chatcmpl-scripted"),
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model") or DEFAULT_MODEL,
            "choices": choices,
        }
        if usage is not None:
            chunk["usage"] = usage
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    def before_chunk(self, sent: int) -> bool:
        """Called before streamed chunk number `sent`; False ends the stream there."""
        return True

    def stream(self, reply: CompletionReply, body: dict, *, framing: str = "chunked") -> None:
        """The answer as SSE: its deltas, the finish reason, usage if asked, `[DONE]`."""
        self.start_body(200, "text/event-stream", framing)
        self._completion_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        for sent, delta in enumerate(reply.deltas()):
            if not self.before_chunk(sent):
                return
            if reply.delay:
                time.sleep(reply.delay)
            self.write_chunk(
                self.envelope(body, [{"index": 0, "delta": delta, "finish_reason": None}])
            )
        if not self.before_chunk(-1):
            return
        if not reply.omit_finish:
            finish = reply.resolved_finish_reason()
            self.write_chunk(
                self.envelope(body, [{"index": 0, "delta": {}, "finish_reason": finish}])
            )
        if not self.before_chunk(-2):
            return
        if (body.get("stream_options") or {}).get("include_usage"):
            self.write_chunk(self.envelope(body, [], reply.token_usage(body)))
        self.write_chunk(b"data: [DONE]\n\n")
        self.write_chunk(b"")  # the zero-length chunk ends the chunked body


ScriptedModelServer.handler = ModelHandler


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
