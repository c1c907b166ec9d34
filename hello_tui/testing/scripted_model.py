"""A scripted OpenAI-compatible model server on 127.0.0.1 (tests, benchmarks and `hello-tui demo`).

It speaks the real wire format: `POST /v1/chat/completions` (JSON or SSE
streaming, with content and tool-call arguments split across many chunks)
and `GET /v1/models`. Each chat request is answered by the next scripted
reply (or by a callable script), so a test decides exactly what the "model"
says, which errors it returns, how slowly it streams and where the
connection breaks. Preflight requests (`max_tokens=1`) are answered
automatically without consuming the script.

Faults on offer: HTTP errors, hangs, streams cut off (chunked framing, or a
body delimited by closing the connection), streams that end after the finish
reason but before `[DONE]`, endless streams (fast or slow), malformed chunks,
error objects mid-stream, pages that are not a model at all (HTML, plain text,
foreign JSON, with status 200), answers that ignore `stream`, and (with
`site_page`) a web app answering every path outside `/v1`. With `ollama` the
server also plays Ollama's native API (`/api/version`, `/api/show`, `/api/ps`);
`model_fields` adds fields to each `/v1/models` entry (vLLM's `max_model_len`,
llama.cpp's `owned_by`) and `native` answers other paths with JSON (llama.cpp's
`GET /props`, LM Studio's `GET /api/v0/models/<id>`): the metadata servers
give of the model's context window.

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
from dataclasses import dataclass, field
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
    """Streams `after_chunks` chunks of `reply`, then closes the connection abruptly.

    `framing="chunked"` cuts a chunked body mid-way (the client sees an
    incomplete body); `framing="close"` sends a body delimited by the end of
    the connection, so the cut looks like a clean end. With `after_finish` the
    whole answer and its finish reason go out, only usage and `[DONE]` are lost.
    """

    after_chunks: int
    reply: CompletionReply
    framing: str = "chunked"
    after_finish: bool = False


@dataclass(frozen=True)
class StallReply:
    """Streams `after_chunks` chunks of `reply`, goes silent for `seconds`, then goes on."""

    after_chunks: int
    seconds: float
    reply: CompletionReply


@dataclass(frozen=True)
class EndlessReply:
    """A stream that never ends: `piece` again and again, `delay` seconds apart."""

    piece: str = "and on "
    delay: float = 0.0
    framing: str = "chunked"


@dataclass(frozen=True)
class PageReply:
    """A body that is not an OpenAI answer (HTML, plain text, foreign JSON), any status."""

    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    framing: str = "length"  # "length" (Content-Length), "chunked" or "close"


@dataclass(frozen=True)
class UnstreamedReply:
    """Answers with a whole JSON completion even when the request asked for a stream."""

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
    | StallReply
    | EndlessReply
    | PageReply
    | UnstreamedReply
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


def drop(
    after_chunks: int = 2,
    reply: CompletionReply | None = None,
    *,
    framing: str = "chunked",
    after_finish: bool = False,
) -> DropReply:
    """Close the connection mid-stream after `after_chunks` chunks (see DropReply)."""
    return DropReply(
        after_chunks,
        reply or text("this answer is cut off half way through"),
        framing=framing,
        after_finish=after_finish,
    )


def stall(after_chunks: int, seconds: float, reply: CompletionReply | None = None) -> StallReply:
    """Go silent for `seconds` after `after_chunks` chunks (a server that stalls mid-answer)."""
    return StallReply(after_chunks, seconds, reply or text("this answer stalls half way through"))


def endless(piece: str = "and on ", delay: float = 0.0, framing: str = "chunked") -> EndlessReply:
    """A stream of `piece` that never ends (fast with delay 0, slow otherwise)."""
    return EndlessReply(piece, delay, framing)


def page(
    body: str | bytes,
    content_type: str = "text/html; charset=utf-8",
    status: int = 200,
    framing: str = "length",
) -> PageReply:
    """A response that is not an OpenAI answer at all."""
    data = body.encode() if isinstance(body, str) else body
    return PageReply(data, content_type, status, framing)


def html_page(title: str = "Sign in", text: str = "Please sign in to continue.") -> PageReply:
    """A 200 HTML page, as a proxy login page or a web app's front page looks."""
    return page(
        f"<!DOCTYPE html>\n<html><head><title>{title}</title></head>\n"
        f"<body><h1>{title}</h1><p>{text}</p></body></html>\n"
    )


def unstreamed(reply: CompletionReply) -> UnstreamedReply:
    """A whole JSON completion, whether or not a stream was asked for."""
    return UnstreamedReply(reply)


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


@dataclass
class ScriptedOllama:
    """Ollama's native API on the scripted server: `/api/version`, `/api/show`, `/api/ps`.

    `models` maps a model name to its /api/show body (see `ollama_model`);
    `running` maps loaded models to the context length /api/ps reports.
    """

    models: dict[str, dict] = field(default_factory=dict)
    running: dict[str, int] = field(default_factory=dict)
    version: str = "0.12.6"


def ollama_model(
    context_length: int | None = 32768, num_ctx: int | None = None, arch: str = "qwen2"
) -> dict:
    """An /api/show body: the model's trained context and, if given, a Modelfile num_ctx."""
    parameters = 'stop "<|im_start|>"\nstop "<|im_end|>"'
    if num_ctx is not None:
        parameters += f"\nnum_ctx {num_ctx}"
    info: dict[str, Any] = {"general.architecture": arch, f"{arch}.block_count": 28}
    if context_length is not None:
        info[f"{arch}.context_length"] = context_length
    return {
        "modelfile": "FROM scripted",
        "parameters": parameters,
        "template": "{{ .Prompt }}",
        "details": {"family": arch, "format": "gguf", "parameter_size": "7.6B"},
        "model_info": info,
        "capabilities": ["completion", "tools"],
    }


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
    to `max_tokens=1` requests; by default a one-token answer), `site_page`
    (a PageReply for every path outside /v1, as a web app at the root
    answers), `ollama` (a ScriptedOllama: also serve Ollama's native API),
    `model_fields` (merged into every /v1/models entry), `native` ("GET /props" ->
    a JSON body for that method and path).
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
        site_page: PageReply | None = None,
        ollama: ScriptedOllama | None = None,
        model_fields: dict[str, Any] | None = None,
        native: dict[str, Any] | None = None,
    ) -> None:
        self._script_fn: Callable[[dict], Reply] | None = script if callable(script) else None
        self._queue: list[Reply] = [] if callable(script) else list(script)
        self.reject_tools = reject_tools
        self.api_key = api_key
        self.models = list(models) if models is not None else None
        self.reject_stream_options = reject_stream_options
        self.preflight = preflight
        self.site_page = site_page
        self.ollama = ollama
        self.model_fields = dict(model_fields or {})
        self.native = dict(native or {})
        self.listings = 0  # GET /v1/models requests answered
        self.native_requests: list[str] = []  # paths asked outside /v1 (e.g. Ollama's /api/*)
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

    framing = "chunked"  # of the response being written: "chunked" or "close"

    def _write_chunk(self, data: bytes) -> None:
        try:
            if self.framing == "close":
                # The body ends where the connection does: no framing at all.
                if data:
                    self.wfile.write(data)
            else:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError) as exc:
            raise _ClientGone from exc

    def _start_body(self, status: int, content_type: str, framing: str) -> None:
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

    def _hang_up(self) -> None:
        self.close_connection = True
        # Shutting the socket down is what a dropped connection (or, for a
        # close-framed body, its end) looks like to the client.
        self.connection.shutdown(2)

    def _send_page(self, reply: PageReply) -> None:
        if reply.framing == "length":
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            return
        self._start_body(reply.status, reply.content_type, reply.framing)
        self._write_chunk(reply.body)
        if reply.framing == "close":
            self._hang_up()
        else:
            self._write_chunk(b"")

    def _serve_native(self, method: str, raw: bytes) -> bool:
        """Paths outside /v1: Ollama's API and the site page. False if none applies."""
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        self.owner.native_requests.append(path)
        if f"{method} {path}" in self.owner.native:
            self._send_json(200, self.owner.native[f"{method} {path}"])
            return True
        ollama = self.owner.ollama
        if ollama is not None:
            if method == "GET" and path == "/api/version":
                self._send_json(200, {"version": ollama.version})
                return True
            if method == "GET" and path == "/api/ps":
                models = [
                    {"name": name, "model": name, "context_length": length, "size_vram": 1}
                    for name, length in ollama.running.items()
                ]
                self._send_json(200, {"models": models})
                return True
            if method == "POST" and path == "/api/show":
                try:
                    asked = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    asked = {}
                name = str(asked.get("model") or asked.get("name") or "")
                found = ollama.models.get(name) or ollama.models.get(name.removesuffix(":latest"))
                if found is None:
                    self._send_json(404, {"error": f"model '{name}' not found"})
                else:
                    self._send_json(200, found)
                return True
            if method == "GET" and path == "/":
                self._send_page(page("Ollama is running", "text/plain; charset=utf-8"))
                return True
        if self.owner.site_page is not None:
            self._send_page(self.owner.site_page)
            return True
        return False

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
        if not self.path.startswith("/v1/") and self._serve_native("GET", b""):
            return
        if self.path.rstrip("/") != "/v1/models":
            self._send_json(
                404, _error_body(f"Unknown path {self.path}", None, "invalid_request_error")
            )
            return
        if not self._check_auth():
            return
        names = self.owner.models if self.owner.models is not None else [DEFAULT_MODEL]
        self.owner.listings += 1
        owner = "scripted" if self.owner.ollama is None else "library"  # as Ollama lists models
        self._send_json(
            200,
            {
                "object": "list",
                "data": [
                    {"id": n, "object": "model", "created": 0, "owned_by": owner}
                    | self.owner.model_fields
                    for n in names
                ],
            },
        )

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.startswith("/v1/") and self._serve_native("POST", raw):
            return
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
            elif isinstance(reply, UnstreamedReply):
                self._send_json(200, self._full_response(reply.reply, body))
            elif isinstance(reply, PageReply):
                self._send_page(reply)
            elif isinstance(reply, StallReply):
                if stream:
                    self._stream(reply.reply, body, pause=(reply.after_chunks, reply.seconds))
                else:
                    time.sleep(reply.seconds)
                    self._send_json(200, self._full_response(reply.reply, body))
            elif isinstance(reply, EndlessReply):
                self._stream_endless(reply, body)
            elif isinstance(reply, DropReply):
                if stream:
                    self._stream(
                        reply.reply,
                        body,
                        stop_after=None if reply.after_finish else reply.after_chunks,
                        framing=reply.framing,
                        stop_after_finish=reply.after_finish,
                    )
                self._hang_up()
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

    def _stream_endless(self, reply: EndlessReply, body: dict) -> None:
        self._start_body(200, "text/event-stream", reply.framing)
        envelope = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model") or DEFAULT_MODEL,
            "choices": [{"index": 0, "delta": {"content": reply.piece}, "finish_reason": None}],
        }
        data = b"data: " + json.dumps(envelope).encode() + b"\n\n"
        # Runs until the client hangs up (_ClientGone) or the server stops.
        while self.owner._httpd is not None:
            if reply.delay:
                time.sleep(reply.delay)
            self._write_chunk(data)

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
        framing: str = "chunked",
        stop_after_finish: bool = False,
        pause: tuple[int, float] | None = None,
    ) -> None:
        self._start_body(200, "text/event-stream", framing)
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
            if pause is not None and sent == pause[0]:
                time.sleep(pause[1])
            self._write_chunk(envelope([{"index": 0, "delta": delta, "finish_reason": None}]))
        if stop_after is not None:
            return
        if not reply.omit_finish:
            finish = reply.resolved_finish_reason()
            self._write_chunk(envelope([{"index": 0, "delta": {}, "finish_reason": finish}]))
        if stop_after_finish:
            return
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
