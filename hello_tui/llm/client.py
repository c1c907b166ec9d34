"""The model client: streaming chat completions, retries, bounds, preflight.

Talks to any OpenAI-compatible endpoint through the real `openai.AsyncOpenAI`
client (imported lazily, so `hello-tui --version` stays fast). The client
sends the request and raises HTTP errors; the body is read here, byte by
byte, because a model server's answer is only trusted once it is whole:

- a stream that ends without a finish reason or `[DONE]` is a truncation,
  asked again once (with `StreamRestarted` first if deltas went out);
- an answer past `LLM_MAX_ANSWER_BYTES`, or a request past
  `LLM_REQUEST_DEADLINE`, is stopped with its own error;
- a 200 body that is not an OpenAI response (HTML, plain text, foreign JSON)
  is one `not_openai` error naming the URL and the fix, never an empty answer.

Its own retry loop replaces the library's (429 / 5xx / timeouts / dropped
connections, with exponential backoff, jitter and `Retry-After`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from hello_tui.config import PROVIDER_BY_NAME, Settings, is_local_url
from hello_tui.llm.assembly import (
    AnswerTooLarge,
    StreamAssembler,
    answer_bytes,
    completion_from_body,
    error_message,
    is_chunk,
    is_completion_body,
)
from hello_tui.llm.errors import (
    RETRYABLE_KINDS,
    LLMError,
    _server_message,
    answer_too_large_error,
    classify_error,
    deadline_error,
    final_error,
    host_of,
    is_transport_timeout,
    mid_stream_error,
    truncated_error,
)
from hello_tui.llm.sse import EventTooLarge, SSEDecoder, looks_like_event_stream
from hello_tui.llm.text_tool_calls import offered_tools
from hello_tui.llm.types import (
    Completion,
    PreflightResult,
    ReasoningDelta,
    StreamEvent,
    StreamRestarted,
    TextDelta,
)
from hello_tui.llm.wire import SAMPLE_BYTES, looks_like_html, not_openai_error

RetryCallback = Callable[[int, float, str], None]
SleepFn = Callable[[float], Awaitable[None]]

TRUNCATION_RETRIES = 1
_STOPPED_KINDS = frozenset({"answer_too_large", "deadline", "not_openai"})
_CLOSED_EARLY = "the connection closed before the answer finished (no finish reason, no [DONE])"


class _Deadline:
    """One point in time a whole model call must not pass."""

    def __init__(self, seconds: float) -> None:
        self.when = asyncio.get_running_loop().time() + seconds

    def remaining(self) -> float:
        return self.when - asyncio.get_running_loop().time()

    def expired(self) -> bool:
        return self.remaining() <= 0


class _Broken(Exception):
    """The connection failed while the body was arriving."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause) or type(cause).__name__)
        self.cause = cause


def _opens_like_json(body: bytes) -> bool:
    return body.lstrip().removeprefix(b"\xef\xbb\xbf").lstrip().startswith((b"{", b"["))


def missing_key_hint(settings: Settings) -> str | None:
    """Which variable to set when the provider needs a key and none is configured."""
    if settings.api_key or is_local_url(settings.base_url):
        return None
    prov = PROVIDER_BY_NAME.get(settings.provider)
    if prov is None:
        # An unknown remote host: most need a key; one that does not accepts any value.
        return "set LLM_API_KEY or --api-key (any value, if the server needs none)"
    if not prov.needs_key:
        return None
    names = " or ".join((*prov.key_vars, "LLM_API_KEY"))
    return f"set {names} (or pass --api-key)"


class LLMClient:
    """Async OpenAI-compatible chat client with our own retry policy and bounds."""

    def __init__(
        self,
        settings: Settings,
        *,
        sleep: SleepFn | None = None,
        on_retry: RetryCallback | None = None,
        max_attempts: int = 3,
        base_delay: float = 0.5,
        max_delay: float = 8.0,
        retry_after_cap: float = 30.0,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        import openai

        self.settings = settings
        self.on_retry = on_retry
        self.max_attempts = max(1, max_attempts)
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.retry_after_cap = retry_after_cap
        self._sleep: SleepFn = sleep or asyncio.sleep
        self._jitter = jitter
        self.stream_options_supported = True
        self._client = openai.AsyncOpenAI(
            base_url=settings.base_url,
            # Local servers need no key, but the client insists on one.
            api_key=settings.api_key or "not-needed",
            max_retries=0,
            timeout=settings.timeout,
        )

    async def aclose(self) -> None:
        await self._client.close()

    @property
    def _event_limit(self) -> int:
        # JSON escaping can double the answer's bytes on the wire (\uXXXX for
        # three UTF-8 bytes), plus room for one chunk's envelope.
        return 2 * self.settings.max_answer_bytes + 65536

    # -- retry policy

    def retry_delay(self, err: LLMError, attempt: int) -> float:
        """Seconds to wait before attempt `attempt + 1`."""
        if err.retry_after is not None:
            return min(err.retry_after, self.retry_after_cap)
        backoff = self.base_delay * (2 ** (attempt - 1))
        return min(self.max_delay, backoff * (0.5 + self._jitter()))

    async def _before_retry(
        self, err: LLMError, attempt: int, deadline: _Deadline | None = None
    ) -> None:
        delay = self.retry_delay(err, attempt)
        if deadline is not None and delay >= deadline.remaining():
            raise final_error(err, attempt)  # waiting would pass the deadline
        if self.on_retry is not None:
            self.on_retry(attempt, delay, str(err))
        await self._sleep(delay)

    def _request_args(
        self,
        messages: list[dict],
        tools: list[dict] | None,
        max_tokens: int | None,
        temperature: float | None,
    ) -> dict[str, Any]:
        args: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": self.settings.temperature if temperature is None else temperature,
        }
        if tools:
            args["tools"] = tools
        if max_tokens is not None:
            args["max_tokens"] = max_tokens
        return args

    # -- streaming

    async def stream_chat(
        self,
        messages: list[dict],
        *,
        tools: list[dict] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream one answer: deltas as they arrive, then exactly one Completion.

        Retries happen while nothing has reached the caller. A truncated
        stream is asked again once even after deltas went out: then a
        `StreamRestarted` comes first and the caller drops what it showed.
        Any other failure after deltas raises, so nothing is shown twice.
        Consumers that stop early should close the generator
        (`contextlib.aclosing`).
        """
        args = self._request_args(messages, tools, max_tokens, temperature)
        offered = offered_tools(tools)
        deadline = _Deadline(self.settings.request_deadline)
        attempt = 0
        restarts = 0
        while True:
            attempt += 1
            yielded = False
            try:
                async for event in self._stream_once(args, deadline, offered):
                    yielded = yielded or not isinstance(event, Completion)
                    yield event
                return
            except Exception as exc:  # noqa: BLE001 - every failure is classified, none swallowed
                err = classify_error(exc, self.settings, sent_tools=bool(tools))
                cause = exc
            if err.kind == "truncated":
                if restarts >= TRUNCATION_RETRIES:
                    raise final_error(err, attempt) from cause
                restarts += 1
                if yielded:
                    yield StreamRestarted(reason=err.message, attempt=attempt + 1)
                await self._retry_or_raise(err, attempt, deadline, cause)
                continue
            if err.kind in _STOPPED_KINDS:
                raise err from cause  # stopped on purpose: never asked again
            if yielded:
                raise LLMError(
                    f"the answer broke off mid-stream: {err.message}",
                    err.kind,
                    err.hint,
                    status=err.status,
                    retryable=False,
                ) from cause
            if not err.retryable or attempt - restarts >= self.max_attempts:
                raise final_error(err, attempt) from cause
            await self._retry_or_raise(err, attempt, deadline, cause)

    async def _retry_or_raise(
        self, err: LLMError, attempt: int, deadline: _Deadline, cause: BaseException
    ) -> None:
        try:
            await self._before_retry(err, attempt, deadline)
        except LLMError as final:
            raise final from cause

    async def _stream_once(
        self, args: dict[str, Any], deadline: _Deadline, tools: Mapping[str, dict]
    ) -> AsyncIterator[StreamEvent]:
        """One streamed request: its deltas, then its Completion; raises when it is not whole."""
        async with contextlib.AsyncExitStack() as stack:
            response = await self._within(deadline, self._open(stack, args, stream=True))
            http = response.http_response
            url = str(http.request.url)
            content_type = http.headers.get("content-type", "")
            chunks = response.iter_bytes().__aiter__()
            if looks_like_html(content_type, b""):
                sample = await self._read_body(chunks, deadline, SAMPLE_BYTES, truncate=True)
                raise not_openai_error(self.settings, url, content_type, sample)
            decoder = SSEDecoder(self._event_limit)
            assembler = StreamAssembler(self.settings.max_answer_bytes, tools)
            head = bytearray()  # the body's first bytes, to describe it if it is not a stream
            foreign: str | None = None  # the first event that is not a chunk
            done = False
            sniffed = False
            while not done:
                try:
                    data = await self._next_bytes(chunks, deadline)
                except _Broken as broken:
                    if assembler.finish_reason is not None:
                        break  # the answer was whole; only the epilogue was lost
                    raise truncated_error(
                        self.settings,
                        f"the connection broke before the answer finished ({broken})",
                    ) from broken.cause
                try:
                    events = decoder.close() if data is None else decoder.feed(data)
                except EventTooLarge as exc:
                    raise answer_too_large_error(self.settings) from exc
                if not sniffed and data is not None:
                    head += data  # bounded: the decoder stops an endless first line
                if not sniffed and decoder.first_line is not None:
                    sniffed = True
                    if not looks_like_event_stream(decoder.first_line):
                        # Not SSE: a whole JSON body (a server that ignores
                        # stream=true) or something that is not a model at all.
                        if not _opens_like_json(bytes(head)):
                            sample = bytes(head) + await self._read_body(
                                chunks, deadline, max(0, SAMPLE_BYTES - len(head)), truncate=True
                            )
                            raise not_openai_error(self.settings, url, content_type, sample)
                        rest = (
                            b""
                            if data is None
                            else await self._read_body(
                                chunks, deadline, self._event_limit - len(head)
                            )
                        )
                        async for event in self._whole_body_events(
                            bytes(head) + rest, content_type, url, tools
                        ):
                            yield event
                        return
                for sse in events:
                    if sse.data.strip() == "[DONE]":
                        done = True
                        break
                    chunk = self._decode_event(sse.data)
                    if not is_chunk(chunk):
                        foreign = foreign or sse.data
                        continue
                    try:
                        for item in assembler.feed(chunk):
                            yield item
                    except AnswerTooLarge as exc:
                        raise answer_too_large_error(self.settings) from exc
                if data is None:
                    break
            if assembler.chunks == 0 and foreign is not None:
                raise not_openai_error(self.settings, url, content_type, foreign.encode())
            if not sniffed and "event-stream" not in content_type.lower():
                raise not_openai_error(self.settings, url, content_type, bytes(head))
            if not done and assembler.finish_reason is None:
                raise truncated_error(self.settings, _CLOSED_EARLY)
            tail, completion = assembler.finish()
            for item in tail:
                yield item
            yield completion

    def _decode_event(self, data: str) -> Any:
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise LLMError(
                f"{host_of(self.settings)} sent a response that is not valid JSON ({exc})",
                "protocol",
                "check LLM_BASE_URL or --base-url",
            ) from exc
        message = error_message(chunk)
        if message is not None:
            raise mid_stream_error(self.settings, message)
        return chunk

    async def _whole_body_events(
        self, body: bytes, content_type: str, url: str, tools: Mapping[str, dict]
    ) -> AsyncIterator[StreamEvent]:
        completion = self._interpret_body(body, content_type, url, tools)
        if completion.reasoning:
            yield ReasoningDelta(completion.reasoning)
        if completion.content:
            yield TextDelta(completion.content)
        yield completion

    def _interpret_body(
        self, body: bytes, content_type: str, url: str, tools: Mapping[str, dict]
    ) -> Completion:
        """A whole response body as a Completion, or the error that says what it is instead."""
        if looks_like_html(content_type, body):
            raise not_openai_error(self.settings, url, content_type, body[:SAMPLE_BYTES])
        text = body.decode("utf-8", "replace").strip()
        if text.startswith(("{", "[")):
            try:
                value = json.loads(text)
            except ValueError as exc:
                raise LLMError(
                    f"{host_of(self.settings)} sent a response that is not valid JSON ({exc})",
                    "protocol",
                    "check LLM_BASE_URL or --base-url",
                ) from exc
            message = error_message(value)
            if message is not None:
                raise mid_stream_error(self.settings, message)
            if is_completion_body(value):
                completion = completion_from_body(value, tools)
                if answer_bytes(completion) > self.settings.max_answer_bytes:
                    raise answer_too_large_error(self.settings)
                return completion
            raise not_openai_error(self.settings, url, content_type, body[:SAMPLE_BYTES])
        first = text.partition("\n")[0]
        if first and looks_like_event_stream(first):
            return self._completion_from_event_body(body, content_type, url, tools)
        raise not_openai_error(self.settings, url, content_type, body[:SAMPLE_BYTES])

    def _completion_from_event_body(
        self, body: bytes, content_type: str, url: str, tools: Mapping[str, dict]
    ) -> Completion:
        # A server that streams although it was asked not to: assemble the stream.
        decoder = SSEDecoder(self._event_limit)
        assembler = StreamAssembler(self.settings.max_answer_bytes, tools)
        done = False
        try:
            for sse in [*decoder.feed(body), *decoder.close()]:
                if sse.data.strip() == "[DONE]":
                    done = True
                    break
                chunk = self._decode_event(sse.data)
                if is_chunk(chunk):
                    assembler.feed(chunk)
        except (EventTooLarge, AnswerTooLarge) as exc:
            raise answer_too_large_error(self.settings) from exc
        if assembler.chunks == 0:
            raise not_openai_error(self.settings, url, content_type, body[:SAMPLE_BYTES])
        if not done and assembler.finish_reason is None:
            raise truncated_error(self.settings, _CLOSED_EARLY)
        return assembler.finish()[1]

    # -- the wire

    async def _open(
        self, stack: contextlib.AsyncExitStack, args: dict[str, Any], *, stream: bool
    ) -> Any:
        import openai

        create = self._client.chat.completions.with_streaming_response.create
        if not stream:
            return await stack.enter_async_context(create(**args))
        if not self.stream_options_supported:
            return await stack.enter_async_context(create(**args, stream=True))
        try:
            return await stack.enter_async_context(
                create(**args, stream=True, stream_options={"include_usage": True})
            )
        except openai.BadRequestError as exc:
            if "stream_options" not in _server_message(exc):
                raise
        # Some servers reject stream_options: remember, and ask without it.
        self.stream_options_supported = False
        return await stack.enter_async_context(create(**args, stream=True))

    async def _within(self, deadline: _Deadline, awaitable: Awaitable[Any]) -> Any:
        try:
            async with asyncio.timeout_at(deadline.when):
                return await awaitable
        except TimeoutError as exc:
            if deadline.expired():
                raise deadline_error(self.settings) from exc
            raise

    async def _next_bytes(self, chunks: AsyncIterator[bytes], deadline: _Deadline) -> bytes | None:
        """The next piece of the body (None at its end), bounded by the deadline."""
        try:
            # The timeout spans this one read only: never a yield to the caller.
            async with asyncio.timeout_at(deadline.when):
                return await anext(chunks, None)
        except TimeoutError as exc:
            if deadline.expired():
                raise deadline_error(self.settings) from exc
            raise
        except Exception as exc:
            if is_transport_timeout(exc):
                raise  # a stall longer than LLM_TIMEOUT: classified as a timeout
            raise _Broken(exc) from exc

    async def _read_body(
        self,
        chunks: AsyncIterator[bytes],
        deadline: _Deadline,
        limit: int,
        *,
        truncate: bool = False,
    ) -> bytes:
        """The rest of a body, at most `limit` bytes (more is an error unless `truncate`)."""
        body = bytearray()
        while True:
            try:
                data = await self._next_bytes(chunks, deadline)
            except _Broken as broken:
                if truncate:
                    return bytes(body)
                raise truncated_error(
                    self.settings, f"the connection broke before the answer finished ({broken})"
                ) from broken.cause
            if data is None:
                return bytes(body)
            body += data
            if len(body) > limit:
                if truncate:
                    return bytes(body[:limit])
                raise answer_too_large_error(self.settings)

    # -- one answer, not streamed

    async def complete(
        self,
        messages: list[dict],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        tools: list[dict] | None = None,
        retry_kinds: frozenset[str] = RETRYABLE_KINDS,
    ) -> Completion:
        """One non-streamed answer, with the same retry policy and bounds."""
        args = self._request_args(messages, tools, max_tokens, temperature)
        offered = offered_tools(tools)
        deadline = _Deadline(self.settings.request_deadline)
        attempt = 0
        restarts = 0
        while True:
            attempt += 1
            try:
                return await self._complete_once(args, deadline, offered)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                err = classify_error(exc, self.settings, sent_tools=bool(tools))
                if err.kind == "truncated" and restarts < TRUNCATION_RETRIES:
                    restarts += 1
                elif (
                    not err.retryable
                    or err.kind not in retry_kinds
                    or attempt - restarts >= self.max_attempts
                ):
                    raise final_error(err, attempt) from exc
                await self._retry_or_raise(err, attempt, deadline, exc)

    async def _complete_once(
        self, args: dict[str, Any], deadline: _Deadline, tools: Mapping[str, dict]
    ) -> Completion:
        async with contextlib.AsyncExitStack() as stack:
            response = await self._within(deadline, self._open(stack, args, stream=False))
            http = response.http_response
            chunks = response.iter_bytes().__aiter__()
            body = await self._read_body(chunks, deadline, self._event_limit)
            return self._interpret_body(
                body, http.headers.get("content-type", ""), str(http.request.url), tools
            )

    # -- preflight

    async def list_models(self, timeout: float = 10.0) -> list[str]:
        """The endpoint's `GET /models` ids, sorted; [] without a key (nothing is sent).

        Raises LLMError (classified like a chat error) when the endpoint fails or is slow."""
        if missing_key_hint(self.settings) is not None:
            return []

        async def ids() -> list[str]:
            return [model.id async for model in self._client.models.list()]

        try:
            return sorted(set(await asyncio.wait_for(ids(), timeout)))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise classify_error(exc, self.settings) from exc

    async def preflight(self) -> PreflightResult:
        """One `max_tokens=1` request proving key, URL and model work. Never raises."""
        started = time.perf_counter()
        hint = missing_key_hint(self.settings)
        if hint is not None:
            return PreflightResult(
                ok=False,
                message=f"no API key is configured for {self.settings.provider} "
                f"({self.settings.base_url}); {hint}",
                hint=hint,
                latency=0.0,
            )
        try:
            # Connection problems at start-up are configuration, not bad luck:
            # only rate limits and server errors are worth a retry here.
            await self.complete(
                [{"role": "user", "content": "ping"}],
                max_tokens=1,
                temperature=0,
                retry_kinds=frozenset({"rate_limit", "server"}),
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - preflight reports, never raises
            err = classify_error(exc, self.settings)
            return PreflightResult(
                ok=False,
                message=_preflight_message(err),
                hint=err.hint,
                latency=time.perf_counter() - started,
            )
        return PreflightResult(
            ok=True,
            message=f"{self.settings.model} at {self.settings.base_url} answered",
            hint="",
            latency=time.perf_counter() - started,
        )


def _preflight_message(err: LLMError) -> str:
    # The error already says what went wrong; the hint says which setting to fix.
    first = err.message.split(" ", 1)[0]
    message = err.message if "://" in first else err.message[:1].upper() + err.message[1:]
    return f"{message}; {err.hint}." if err.hint else message
