"""Every way a model request fails, as one `LLMError` with a `kind` and a `hint`.

`classify_error` turns what the openai client or the wire raised into an
LLMError; the constructors below cover the failures the client detects
itself (a cut-off stream, a runaway answer, a request past its deadline).
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from typing import Any
from urllib.parse import urlparse

from hello_tui.config import Settings

HINT_KEY = "set LLM_API_KEY or --api-key"
HINT_URL = "check LLM_BASE_URL or --base-url"
HINT_MODEL = "set LLM_MODEL_ID or --model"
HINT_TIMEOUT = "check LLM_BASE_URL, or raise LLM_TIMEOUT"

RETRYABLE_KINDS = frozenset({"rate_limit", "server", "timeout", "unreachable", "protocol"})


class LLMError(Exception):
    """A model request failed; `kind` says how, `hint` says which setting to fix.

    Kinds: auth, rate_limit, server, timeout, unreachable, protocol,
    tools_unsupported, not_found, bad_request, truncated, answer_too_large,
    deadline, not_openai.
    """

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


def host_of(settings: Settings) -> str:
    return urlparse(settings.base_url).netloc or settings.base_url


# ---------------------------------------------------------------- detected by the client


def truncated_error(settings: Settings, detail: str) -> LLMError:
    return LLMError(
        f"the answer from {host_of(settings)} was cut off: {detail}",
        "truncated",
        "try again; if it keeps happening, check the server at LLM_BASE_URL "
        "(or a proxy in between)",
        retryable=False,
    )


def answer_too_large_error(settings: Settings) -> LLMError:
    return LLMError(
        f"the answer from {host_of(settings)} grew past LLM_MAX_ANSWER_BYTES "
        f"({settings.max_answer_bytes} bytes) and was stopped",
        "answer_too_large",
        "raise LLM_MAX_ANSWER_BYTES if answers this long are expected",
        retryable=False,
    )


def deadline_error(settings: Settings) -> LLMError:
    return LLMError(
        f"the request to {host_of(settings)} ran past LLM_REQUEST_DEADLINE "
        f"({settings.request_deadline:g}s) and was stopped",
        "deadline",
        "raise LLM_REQUEST_DEADLINE if the model needs longer, or check the server",
        retryable=False,
    )


def mid_stream_error(settings: Settings, message: str) -> LLMError:
    """An error object sent inside a 200 stream (vLLM and proxies do this)."""
    return LLMError(
        f"{host_of(settings)} reported an error mid-stream: {message}",
        "server",
        "try again later",
    )


# ---------------------------------------------------------------- raised by the client or wire

_TOOLS_WORDS = re.compile(
    r"\btools?\b|tool_choice|tool[ _-]?call|function[ _-]?call|\bfunctions\b", re.IGNORECASE
)
# The error must also say the feature is missing: "tool" alone appears in
# complaints about malformed history ("messages with role 'tool' must ..."),
# which are not a reason to give up native tool calls.
_NOT_SUPPORTED = re.compile(
    r"not supported|does not support|doesn't support|do not support|unsupported"
    r"|not enabled|not available|not allowed|not permitted|requires --|--jinja"
    r"|enable-auto-tool-choice|tool-call-parser|unrecognized request argument"
    r"|unknown (parameter|field|argument|name)|extra (inputs|fields) (are )?not permitted"
    r"|unexpected (keyword|field|parameter)|no tool support|no support for"
    r"|does not accept|doesn't accept|not a valid (parameter|argument|field)",
    re.IGNORECASE,
)
_MODEL_MISSING = re.compile(
    r"model.*(not exist|not found|does not exist|unknown|invalid|no such|not available)"
    r"|(unknown|invalid|no such) model|model_not_found",
    re.IGNORECASE,
)


def rejects_tools(
    status: int, text: str, param: str | None = None, code: str | None = None
) -> bool:
    """Whether an error response says the endpoint cannot take `tools` at all."""
    if status not in (400, 404, 422, 500, 501):
        return False
    if (code or "") in ("tools_not_supported", "tool_use_not_supported"):
        return True
    if (param or "") in ("tools", "tool_choice") and _NOT_SUPPORTED.search(text):
        return True
    return bool(_TOOLS_WORDS.search(text) and _NOT_SUPPORTED.search(text))


def _server_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(body.get("message"), str):
            return body["message"]
        if isinstance(inner, str):
            return inner
    return str(getattr(exc, "message", "") or exc)


def _error_param(exc: Any) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("param"), str):
            return inner["param"]
    return getattr(exc, "param", None)


def _describe_raw_body(exc: Any) -> str | None:
    """An error page that is not JSON (a proxy's HTML, plain text), in a few words on one line."""
    from hello_tui.llm.wire import describe_body

    response = getattr(exc, "response", None)
    if response is None:
        return None
    try:
        raw = response.content[:16384]
    except Exception:  # noqa: BLE001 - a body that cannot be read is described by the status alone
        return None
    if not raw.strip():
        return None
    return describe_body(response.headers.get("content-type", ""), raw)


def retry_after_seconds(headers: Any) -> float | None:
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


def is_transport_timeout(exc: BaseException) -> bool:
    """A read/connect timeout of the HTTP library the openai client uses.

    Matched by class name: depending on its version, openai rides on httpx
    or on its successor, and both name the base class TimeoutException.
    """
    return isinstance(exc, TimeoutError) or any(
        cls.__name__ == "TimeoutException" for cls in type(exc).__mro__
    )


def classify_error(exc: BaseException, settings: Settings, *, sent_tools: bool = False) -> LLMError:
    """Turn whatever the openai client (or the wire) raised into an LLMError."""
    if isinstance(exc, LLMError):
        return exc
    import openai

    host = host_of(settings)
    if isinstance(exc, openai.APITimeoutError) or is_transport_timeout(exc):
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
        return _classify_status(exc, settings, sent_tools=sent_tools)
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return LLMError(
            f"{host} sent a response that is not valid JSON ({exc})", "protocol", HINT_URL
        )
    if isinstance(exc, openai.APIError):
        return mid_stream_error(settings, _server_message(exc))
    if isinstance(exc, openai.OpenAIError):
        return LLMError(f"model client error: {exc}", "protocol", HINT_URL)
    return LLMError(
        f"unexpected failure talking to {host}: {type(exc).__name__}: {exc}", "protocol", HINT_URL
    )


def _classify_status(exc: Any, settings: Settings, *, sent_tools: bool) -> LLMError:
    host = host_of(settings)
    status = exc.status_code
    text = _server_message(exc)
    if not isinstance(getattr(exc, "body", None), dict):
        text = _describe_raw_body(exc) or text
    code = exc.code if isinstance(getattr(exc, "code", None), str) else ""
    retry_after = retry_after_seconds(exc.response.headers)
    if sent_tools and rejects_tools(status, text, _error_param(exc), code):
        return LLMError(
            f"the endpoint does not accept tool calls ({status}: {text})",
            "tools_unsupported",
            "use --protocol react (or auto)",
            status=status,
        )
    if status in (401, 403):
        return LLMError(
            f"the API key was rejected by {host} ({status}: {text})",
            "auth",
            HINT_KEY,
            status=status,
        )
    if status == 429:
        if code == "insufficient_quota" or "quota" in text.lower():
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
    if status in (400, 404, 422) and (
        status == 404 or code == "model_not_found" or _MODEL_MISSING.search(text)
    ):
        if code == "model_not_found" or "model" in text.lower():
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


def final_error(err: LLMError, attempts: int) -> LLMError:
    """The error to raise after `attempts` tries, saying that it gave up."""
    if attempts <= 1:
        return err
    return LLMError(
        f"{err.message} — gave up after {attempts} attempts",
        err.kind,
        err.hint,
        status=err.status,
        retryable=False,
    )
