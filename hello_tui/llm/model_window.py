"""The model's context window: asked from the endpoint, else a built-in table, else a default.

The context budget is the window of the model in use (unless
CODE_AGENT_CONTEXT_BUDGET overrides it). Where it comes from, in order:

1. the endpoint. One `GET <base>/models` (the OpenAI list every compatible
   server has, asked with the same key as the chat requests) tells most:
   vLLM's `max_model_len`, OpenRouter's and Together's `context_length`,
   Groq's `context_window`. Its `owned_by` also says which server answers,
   and only then is that server's own API asked:
   - `llamacpp` (llama.cpp's `llama-server`): `GET /props`,
     `default_generation_settings.n_ctx` (the window it runs with);
   - `organization_owner` (LM Studio): `GET /api/v0/models/<id>`,
     `loaded_context_length`, else `max_context_length`;
   - Ollama (`llm.ollama`): asked when the URL says so (provider, port
     11434, "ollama" in it) or its listing looks like Ollama's (`owned_by`
     "library", or every id carries a `:tag`): no other server is sent
     Ollama's requests;
   - `me` (llama-cpp-python's `llama_cpp.server`), which states its window
     nowhere but in the error for a prompt that does not fit, and gives that
     error before it evaluates anything: it is sent one prompt longer than
     any window it could hold, counted first with its own tokenizer
     (`POST /extras/tokenize/count`), and its `400` names the window.
2. the table below, for cloud models whose endpoints do not say;
3. `DEFAULT_CONTEXT_BUDGET`.

Each (endpoint, model) is probed once per process, on a worker thread, with
short timeouts; whatever goes wrong on the way (unreachable, not JSON, an
odd shape) means "the endpoint does not say", never an error.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from hello_tui.config import DEFAULT_CONTEXT_BUDGET, Settings
from hello_tui.llm.ollama import describe_context, looks_like_ollama_url, native_root, probe_ollama

PROBE_TIMEOUT = 2.0  # seconds per request: the first turn must not wait long on a dead port
# llama-cpp-python: a prompt of this many tokens is past any window its server can hold in
# memory (the key-value cache of a million tokens), so it is refused before evaluation;
# tokenizing it takes the server a moment, hence its own timeout.
OVERSIZED_PROMPT_TOKENS = 1 << 20
OVERSIZED_PROMPT_LIMIT = 32 << 20  # characters: a tokenizer that packs text tighter gives up
OVERSIZED_PROBE_TIMEOUT = 20.0
LISTING_LIMIT = 8 << 20  # an aggregator's model list is large; a page past this is not one
OVERRIDE = "CODE_AGENT_CONTEXT_BUDGET"

# Fields of a /v1/models entry that carry the window, by the servers that send them.
_ENTRY_FIELDS = (
    ("max_model_len", "vLLM"),
    ("loaded_context_length", "LM Studio"),
    ("context_length", "the endpoint"),
    ("context_window", "the endpoint"),
    ("max_context_length", "the endpoint"),
)

# Published windows of cloud models (tokens), matched by the longest prefix of the model's
# name (lower case, any "vendor/" prefix of a proxy dropped).
KNOWN_WINDOWS: dict[str, int] = {
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "claude": 200_000,
    "gemini": 1_048_576,
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
    "deepseek-coder": 128_000,
    "deepseek-v3": 128_000,
    "deepseek-r1": 128_000,
    "qwen-max": 32_768,
    "qwen-plus": 131_072,
    "qwen-turbo": 1_000_000,
    "qwen-long": 10_000_000,
    "qwen3-coder": 262_144,
    "qwen3": 131_072,
    "qwen2.5-coder": 32_768,
    "qwen2.5": 32_768,
    "kimi-k2": 131_072,
    "kimi-latest": 131_072,
    "moonshot-v1-8k": 8_192,
    "moonshot-v1-32k": 32_768,
    "moonshot-v1-128k": 131_072,
    "glm-4.6": 200_000,
    "glm-4.5": 131_072,
    "glm-4": 128_000,
    "mistral-large": 131_072,
    "codestral": 256_000,
    "llama-3.1": 131_072,
    "llama-3.3": 131_072,
    "llama3.1": 131_072,
    "llama3.3": 131_072,
}


@dataclass(frozen=True)
class ModelWindow:
    tokens: int
    source: str  # where it was learnt, as `doctor` and the status bar say it
    from_endpoint: bool = False


@dataclass(frozen=True)
class Budget:
    """The context budget in force and why: the model's window, or the override."""

    tokens: int
    source: str
    window: ModelWindow


def table_window(model: str) -> ModelWindow | None:
    name = model.lower().rsplit("/", 1)[-1].strip()
    best = max((p for p in KNOWN_WINDOWS if name.startswith(p)), key=len, default=None)
    if best is None:
        return None
    return ModelWindow(KNOWN_WINDOWS[best], f"built-in table ({best}*)")


def _get(url: str, settings: Settings, timeout: float, limit: int = 1 << 20) -> Any:
    headers = {"Accept": "application/json"}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"  # the model's own host
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = response.read(limit + 1)
    if len(body) > limit:
        raise ValueError("answer too large")
    return json.loads(body)


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _entries(listing: Any) -> list[dict[str, Any]]:
    data = listing.get("data") if isinstance(listing, dict) else None
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def _entry_for(entries: list[dict[str, Any]], model: str) -> dict[str, Any] | None:
    """The listing's entry for the model; a server that lists one model serves it by any name."""
    for entry in entries:
        if entry.get("id") == model:
            return entry
    return entries[0] if len(entries) == 1 else None


def _from_entry(entry: dict[str, Any]) -> ModelWindow | None:
    for key, server in _ENTRY_FIELDS:
        tokens = _positive(entry.get(key))
        if tokens is not None:
            return ModelWindow(tokens, f"{server}: /v1/models {key}", True)
    top = entry.get("top_provider")  # OpenRouter: the provider actually routed to
    if isinstance(top, dict) and (tokens := _positive(top.get("context_length"))) is not None:
        return ModelWindow(tokens, "the endpoint: /v1/models top_provider.context_length", True)
    return None


def _llama_cpp(settings: Settings, timeout: float) -> ModelWindow | None:
    props = _get(native_root(settings.base_url) + "/props", settings, timeout)
    general = props.get("default_generation_settings") if isinstance(props, dict) else None
    tokens = _positive(general.get("n_ctx")) if isinstance(general, dict) else None
    if tokens is None and isinstance(props, dict):
        tokens = _positive(props.get("n_ctx"))
    return None if tokens is None else ModelWindow(tokens, "llama.cpp: /props n_ctx", True)


def _lm_studio(settings: Settings, model_id: str, timeout: float) -> ModelWindow | None:
    quoted = urllib.parse.quote(model_id, safe="")
    info = _get(f"{native_root(settings.base_url)}/api/v0/models/{quoted}", settings, timeout)
    if not isinstance(info, dict):
        return None
    for key in ("loaded_context_length", "max_context_length"):
        tokens = _positive(info.get(key))
        if tokens is not None:
            return ModelWindow(tokens, f"LM Studio: /api/v0/models {key}", True)
    return None


def _post(url: str, settings: Settings, payload: dict[str, Any], timeout: float) -> Any:
    """POST JSON; an HTTP error's JSON body is returned as the answer (what 400s say)."""
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    data = json.dumps(payload).encode()
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read(1 << 20))
    except urllib.error.HTTPError as exc:
        with exc:
            return json.loads(exc.read(1 << 20))


def _oversized_prompt(settings: Settings, model_id: str, timeout: float) -> str | None:
    """A prompt of at least OVERSIZED_PROMPT_TOKENS tokens by the server's own count."""
    url = native_root(settings.base_url) + "/extras/tokenize/count"
    repeats = OVERSIZED_PROMPT_TOKENS
    while 2 * repeats <= OVERSIZED_PROMPT_LIMIT:
        text = " a" * repeats
        answer = _post(url, settings, {"model": model_id, "input": text}, timeout)
        count = _positive(answer.get("count")) if isinstance(answer, dict) else None
        if count is None:
            return None  # not llama-cpp-python's server after all
        if count >= OVERSIZED_PROMPT_TOKENS:
            return text
        repeats = repeats * (OVERSIZED_PROMPT_TOKENS // count + 1)
    return None


def _llama_cpp_python(settings: Settings, model_id: str, timeout: float) -> ModelWindow | None:
    timeout = max(timeout, OVERSIZED_PROBE_TIMEOUT)
    prompt = _oversized_prompt(settings, model_id, timeout)
    if prompt is None:
        return None
    url = settings.base_url.rstrip("/") + "/completions"
    answer = _post(url, settings, {"model": model_id, "prompt": prompt, "max_tokens": 1}, timeout)
    error = answer.get("error") if isinstance(answer, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    tokens = window_from_error(message) if isinstance(message, str) else None
    if tokens is None:
        return None
    return ModelWindow(tokens, "llama-cpp-python: its error for an oversized prompt", True)


def listing_looks_like_ollama(entries: list[dict[str, Any]]) -> bool:
    """Ollama's /v1/models: owned by "library", or ids that all carry a tag (`name:tag`)."""
    if not entries:
        return False
    if any(e.get("owned_by") == "library" for e in entries):
        return True
    return all(re.fullmatch(r"[^\s:/]+(/[^\s:/]+)*:[\w.-]+", str(e.get("id", ""))) for e in entries)


def _ollama(settings: Settings, timeout: float) -> ModelWindow | None:
    ctx = probe_ollama(settings, timeout=timeout)
    return None if ctx is None else ModelWindow(ctx.context_length, describe_context(ctx), True)


def _guarded(probe: Any, *args: Any) -> ModelWindow | None:
    try:
        result = probe(*args)
    except (OSError, ValueError, http.client.HTTPException):
        return None
    return result if isinstance(result, ModelWindow) else None


def endpoint_window(settings: Settings, *, timeout: float = PROBE_TIMEOUT) -> ModelWindow | None:
    """What the endpoint says of the model's window (blocking); None when it does not say."""
    if looks_like_ollama_url(settings):
        return _guarded(_ollama, settings, timeout)
    try:
        listing = _get(settings.base_url.rstrip("/") + "/models", settings, timeout, LISTING_LIMIT)
    except (OSError, ValueError, http.client.HTTPException):
        return None
    entries = _entries(listing)
    entry = _entry_for(entries, settings.model)
    if entry is not None and (window := _from_entry(entry)) is not None:
        return window
    owners = {e.get("owned_by") for e in ([entry] if entry else entries)}
    if "llamacpp" in owners or (entry is not None and isinstance(entry.get("meta"), dict)):
        return _guarded(_llama_cpp, settings, timeout)
    if "organization_owner" in owners and entry is not None:
        return _guarded(_lm_studio, settings, str(entry.get("id", settings.model)), timeout)
    if "me" in owners and entry is not None:
        return _guarded(_llama_cpp_python, settings, str(entry.get("id", settings.model)), timeout)
    if listing_looks_like_ollama(entries):
        return _guarded(_ollama, settings, timeout)
    return None


def probe_window(settings: Settings, *, timeout: float = PROBE_TIMEOUT) -> ModelWindow:
    """The model's window: the endpoint's word, the table's, or the default (blocking)."""
    return (
        endpoint_window(settings, timeout=timeout)
        or table_window(settings.model)
        or ModelWindow(DEFAULT_CONTEXT_BUDGET, "default: the endpoint does not say")
    )


_known: dict[tuple[str, str], ModelWindow] = {}
_probing: dict[tuple[str, str], threading.Lock] = {}
_guard = threading.Lock()


def cached_window(settings: Settings, *, timeout: float = PROBE_TIMEOUT) -> ModelWindow:
    """`probe_window`, once per (endpoint, model) in this process (blocking)."""
    key = (settings.base_url.rstrip("/"), settings.model)
    with _guard:
        lock = _probing.setdefault(key, threading.Lock())
    with lock:  # a second caller waits for the first probe instead of repeating it
        known = _known.get(key)
        if known is None:
            known = _known[key] = probe_window(settings, timeout=timeout)
        return known


async def model_window(settings: Settings, *, timeout: float = PROBE_TIMEOUT) -> ModelWindow:
    """`cached_window` off the event loop."""
    return await asyncio.to_thread(cached_window, settings, timeout=timeout)


def budget_for(settings: Settings, window: ModelWindow) -> Budget:
    """The override when CODE_AGENT_CONTEXT_BUDGET is set, else the model's window."""
    origin = settings.sources.get("context_budget", "default")
    if origin != "default":
        return Budget(settings.context_budget, f"{OVERRIDE} ({origin})", window)
    return Budget(window.tokens, window.source, window)


def budget_warning(budget: Budget) -> str | None:
    """One line when an override asks for more than the endpoint says the model holds."""
    window = budget.window
    if not window.from_endpoint or budget.tokens <= window.tokens:
        return None
    return (
        f"{OVERRIDE}={budget.tokens} is larger than the model's window of {window.tokens} "
        f"tokens ({window.source}): longer requests are cut or refused by the server. "
        f"Lower {OVERRIDE} to {window.tokens} or unset it."
    )


# How servers say a request was past the window: OpenAI, vLLM and llama-cpp-python
# ("This model's maximum context length is 2048 tokens"), llama.cpp ("exceeds the
# available context size (2048 tokens)"), llama-cpp-python's own ("context window of 2048").
_OVERFLOW = re.compile(
    r"maximum context length is (\d+) tokens|context window of (\d+)"
    r"|available context size \((\d+) tokens\)",
    re.IGNORECASE,
)


def window_from_error(message: str) -> int | None:
    """The window an endpoint's "request too long" error names; None when it names none."""
    match = _OVERFLOW.search(message)
    if match is None:
        return None
    return _positive(int(next(g for g in match.groups() if g)))


def learnt_window(settings: Settings, tokens: int) -> ModelWindow:
    """A window the endpoint named in an error: remembered for this endpoint and model."""
    window = ModelWindow(tokens, f"the endpoint's error: maximum context length {tokens}", True)
    with _guard:
        _known[(settings.base_url.rstrip("/"), settings.model)] = window
    return window


def describe_budget(budget: Budget) -> str:
    return f"{budget.tokens} tokens ({budget.source})"
