"""The model client: streaming chat completions, retries, preflight and cost.

Talks to any OpenAI-compatible endpoint through the real `openai.AsyncOpenAI`
client (imported lazily, so `hello-tui --version` stays fast). Its own retry
loop replaces the library's (429 / 5xx / timeouts / dropped connections, with
exponential backoff, jitter and `Retry-After`), and every failure becomes an
`LLMError` whose `kind` the agent can act on and whose `hint` names the
setting the user should fix.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from hello_tui.config import PROVIDER_BY_NAME, Settings, is_local_url

# ---------------------------------------------------------------- values


@dataclass(frozen=True)
class TokenUsage:
    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text as the model sent it; validation is the agent's job


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    index: int
    id: str | None
    name: str | None
    arguments_fragment: str


@dataclass(frozen=True)
class Completion:
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: TokenUsage | None = None
    reasoning: str = ""


StreamEvent = TextDelta | ReasoningDelta | ToolCallDelta | Completion


@dataclass(frozen=True)
class PreflightResult:
    ok: bool
    message: str
    hint: str
    latency: float  # seconds


HINT_KEY = "set LLM_API_KEY or --api-key"
HINT_URL = "check LLM_BASE_URL or --base-url"
HINT_MODEL = "set LLM_MODEL_ID or --model"
HINT_TIMEOUT = "check LLM_BASE_URL, or raise LLM_TIMEOUT"

RETRYABLE_KINDS = frozenset({"rate_limit", "server", "timeout", "unreachable", "protocol"})


class LLMError(Exception):
    """A model request failed; `kind` says how, `hint` says which setting to fix."""

    def __init__(
        self,
        message: str,
        kind: str,
        hint: str = "",
        *,
        status: int | None = None,
        retry_after: float | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.hint = hint
        self.status = status
        self.retry_after = retry_after
        self.retryable = kind in RETRYABLE_KINDS if retryable is None else retryable

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


RetryCallback = Callable[[int, float, str], None]
SleepFn = Callable[[float], Awaitable[None]]

# ---------------------------------------------------------------- errors

_TOOLS_WORDS = re.compile(r"\btools?\b|tool_choice|function[ _]?call|\bfunctions\b", re.IGNORECASE)
_MODEL_MISSING = re.compile(
    r"model.*(not exist|not found|does not exist|unknown|invalid|no such|not available)"
    r"|(unknown|invalid|no such) model|model_not_found",
    re.IGNORECASE,
)


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(body.get("message"), str):
            return body["message"]
    return str(getattr(exc, "message", "") or exc)


def _retry_after_seconds(headers: Any) -> float | None:
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())


def classify_error(exc: BaseException, settings: Settings, *, sent_tools: bool = False) -> LLMError:
    """Turn whatever the openai client (or the wire) raised into an LLMError."""
    if isinstance(exc, LLMError):
        return exc
    import openai

    host = urlparse(settings.base_url).netloc or settings.base_url
    if isinstance(exc, openai.APITimeoutError):
        return LLMError(
            f"{host} did not answer within {settings.timeout:g}s", "timeout", HINT_TIMEOUT
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        detail = f": {cause}" if cause and str(cause) else ""
        return LLMError(
            f"cannot reach {settings.base_url} (connection failed or dropped{detail})",
            "unreachable",
            HINT_URL + " (is the server running?)",
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        text = _server_message(exc)
        retry_after = _retry_after_seconds(exc.response.headers)
        if status in (401, 403):
            return LLMError(
                f"the API key was rejected by {host} ({status}: {text})",
                "auth",
                HINT_KEY,
                status=status,
            )
        if status == 429:
            if (exc.code or "") == "insufficient_quota" or "quota" in text.lower():
                # Waiting does not refill an empty account.
                return LLMError(
                    f"{host} says the account has no quota left ({text})",
                    "rate_limit",
                    "check the provider account's billing, or use another key (LLM_API_KEY)",
                    status=status,
                    retryable=False,
                )
            return LLMError(
                f"rate limited by {host} (429: {text})",
                "rate_limit",
                "wait a moment, or use a key with a higher limit (LLM_API_KEY)",
                status=status,
                retry_after=retry_after,
            )
        if status >= 500:
            return LLMError(
                f"{host} had a server error ({status}: {text})",
                "server",
                "try again later, or " + HINT_URL,
                status=status,
                retry_after=retry_after,
            )
        if status in (400, 404, 422):
            if sent_tools and _TOOLS_WORDS.search(text):
                return LLMError(
                    f"the endpoint does not accept tool calls ({status}: {text})",
                    "tools_unsupported",
                    "use --protocol react (or auto)",
                    status=status,
                )
            if (
                status == 404
                or (exc.code or "") == "model_not_found"
                or _MODEL_MISSING.search(text)
            ):
                if (exc.code or "") == "model_not_found" or "model" in text.lower():
                    return LLMError(
                        f"the model {settings.model!r} was not found at {host} ({status}: {text})",
                        "not_found",
                        HINT_MODEL,
                        status=status,
                    )
                return LLMError(
                    f"{settings.base_url} answered 404 ({text})",
                    "not_found",
                    HINT_URL + " (it usually ends in /v1), and LLM_MODEL_ID or --model",
                    status=status,
                )
        return LLMError(
            f"{host} rejected the request ({status}: {text})",
            "bad_request",
            HINT_MODEL + " (the model may not support this request)",
            status=status,
        )
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return LLMError(
            f"{host} sent a response that is not valid JSON ({exc})", "protocol", HINT_URL
        )
    if isinstance(exc, openai.APIError):
        # An error object inside the stream (no HTTP status): treat as a server failure.
        return LLMError(
            f"{host} reported an error mid-stream: {_server_message(exc)}",
            "server",
            "try again later",
        )
    if isinstance(exc, openai.OpenAIError):
        return LLMError(f"model client error: {exc}", "protocol", HINT_URL)
    return LLMError(
        f"unexpected failure talking to {host}: {type(exc).__name__}: {exc}", "protocol", HINT_URL
    )


# ---------------------------------------------------------------- assembly


class _StreamAssembler:
    """Collects streamed chunks into deltas for the caller and one final Completion."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason: str | None = None
        self.usage: TokenUsage | None = None

    def feed(self, chunk: Any) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = TokenUsage(usage.prompt_tokens or 0, usage.completion_tokens or 0)
        for choice in chunk.choices or []:
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
            delta = choice.delta
            if delta is None:
                continue
            extra = delta.model_extra or {}
            thought = extra.get("reasoning_content") or extra.get("reasoning")
            if isinstance(thought, str) and thought:
                self.reasoning.append(thought)
                events.append(ReasoningDelta(thought))
            if delta.content:
                self.content.append(delta.content)
                events.append(TextDelta(delta.content))
            for tc in delta.tool_calls or []:
                events.append(self._feed_call(tc))
        return events

    def _feed_call(self, tc: Any) -> ToolCallDelta:
        # getattr: the client builds chunks without validation, so fields a
        # sloppy server leaves out are missing rather than None.
        call_id = getattr(tc, "id", None)
        fn = getattr(tc, "function", None)
        name = getattr(fn, "name", None)
        fragment = getattr(fn, "arguments", None) or ""
        index = getattr(tc, "index", None)
        if index is None:
            # Some servers omit the index: a new id opens a new call, anything
            # else continues the latest one.
            known = next((i for i, c in self.calls.items() if call_id and c["id"] == call_id), None)
            if known is not None:
                index = known
            elif call_id or not self.calls:
                index = max(self.calls, default=-1) + 1
            else:
                index = max(self.calls)
        slot = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        if call_id and not slot["id"]:
            slot["id"] = call_id
        if name and name != slot["name"]:
            # Most servers send the name once; a few split it across chunks.
            slot["name"] = name if not slot["name"] else slot["name"] + name
        slot["arguments"] += fragment
        return ToolCallDelta(index=index, id=call_id, name=name, arguments_fragment=fragment)

    def completion(self) -> Completion:
        calls = [
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
            for i, c in sorted(self.calls.items())
        ]
        return Completion(
            content="".join(self.content),
            tool_calls=calls,
            finish_reason=self.finish_reason,
            usage=self.usage,
            reasoning="".join(self.reasoning),
        )


def _completion_from_response(resp: Any) -> Completion:
    choice = resp.choices[0] if resp.choices else None
    usage = (
        TokenUsage(resp.usage.prompt_tokens or 0, resp.usage.completion_tokens or 0)
        if getattr(resp, "usage", None) is not None
        else None
    )
    if choice is None:
        return Completion(content="", usage=usage)
    msg = choice.message
    extra = msg.model_extra or {}
    reasoning = extra.get("reasoning_content") or extra.get("reasoning") or ""
    calls = [
        ToolCall(
            id=tc.id or f"call_{i}",
            name=tc.function.name if tc.function else "",
            arguments=(tc.function.arguments if tc.function else "") or "",
        )
        for i, tc in enumerate(msg.tool_calls or [])
    ]
    return Completion(
        content=msg.content or "",
        tool_calls=calls,
        finish_reason=choice.finish_reason,
        usage=usage,
        reasoning=reasoning if isinstance(reasoning, str) else "",
    )


# ---------------------------------------------------------------- client


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
    """Async OpenAI-compatible chat client with our own retry policy."""

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

    # -- retry policy

    def retry_delay(self, err: LLMError, attempt: int) -> float:
        """Seconds to wait before attempt `attempt + 1`."""
        if err.retry_after is not None:
            return min(err.retry_after, self.retry_after_cap)
        backoff = self.base_delay * (2 ** (attempt - 1))
        return min(self.max_delay, backoff * (0.5 + self._jitter()))

    async def _before_retry(self, err: LLMError, attempt: int) -> None:
        delay = self.retry_delay(err, attempt)
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

        Retries happen only while nothing has reached the caller; once text
        was yielded a failure raises, so nothing is shown twice. Consumers
        that stop early should close the generator (`contextlib.aclosing`).
        """
        args = self._request_args(messages, tools, max_tokens, temperature)
        attempt = 0
        while True:
            attempt += 1
            yielded = False
            try:
                stream = await self._open_stream(args)
                assembler = _StreamAssembler()
                try:
                    async for chunk in stream:
                        for event in assembler.feed(chunk):
                            yielded = True
                            yield event
                finally:
                    # Closing the response is what stops the server's stream at
                    # once, on cancellation and aclose() alike.
                    await stream.close()
            except Exception as exc:
                err = classify_error(exc, self.settings, sent_tools=bool(tools))
                if yielded:
                    raise LLMError(
                        f"the answer broke off mid-stream: {err.message}",
                        err.kind,
                        err.hint,
                        status=err.status,
                        retryable=False,
                    ) from exc
                if not err.retryable or attempt >= self.max_attempts:
                    raise _final(err, attempt) from exc
                await self._before_retry(err, attempt)
                continue
            yield assembler.completion()
            return

    async def _open_stream(self, args: dict[str, Any]) -> Any:
        import openai

        if not self.stream_options_supported:
            return await self._client.chat.completions.create(**args, stream=True)
        try:
            return await self._client.chat.completions.create(
                **args, stream=True, stream_options={"include_usage": True}
            )
        except openai.BadRequestError as exc:
            if "stream_options" not in _server_message(exc):
                raise
        # Some servers reject stream_options: remember, and ask without it.
        self.stream_options_supported = False
        return await self._client.chat.completions.create(**args, stream=True)

    async def complete(
        self,
        messages: list[dict],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        tools: list[dict] | None = None,
        retry_kinds: frozenset[str] = RETRYABLE_KINDS,
    ) -> Completion:
        """One non-streamed answer, with the same retry policy."""
        args = self._request_args(messages, tools, max_tokens, temperature)
        attempt = 0
        while True:
            attempt += 1
            try:
                resp = await self._client.chat.completions.create(**args)
                return _completion_from_response(resp)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                err = classify_error(exc, self.settings, sent_tools=bool(tools))
                if not err.retryable or err.kind not in retry_kinds or attempt >= self.max_attempts:
                    raise _final(err, attempt) from exc
                await self._before_retry(err, attempt)

    # -- preflight

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
                message=_preflight_message(err, self.settings),
                hint=err.hint,
                latency=time.perf_counter() - started,
            )
        return PreflightResult(
            ok=True,
            message=f"{self.settings.model} at {self.settings.base_url} answered",
            hint="",
            latency=time.perf_counter() - started,
        )


def _final(err: LLMError, attempts: int) -> LLMError:
    if attempts <= 1:
        return err
    return LLMError(
        f"{err.message} — gave up after {attempts} attempts",
        err.kind,
        err.hint,
        status=err.status,
        retryable=False,
    )


def _preflight_message(err: LLMError, settings: Settings) -> str:
    # The error already says what went wrong; the hint says which setting to fix.
    message = err.message[:1].upper() + err.message[1:]
    return f"{message}; {err.hint}." if err.hint else message


def cost(usage: TokenUsage | None, settings: Settings) -> float | None:
    """Price of `usage` in the user's currency, or None when no price is set."""
    if usage is None or (settings.price_input is None and settings.price_output is None):
        return None
    return (
        usage.prompt_tokens * (settings.price_input or 0.0)
        + usage.completion_tokens * (settings.price_output or 0.0)
    ) / 1_000_000
