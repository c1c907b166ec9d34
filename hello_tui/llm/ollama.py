"""Ollama's effective context length for the configured model, from its native API.

Ollama's OpenAI-compatible endpoint cannot be told a context size per
request, and its default is small (4096 tokens below 24 GiB of VRAM, see
https://github.com/ollama/ollama/blob/main/docs/context-length.mdx): a longer
prompt is cut from the front without a word. So its native API is asked (only
when the server is known to be Ollama, see `llm.model_window`):

1. `GET /api/ps`: a loaded model reports the context it actually runs with;
2. else `POST /api/show`: `num_ctx` in `parameters` (the Modelfile's
   setting), capped by the model's own `*.context_length` in `model_info`;
3. else Ollama's default.
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from hello_tui.config import Settings

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


def native_root(base_url: str) -> str:
    """A server's native API root for its OpenAI-compatible base URL (`.../v1` dropped)."""
    return _VERSION_TAIL.sub("", base_url.rstrip("/")).rstrip("/")


def looks_like_ollama_url(settings: Settings) -> bool:
    """The configuration says Ollama: its provider, its port, or its name in the URL."""
    url = settings.base_url.lower()
    host = urlparse(url).netloc
    return settings.provider == "ollama" or host.endswith(":11434") or "ollama" in url


def _request(settings: Settings, path: str, body: dict | None, timeout: float) -> Any:
    url = native_root(settings.base_url) + path
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
    """Ask Ollama (blocking) what context the model gets; None when that cannot be known.

    Call it only for a server known to be Ollama: every request here is Ollama's own."""
    try:
        show = _request(settings, "/api/show", {"model": settings.model}, timeout)
        if not isinstance(show, dict) or not isinstance(show.get("model_info"), dict):
            return None  # not Ollama after all, or not this model
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


def describe_context(ctx: OllamaContext) -> str:
    """Where Ollama's number comes from, and how to raise it when it is Ollama's default."""
    return {
        "loaded": "Ollama: /api/ps context_length, as loaded now",
        "num_ctx": "Ollama: num_ctx in its Modelfile",
        "default": "Ollama's default, no num_ctx set; raise it with OLLAMA_CONTEXT_LENGTH "
        "where `ollama serve` runs",
    }[ctx.source]
