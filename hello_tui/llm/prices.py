"""What a model's tokens cost: LLM_PRICE_INPUT / LLM_PRICE_OUTPUT, else a built-in table.

Prices are USD per million tokens, list price, cache-miss input, standard
(not batch) tier. Local servers (Ollama, vLLM, anything on this machine)
cost nothing. A model the table does not know has no price: no cost shown
rather than a made-up one.

Sources, as those pages listed them in 2025-2026 (table compiled 2026-12-01):
- OpenAI: https://platform.openai.com/docs/pricing
- DeepSeek: https://api-docs.deepseek.com/quick_start/pricing (price list in force since
  2025-09-05: one price for deepseek-chat and deepseek-reasoner)
- Qwen: Alibaba Cloud Model Studio, international (Singapore) list prices in USD,
  https://www.alibabacloud.com/help/en/model-studio/models (lowest context tier; the
  mainland endpoint bills in CNY at other rates: set LLM_PRICE_* for an exact figure)
- Kimi: https://platform.moonshot.ai/docs/pricing/chat
- Zhipu / Z.ai: https://docs.z.ai/guides/overview/pricing (glm-4-flash and glm-4.5-flash
  are free)
- ModelScope's API-Inference is a free daily quota: https://modelscope.cn/docs/model-service/API-Inference/intro
Prices change; the override variables always win.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hello_tui.config import Settings, is_local_url

FREE_PROVIDERS = frozenset({"ollama", "vllm", "local", "modelscope"})

# model id -> (input, output), USD per million tokens.
PRICE_TABLE: dict[str, tuple[float, float]] = {
    # OpenAI
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-5.1": (1.25, 10.00),
    "gpt-5-codex": (1.25, 10.00),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    # DeepSeek
    "deepseek-chat": (0.56, 1.68),
    "deepseek-reasoner": (0.56, 1.68),
    # Qwen (DashScope / Model Studio)
    "qwen-turbo": (0.05, 0.20),
    "qwen-flash": (0.05, 0.40),
    "qwen-plus": (0.40, 1.20),
    "qwen-max": (1.60, 6.40),
    "qwen3-max": (1.20, 6.00),
    "qwen3-coder-plus": (1.00, 5.00),
    "qwen3-coder-flash": (0.30, 1.50),
    # Kimi (Moonshot)
    "moonshot-v1-8k": (0.20, 2.00),
    "moonshot-v1-32k": (1.00, 3.00),
    "moonshot-v1-128k": (2.00, 5.00),
    "kimi-k2": (0.60, 2.50),
    "kimi-k2.5": (0.60, 3.00),
    "kimi-k2-thinking": (0.60, 2.50),
    # Zhipu / Z.ai
    "glm-4-flash": (0.0, 0.0),
    "glm-4.5-flash": (0.0, 0.0),
    "glm-4.5-air": (0.20, 1.10),
    "glm-4.5": (0.60, 2.20),
    "glm-4.6": (0.60, 2.20),
}

# What may follow a known id and still be the same model: dated snapshots
# (gpt-4o-2024-08-06, qwen-plus-2025-07-28), "-0905-preview", "-latest".
_SNAPSHOT_SUFFIX = re.compile(r"^(?:-(?:\d{2,8}|latest|preview))+$")


@dataclass(frozen=True)
class Price:
    input: float  # USD per million prompt tokens
    output: float  # USD per million completion tokens
    source: str  # where the figure comes from, for `doctor`


def table_price(model: str) -> tuple[str, tuple[float, float]] | None:
    """The table's entry for `model` (exact id, provider prefix dropped, or a dated snapshot)."""
    name = model.strip().lower()
    candidates = [name]
    if "/" in name:
        candidates.append(name.rsplit("/", 1)[1])  # "openai/gpt-4o" as routers spell it
    for candidate in candidates:
        if candidate in PRICE_TABLE:
            return candidate, PRICE_TABLE[candidate]
        for known in sorted(PRICE_TABLE, key=len, reverse=True):
            if candidate.startswith(known) and _SNAPSHOT_SUFFIX.match(candidate[len(known) :]):
                return known, PRICE_TABLE[known]
    return None


def price_for(settings: Settings) -> Price | None:
    """The price that applies to `settings`, or None when nothing is known."""
    if settings.price_input is not None or settings.price_output is not None:
        return Price(
            settings.price_input or 0.0,
            settings.price_output or 0.0,
            "LLM_PRICE_INPUT / LLM_PRICE_OUTPUT",
        )
    if settings.provider in FREE_PROVIDERS or is_local_url(settings.base_url):
        return Price(0.0, 0.0, f"{settings.provider} models are free")
    found = table_price(settings.model)
    if found is None:
        return None
    known, (price_in, price_out) = found
    return Price(price_in, price_out, f"built-in table: {known}")


def cost(usage, settings: Settings) -> float | None:
    """Price of `usage` (a TokenUsage) in USD, or None when no price is known."""
    if usage is None:
        return None
    price = price_for(settings)
    if price is None:
        return None
    return (usage.prompt_tokens * price.input + usage.completion_tokens * price.output) / 1_000_000
