"""The test suite's scripted model server: the demo's model plus every fault a real endpoint has.

It extends `hello_tui.demo.model` (the wire format, the script, streaming) with
HTTP errors, hangs, streams cut off (chunked framing, or a body delimited by
closing the connection), streams that end after the finish reason but before
`[DONE]`, endless streams (fast or slow), malformed chunks, error objects
mid-stream, pages that are not a model at all (HTML, plain text, foreign
JSON, with status 200), answers that ignore `stream`, and (with `site_page`)
a web app answering every path outside `/v1`. With `ollama` the server also
plays Ollama's native API (`/api/version`, `/api/show`, `/api/ps`);
`model_fields` adds fields to each `/v1/models` entry (vLLM's `max_model_len`,
llama.cpp's `owned_by`) and `native` answers other paths with JSON, or with what a
function of the request's JSON returns (llama.cpp's
`GET /props`, LM Studio's `GET /api/v0/models/<id>`): the metadata servers
give of the model's context window.

The server runs in a background thread (ThreadingHTTPServer), so it serves
sync tests, async tests, CLI subprocesses and the Textual app alike.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hello_tui.demo.model import (
    DEFAULT_MODEL,
    CompletionReply,
    ModelHandler,
    ScriptedCall,
    call,
    error_body,
    settings_for_server,
    text,
    tool_calls,
)
from hello_tui.demo.model import ScriptedModelServer as DemoModelServer

__all__ = [
    "DEFAULT_MODEL",
    "CompletionReply",
    "ScriptedCall",
    "ScriptedModelServer",
    "call",
    "settings_for_server",
    "text",
    "tool_calls",
]


# ---------------------------------------------------------------- faults


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
class HeldReply:
    """Streams `after_chunks` chunks of `reply`, then waits until the test sets `release`
    (or the server stops), then goes on: a turn that lasts exactly as long as a test needs,
    where a long slow answer would cost wall time and depend on the machine's speed."""

    after_chunks: int
    reply: CompletionReply
    release: threading.Event = field(default_factory=threading.Event)


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
    | HeldReply
    | EndlessReply
    | PageReply
    | UnstreamedReply
    | MalformedReply
    | StreamErrorReply
    | HangReply
    | RejectToolsReply
)
Script = Sequence[Reply] | Callable[[dict], Reply]


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


def held(reply: CompletionReply, after_chunks: int = 20) -> HeldReply:
    """`reply`, held open after `after_chunks` chunks until `.release.set()`."""
    return HeldReply(after_chunks, reply)


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


# ---------------------------------------------------------------- server


class ScriptedModelServer(DemoModelServer):
    """An OpenAI-compatible HTTP server answering from a script, faults included.

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
        super().__init__(script, preflight=preflight)
        self.reject_tools = reject_tools
        self.api_key = api_key
        self.models = list(models) if models is not None else None
        self.reject_stream_options = reject_stream_options
        self.site_page = site_page
        self.ollama = ollama
        self.model_fields = dict(model_fields or {})
        self.native = dict(native or {})
        self.native_requests: list[str] = []  # paths asked outside /v1 (e.g. Ollama's /api/*)

    def exhausted(self) -> Reply:
        return ErrorReply(
            500,
            f"script exhausted: the scripted model has no reply left for request "
            f"#{len(self.requests)}",
            type="server_error",
        )


@dataclass
class _Cut:
    """How one stream departs from the answer: where it stops, stalls or breaks."""

    stop_after: int | None = None
    stop_after_finish: bool = False
    garbage_after: int | None = None
    error_after: tuple[int, dict] | None = None
    pause: tuple[int, float] | None = None
    hold: tuple[int, threading.Event] | None = None


class FaultHandler(ModelHandler):
    owner: ScriptedModelServer
    cut: _Cut = _Cut()

    def send_error_reply(self, reply: ErrorReply) -> None:
        headers = {}
        if reply.retry_after is not None:
            headers["Retry-After"] = f"{reply.retry_after:g}"
        self.send_json(reply.status, error_body(reply.message, reply.code, reply.type), headers)

    def hang_up(self) -> None:
        self.close_connection = True
        # Shutting the socket down is what a dropped connection (or, for a
        # close-framed body, its end) looks like to the client.
        self.connection.shutdown(2)

    def send_page(self, reply: PageReply) -> None:
        if reply.framing == "length":
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            return
        self.start_body(reply.status, reply.content_type, reply.framing)
        self.write_chunk(reply.body)
        if reply.framing == "close":
            self.hang_up()
        else:
            self.write_chunk(b"")

    def do_POST(self) -> None:
        # A `native` answer may also stand for a /v1 path the demo's model does not serve
        # (llama-cpp-python's /v1/completions).
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.startswith("/v1/") and f"POST {path}" in self.owner.native:
            length = int(self.headers.get("Content-Length") or 0)
            self.serve_other("POST", self.rfile.read(length) if length else b"")
            return
        super().do_POST()

    def serve_other(self, method: str, raw: bytes) -> bool:
        """Paths outside /v1: Ollama's API and the site page."""
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        self.owner.native_requests.append(path)
        answer = self.owner.native.get(f"{method} {path}")
        if callable(answer):  # (status, JSON) from the request's JSON body
            try:
                asked = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                asked = {}
            status, payload = answer(asked)
            self.send_json(status, payload)
            return True
        if answer is not None:
            self.send_json(200, answer)
            return True
        ollama = self.owner.ollama
        if ollama is not None and self._serve_ollama(ollama, method, path, raw):
            return True
        if self.owner.site_page is not None:
            self.send_page(self.owner.site_page)
            return True
        return False

    def _serve_ollama(self, ollama: ScriptedOllama, method: str, path: str, raw: bytes) -> bool:
        if method == "GET" and path == "/api/version":
            self.send_json(200, {"version": ollama.version})
            return True
        if method == "GET" and path == "/api/ps":
            models = [
                {"name": name, "model": name, "context_length": length, "size_vram": 1}
                for name, length in ollama.running.items()
            ]
            self.send_json(200, {"models": models})
            return True
        if method == "POST" and path == "/api/show":
            try:
                asked = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                asked = {}
            name = str(asked.get("model") or asked.get("name") or "")
            found = ollama.models.get(name) or ollama.models.get(name.removesuffix(":latest"))
            if found is None:
                self.send_json(404, {"error": f"model '{name}' not found"})
            else:
                self.send_json(200, found)
            return True
        if method == "GET" and path == "/":
            self.send_page(page("Ollama is running", "text/plain; charset=utf-8"))
            return True
        return False

    def model_entry(self, name: str) -> dict[str, Any]:
        entry = super().model_entry(name)
        if self.owner.ollama is not None:
            entry["owned_by"] = "library"  # as Ollama lists models
        return entry | self.owner.model_fields

    def refuse(self, body: dict | None) -> bool:
        owner = self.owner
        if owner.api_key is not None and (
            self.headers.get("Authorization", "") != f"Bearer {owner.api_key}"
        ):
            self.send_error_reply(
                ErrorReply(
                    401,
                    "Incorrect API key provided. "
                    "You can find your API key in your account settings.",
                    code="invalid_api_key",
                )
            )
            return True
        if body is None:
            return False
        model = body.get("model")
        if owner.models is not None and model not in owner.models:
            self.send_json(
                404,
                error_body(
                    f"The model `{model}` does not exist or you do not have access to it.",
                    "model_not_found",
                    "invalid_request_error",
                ),
            )
            return True
        if owner.reject_stream_options and "stream_options" in body:
            self.send_json(
                400,
                error_body(
                    "Unrecognized request argument supplied: stream_options",
                    None,
                    "invalid_request_error",
                    "stream_options",
                ),
            )
            return True
        if owner.reject_tools and body.get("tools"):
            self._send_tools_rejected()
            return True
        return False

    def _send_tools_rejected(self) -> None:
        self.send_json(
            400,
            error_body(
                TOOLS_UNSUPPORTED_MESSAGE, "tools_not_supported", "invalid_request_error", "tools"
            ),
        )

    def serve(self, reply: Any, body: dict) -> None:
        while isinstance(reply, RejectToolsReply):
            if body.get("tools"):
                self._send_tools_rejected()
                return
            reply = reply.otherwise or self.owner.next_reply(body)
        if isinstance(reply, ErrorReply):
            self.send_error_reply(reply)
            return
        if isinstance(reply, HangReply):
            time.sleep(reply.seconds)
            reply = reply.reply
        stream = bool(body.get("stream"))
        if isinstance(reply, CompletionReply):
            super().serve(reply, body)
        elif isinstance(reply, UnstreamedReply):
            self.send_json(200, self.full_response(reply.reply, body))
        elif isinstance(reply, PageReply):
            self.send_page(reply)
        elif isinstance(reply, StallReply):
            if stream:
                self._cut_stream(reply.reply, body, _Cut(pause=(reply.after_chunks, reply.seconds)))
            else:
                time.sleep(reply.seconds)
                self.send_json(200, self.full_response(reply.reply, body))
        elif isinstance(reply, HeldReply):
            if stream:
                self._cut_stream(reply.reply, body, _Cut(hold=(reply.after_chunks, reply.release)))
            else:
                while not reply.release.wait(0.05) and self.owner.running:
                    pass
                self.send_json(200, self.full_response(reply.reply, body))
        elif isinstance(reply, EndlessReply):
            self._stream_endless(reply, body)
        elif isinstance(reply, DropReply):
            if stream:
                cut = (
                    _Cut(stop_after_finish=True)
                    if reply.after_finish
                    else _Cut(stop_after=reply.after_chunks)
                )
                self._cut_stream(reply.reply, body, cut, framing=reply.framing)
            self.hang_up()
        elif isinstance(reply, StreamErrorReply):
            if stream:
                failure = error_body(reply.message, None, "server_error")
                self._cut_stream(reply.reply, body, _Cut(error_after=(reply.after_chunks, failure)))
            else:
                self.send_error_reply(ErrorReply(500, reply.message, type="server_error"))
        elif isinstance(reply, MalformedReply):
            if stream:
                self._cut_stream(reply.reply, body, _Cut(garbage_after=reply.after_chunks))
            else:
                data = b'{"id": "broken", "choices": [ {'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

    def _cut_stream(
        self, reply: CompletionReply, body: dict, cut: _Cut, *, framing: str = "chunked"
    ) -> None:
        self.cut = cut
        try:
            self.stream(reply, body, framing=framing)
        finally:
            self.cut = _Cut()

    def before_chunk(self, sent: int) -> bool:
        cut = self.cut
        if sent == -1:  # before the finish reason
            return cut.stop_after is None
        if sent == -2:  # after it, before usage and [DONE]
            return not cut.stop_after_finish
        if cut.stop_after is not None and sent >= cut.stop_after:
            return False
        broken = None
        if cut.error_after is not None and sent >= cut.error_after[0]:
            broken = b"data: " + json.dumps(cut.error_after[1]).encode() + b"\n\n"
        elif cut.garbage_after is not None and sent >= cut.garbage_after:
            broken = b'data: {"id": "broken", "choices": [{"delta": \n\n'
        if broken is not None:
            self.write_chunk(broken)
            self.write_chunk(b"data: [DONE]\n\n")
            self.write_chunk(b"")
            return False
        if cut.pause is not None and sent == cut.pause[0]:
            time.sleep(cut.pause[1])
        if cut.hold is not None and sent == cut.hold[0]:
            while not cut.hold[1].wait(0.05) and self.owner.running:
                pass
            return self.owner.running
        return True

    def _stream_endless(self, reply: EndlessReply, body: dict) -> None:
        self.start_body(200, "text/event-stream", reply.framing)
        envelope = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model") or DEFAULT_MODEL,
            "choices": [{"index": 0, "delta": {"content": reply.piece}, "finish_reason": None}],
        }
        data = b"data: " + json.dumps(envelope).encode() + b"\n\n"
        # Runs until the client hangs up (ClientGone) or the server stops.
        while self.owner.running:
            if reply.delay:
                time.sleep(reply.delay)
            self.write_chunk(data)


ScriptedModelServer.handler = FaultHandler
