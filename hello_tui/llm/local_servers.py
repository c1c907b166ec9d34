"""Local OpenAI-compatible servers: which of the usual ports answer `GET /v1/models`.

The setup dialog offers "local server" with a base URL; to fill it in, it asks
each usual port (Ollama 11434, llama.cpp's server 8080 and 8081, vLLM 8000,
LM Studio 1234) at once, with a short timeout, and says what answered and which
models it serves. Nothing here runs on an event loop: `probe_local_servers`
blocks for at most about one timeout and is meant for a worker thread.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

# The port each server listens on by default, and its name.
USUAL_PORTS: tuple[tuple[int, str], ...] = (
    (11434, "Ollama"),
    (8080, "llama.cpp"),
    (8081, "llama.cpp"),
    (8000, "vLLM"),
    (1234, "LM Studio"),
)

# What a server writes in `owned_by`, when it names itself there.
OWNERS = {"llamacpp": "llama.cpp", "vllm": "vLLM", "library": "Ollama"}

PROBE_TIMEOUT = 0.5
MODELS_SHOWN = 5


@dataclass(frozen=True)
class LocalServer:
    """One port asked: `base_url` answered with `models`, or `error` says why not."""

    port: int
    name: str  # the server the port (or its answer) suggests
    base_url: str
    models: list[str] = field(default_factory=list)
    error: str = ""
    needs_key: bool = False  # it answered 401/403: a server started with a key

    @property
    def answered(self) -> bool:
        return not self.error

    def describe(self) -> str:
        """ "Ollama at http://127.0.0.1:11434/v1: llama3.2, qwen2.5-coder"."""
        if self.error:
            return f"{self.name} ({self.port}): {self.error}"
        if self.needs_key:
            return f"{self.name} at {self.base_url}: it wants a key to list its models"
        shown = ", ".join(self.models[:MODELS_SHOWN]) or "no models listed"
        more = len(self.models) - MODELS_SHOWN
        if more > 0:
            shown += f" and {more} more"
        return f"{self.name} at {self.base_url}: {shown}"


def probe(
    port: int, name: str, *, host: str = "127.0.0.1", timeout: float = PROBE_TIMEOUT
) -> LocalServer:
    """Ask one port for its models (`GET /v1/models`)."""
    base_url = f"http://{host}:{port}/v1"
    request = urllib.request.Request(base_url + "/models", headers={"Accept": "application/json"})
    # No proxy: a proxy from the environment must not answer for a port on this machine.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=timeout) as response:
            body = json.loads(response.read(1_000_000).decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return LocalServer(port, name, base_url, needs_key=True)
        return LocalServer(port, name, base_url, error=f"answered HTTP {exc.code}")
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return LocalServer(port, name, base_url, error=_why(reason))
    except ValueError:
        return LocalServer(port, name, base_url, error="answered, but not with a model list")
    entries = body.get("data") if isinstance(body, dict) else None
    if not isinstance(entries, list):
        return LocalServer(port, name, base_url, error="answered, but not with a model list")
    models = [str(e["id"]) for e in entries if isinstance(e, dict) and e.get("id")]
    owners = {str(e.get("owned_by", "")) for e in entries if isinstance(e, dict)}
    named = next((OWNERS[o] for o in sorted(owners) if o in OWNERS), name)
    return LocalServer(port, named, base_url, models=models)


def probe_local_servers(
    ports: tuple[tuple[int, str], ...] = USUAL_PORTS,
    *,
    host: str = "127.0.0.1",
    timeout: float = PROBE_TIMEOUT,
) -> list[LocalServer]:
    """Every port asked at once; the results in the order of `ports`."""
    with ThreadPoolExecutor(max_workers=max(len(ports), 1)) as pool:
        futures = [
            pool.submit(probe, port, name, host=host, timeout=timeout) for port, name in ports
        ]
        return [future.result() for future in futures]


def _why(reason: object) -> str:
    if isinstance(reason, ConnectionRefusedError):
        return "nothing listening"
    if isinstance(reason, TimeoutError) or "timed out" in str(reason):
        return "no answer in time"
    return str(reason)
