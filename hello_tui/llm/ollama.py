"""Ollama's effective context length for the configured model, and a warning when it is too small.

Ollama's OpenAI-compatible endpoint cannot be told a context size per
request, and its default is small (4096 tokens below 24 GiB of VRAM, see
https://github.com/ollama/ollama/blob/main/docs/context-length.mdx): a longer
prompt is cut from the front without a word, and the agent loses its task.
So, when the base URL is Ollama's, its native API is asked:

1. `GET /api/ps`: a loaded model reports the context it actually runs with;
2. else `POST /api/show`: `num_ctx` in `parameters` (the Modelfile's
   setting), capped by the model's own `*.context_length` in `model_info`;
3. else Ollama's default.

Whatever goes wrong on the way (not Ollama, unreachable, odd JSON) means
"don't know": no warning and no error.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from hello_tui.config import Settings, is_local_url

OLLAMA_DEFAULT_CONTEXT = 4096
PROBE_TIMEOUT = 2.0  # seconds per request: the first turn must not wait on a dead port
_VERSION_TAIL = re.compile(r"/v1/?$")
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class OllamaContext:
    model: str
    context_length: int  # the tokens a prompt may fill
    source: str  # "loaded" (from /api/ps), "num_ctx" (Modelfile) or "default"
    model_max: int | None  # what the model was trained for, when Ollama says


def ollama_root(base_url: str) -> str:
    """Ollama's native API root for an OpenAI-compatible base URL (`.../v1` dropped)."""
    return _VERSION_TAIL.sub("", base_url.rstrip("/")).rstrip("/")


def may_be_ollama(settings: Settings) -> bool:
    """Worth asking: the provider is Ollama, the URL says so, or the server is on this machine."""
    url = settings.base_url.lower()
    host = urlparse(url).netloc
    return (
        settings.provider == "ollama"
        or ":11434" in host
        or "ollama" in url
        or is_local_url(settings.base_url)
    )


def _request(settings: Settings, path: str, body: dict | None, timeout: float) -> Any:
    url = ollama_root(settings.base_url) + path
    headers = {"Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"  # same host as the model
    request = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read(1 << 20))


def _full_name(model: str) -> str:
    return model if ":" in model.rsplit("/", 1)[-1] else f"{model}:latest"


def _loaded_context(ps: Any, model: str) -> int | None:
    entries = ps.get("models") if isinstance(ps, dict) else None
    wanted = _full_name(model)
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        names = {_full_name(str(entry.get(k))) for k in ("model", "name") if entry.get(k)}
        length = entry.get("context_length")
        if wanted in names and isinstance(length, int) and length > 0:
            return length
    return None


def model_max_context(show: Any) -> int | None:
    """`<architecture>.context_length` from /api/show's model_info."""
    info = show.get("model_info") if isinstance(show, dict) else None
    if not isinstance(info, dict):
        return None
    for key, value in info.items():
        if key.endswith(".context_length") and isinstance(value, int) and value > 0:
            return value
    return None


def modelfile_num_ctx(show: Any) -> int | None:
    """`num_ctx` from /api/show's parameters (one "name value" per line)."""
    params = show.get("parameters") if isinstance(show, dict) else None
    if not isinstance(params, str):
        return None
    found = _NUM_CTX.findall(params)
    return int(found[-1]) if found else None


def probe_ollama(settings: Settings, *, timeout: float = PROBE_TIMEOUT) -> OllamaContext | None:
    """Ask Ollama (blocking) what context the model gets; None when that cannot be known."""
    if not may_be_ollama(settings):
        return None
    try:
        version = _request(settings, "/api/version", None, timeout)
        if not isinstance(version, dict) or not isinstance(version.get("version"), str):
            return None  # something else answers here: not Ollama
        show = _request(settings, "/api/show", {"model": settings.model}, timeout)
        model_max = model_max_context(show)
        try:
            loaded = _loaded_context(_request(settings, "/api/ps", None, timeout), settings.model)
        except (OSError, ValueError, http.client.HTTPException):
            loaded = None  # older servers: fall back to what the Modelfile says
    except (OSError, ValueError, http.client.HTTPException):
        return None
    if loaded is not None:
        return OllamaContext(settings.model, loaded, "loaded", model_max)
    num_ctx = modelfile_num_ctx(show)
    if num_ctx is not None:
        length = min(num_ctx, model_max) if model_max else num_ctx
        return OllamaContext(settings.model, length, "num_ctx", model_max)
    length = min(OLLAMA_DEFAULT_CONTEXT, model_max) if model_max else OLLAMA_DEFAULT_CONTEXT
    return OllamaContext(settings.model, length, "default", model_max)


async def ollama_context(
    settings: Settings, *, timeout: float = PROBE_TIMEOUT
) -> OllamaContext | None:
    """`probe_ollama` off the event loop."""
    return await asyncio.to_thread(probe_ollama, settings, timeout=timeout)


def _round_up(tokens: int) -> int:
    size = 1024
    while size < tokens:
        size *= 2
    return size


def describe_context(ctx: OllamaContext) -> str:
    where = {
        "loaded": "as loaded now",
        "num_ctx": "num_ctx in its Modelfile",
        "default": "Ollama's default; no num_ctx set",
    }[ctx.source]
    return f"{ctx.context_length} tokens for {ctx.model} ({where})"


def context_warning(ctx: OllamaContext, budget: int) -> str | None:
    """One line when the context is below the budget, with the fix; None when it fits."""
    if ctx.context_length >= budget:
        return None
    head = (
        f"Ollama runs {ctx.model} with a context of {ctx.context_length} tokens, below the "
        f"context budget of {budget} (CODE_AGENT_CONTEXT_BUDGET): longer prompts are cut "
        "without notice"
    )
    if ctx.model_max is not None and ctx.model_max < budget:
        return f"{head}. The model holds at most {ctx.model_max}: set CODE_AGENT_CONTEXT_BUDGET={ctx.model_max}"
    want = _round_up(budget)
    if ctx.model_max is not None:
        want = min(want, ctx.model_max)
    return (
        f"{head}. Fix: set OLLAMA_CONTEXT_LENGTH={want} where `ollama serve` runs, or "
        f"`PARAMETER num_ctx {want}` in a Modelfile (ollama create), "
        f"or lower CODE_AGENT_CONTEXT_BUDGET to {ctx.context_length}"
    )


async def ollama_context_warning(
    settings: Settings, *, timeout: float = PROBE_TIMEOUT
) -> str | None:
    """The warning to show at the first turn, or None (fits, not Ollama, or unreachable)."""
    ctx = await ollama_context(settings, timeout=timeout)
    return None if ctx is None else context_warning(ctx, settings.context_budget)
