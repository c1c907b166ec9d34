"""A 200 answer that is not an OpenAI-compatible response, named as one clear error.

A base URL missing `/v1` often lands on a web app's HTML, a proxy or
captive portal serves its login page with status 200, and some gateways
answer in their own JSON. None of these may pass for an empty answer (which
the loop would ask again, and again): the error names the URL that answered,
what it sent, and the likely fix.
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import urlparse

from hello_tui.config import Settings
from hello_tui.llm.errors import LLMError

SAMPLE_BYTES = 16384  # how much of a wrong body is read to describe it

_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_LOGIN_WORDS = re.compile(
    r"log ?in|sign ?in|sign-in|signin|authenticat|captive|portal|proxy|single sign|sso\b|password",
    re.IGNORECASE,
)
_VERSION_SEGMENT = re.compile(r"/v\d+(beta\d*|alpha\d*)?(/|$)", re.IGNORECASE)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def looks_like_html(content_type: str, sample: bytes) -> bool:
    head = sample.lstrip()[:512].lower()
    return "html" in content_type.lower() or head.startswith(
        (b"<!doctype html", b"<html", b"<head")
    )


def describe_body(content_type: str, sample: bytes) -> str:
    """What a wrong body is, in a few words, for the error message."""
    if not sample.strip():
        return "an empty body"
    if looks_like_html(content_type, sample):
        title = _TITLE.search(sample)
        if title:
            name = html.unescape(title.group(1).decode("utf-8", "replace"))
            if name.strip():
                return f'an HTML page ("{_one_line(name, 80)}")'
        return "an HTML page"
    text = sample.decode("utf-8", "replace")
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            json.loads(stripped)
        except ValueError:
            pass
        else:
            return f"JSON that is not a chat completion ({_one_line(stripped, 100)})"
    if stripped.startswith(("data:", "event:")):
        return f"an event stream whose events are not chat-completion chunks ({_one_line(stripped, 100)})"
    return f'plain text ("{_one_line(stripped, 80)}")'


def _base_lacks_version(base_url: str) -> bool:
    return not _VERSION_SEGMENT.search(urlparse(base_url).path or "/")


def likely_fix(settings: Settings, content_type: str, sample: bytes) -> str:
    """The setting to check, most likely cause first."""
    base = settings.base_url.rstrip("/")
    login = looks_like_html(content_type, sample) and _LOGIN_WORDS.search(
        sample[:SAMPLE_BYTES].decode("utf-8", "replace")
    )
    if _base_lacks_version(base):
        fix = f"LLM_BASE_URL probably lacks /v1: try --base-url {base}/v1"
        if login:
            fix += "; or a proxy's login page answered: sign in to it or bypass it"
        return fix
    if login:
        return (
            "a proxy or login page answered instead of the model server: sign in to it or "
            "bypass it (NO_PROXY), then check LLM_BASE_URL"
        )
    return (
        "check LLM_BASE_URL: it must be the server's OpenAI-compatible API (usually ending in /v1)"
    )


def not_openai_error(settings: Settings, url: str, content_type: str, sample: bytes) -> LLMError:
    """One error, one line: who answered, with what, and what to change."""
    return LLMError(
        f"{url} answered 200 with {describe_body(content_type, sample)}, "
        "not an OpenAI-compatible chat completion",
        "not_openai",
        likely_fix(settings, content_type, sample),
        status=200,
        retryable=False,
    )
