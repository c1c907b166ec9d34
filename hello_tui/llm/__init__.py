"""The model client package: one OpenAI-compatible client and what it hands out.

- `client`: `LLMClient` (streaming, retries, bounds, preflight);
- `types`: stream items (`TextDelta`, `ReasoningDelta`, `ToolCallDelta`,
  `StreamRestarted`), `Completion`, `TokenUsage`, `ToolCall`, `PreflightResult`;
- `errors`: `LLMError` and how failures are classified;
- `sse`, `assembly`, `wire`: reading the body (events, chunks, wrong answers);
- `text_tool_calls`: tool calls local models write as text;
- `prices`: `cost` and the built-in price table;
- `model_window`: the model's context window (endpoint, table, default) and the budget;
- `ollama`: Ollama's context length, from its native API.

Importing this package does not import `openai` (that happens when a client
is made), so the CLI starts fast.
"""

from hello_tui.llm.client import LLMClient, missing_key_hint
from hello_tui.llm.errors import RETRYABLE_KINDS, LLMError, classify_error
from hello_tui.llm.model_window import Budget, ModelWindow, budget_for, model_window
from hello_tui.llm.ollama import OllamaContext
from hello_tui.llm.prices import Price, cost, price_for
from hello_tui.llm.types import (
    Completion,
    PreflightResult,
    ReasoningDelta,
    StreamEvent,
    StreamRestarted,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallDelta,
)

__all__ = [
    "RETRYABLE_KINDS",
    "Budget",
    "Completion",
    "LLMClient",
    "LLMError",
    "ModelWindow",
    "OllamaContext",
    "PreflightResult",
    "Price",
    "ReasoningDelta",
    "StreamEvent",
    "StreamRestarted",
    "TextDelta",
    "TokenUsage",
    "ToolCall",
    "ToolCallDelta",
    "budget_for",
    "classify_error",
    "cost",
    "missing_key_hint",
    "model_window",
    "price_for",
]
