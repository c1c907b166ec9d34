"""Keeping MCP tool schemas within their share of the context.

Every schema offered is sent with every model request, so a server that
brings hundreds of tools would crowd out the conversation (and many endpoints
refuse more than 128 functions). When the MCP tools together exceed the
budget, their descriptions (the tool's and its parameters') are cut first;
if that is not enough, tools are left out, taken from the end of the largest
server first, and the user is told which.

Their share of the context budget is `SCHEMA_SHARE` (at most
`DEFAULT_TOKEN_BUDGET`): the rest stays for the conversation and the tool
results, so a small window gets fewer tools rather than cut results.

Sizes are estimated at four characters of JSON per token: the trimming needs a
stable bound, not an exact count (the context budget counts what is sent).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TOKEN_BUDGET = 16_000
SCHEMA_SHARE = 0.25
DEFAULT_MAX_TOOLS = 96
DESCRIPTION_LIMIT = 240
CHARS_PER_TOKEN = 4


@dataclass
class Offer:
    """One tool as it would be offered: its server, its function schema."""

    server: str
    name: str  # the function name the model calls
    schema: dict[str, Any]
    tool: str = ""  # the server's own name for it


@dataclass
class Trimmed:
    offers: list[Offer]
    cut_descriptions: bool = False
    dropped: dict[str, list[str]] = field(default_factory=dict)  # server -> function names
    token_budget: int = DEFAULT_TOKEN_BUDGET  # what the schemas were trimmed to

    def notices(self) -> list[str]:
        lines = []
        if self.cut_descriptions:
            lines.append(
                "MCP tool descriptions were shortened to fit the context budget for tool schemas."
            )
        for server, names in self.dropped.items():
            shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
            lines.append(
                f"MCP server '{server}' brings more tools than fit the MCP share of the context "
                f"budget ({self.token_budget:,} tokens of schemas); {len(names)} left out: {shown}"
            )
        return lines


def schema_budget(context_budget: int) -> int:
    """The tokens MCP schemas may take of a request's context budget."""
    return min(DEFAULT_TOKEN_BUDGET, int(context_budget * SCHEMA_SHARE))


def estimate_tokens(schema: dict[str, Any]) -> int:
    return len(json.dumps(schema, ensure_ascii=False)) // CHARS_PER_TOKEN + 1


def _cut(text: Any, limit: int) -> Any:
    if isinstance(text, str) and len(text) > limit:
        return text[: limit - 1].rstrip() + "…"
    return text


def _cut_descriptions(node: Any, limit: int) -> Any:
    if isinstance(node, dict):
        return {
            k: _cut(v, limit) if k == "description" else _cut_descriptions(v, limit)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_cut_descriptions(v, limit) for v in node]
    return node


def shorten(schema: dict[str, Any], limit: int = DESCRIPTION_LIMIT) -> dict[str, Any]:
    """The schema with every description (the function's, each parameter's) cut to `limit`."""
    return _cut_descriptions(copy.deepcopy(schema), limit)


def trim(
    offers: list[Offer],
    token_budget: int = DEFAULT_TOKEN_BUDGET,
    max_tools: int = DEFAULT_MAX_TOOLS,
) -> Trimmed:
    def total(items: list[Offer]) -> int:
        return sum(estimate_tokens(o.schema) for o in items)

    if total(offers) <= token_budget and len(offers) <= max_tools:
        return Trimmed(list(offers), token_budget=token_budget)
    result = Trimmed(
        [Offer(o.server, o.name, shorten(o.schema), o.tool) for o in offers],
        token_budget=token_budget,
    )
    result.cut_descriptions = True
    size = total(result.offers)
    while result.offers and (size > token_budget or len(result.offers) > max_tools):
        counts: dict[str, int] = {}
        for offer in result.offers:
            counts[offer.server] = counts.get(offer.server, 0) + 1
        largest = max(counts, key=lambda s: counts[s])
        index = max(i for i, o in enumerate(result.offers) if o.server == largest)
        gone = result.offers.pop(index)
        size -= estimate_tokens(gone.schema)
        result.dropped.setdefault(gone.server, []).insert(0, gone.name)
    return result
