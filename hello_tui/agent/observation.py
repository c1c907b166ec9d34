"""What the model sees of a tool's output: cut or summarised; the full text stays for the UI.

Outputs up to SUMMARY_THRESHOLD characters pass unchanged. Longer outputs are
summarised by a model call (input capped at SUMMARY_INPUT_CHARS, reply at most
SUMMARY_MAX_TOKENS) using prompts/summarize_observation.md; if that call fails
the output is cut to head and tail with a count of what was omitted. Errors
always reach the model verbatim (only cut when huge), and tools whose exact
text the model needs for a patch (file reads) are only ever cut, never summarised.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from hello_tui.agent.context import cut_middle

log = logging.getLogger(__name__)

SUMMARY_THRESHOLD = 1800
SUMMARY_INPUT_CHARS = 8000
SUMMARY_MAX_TOKENS = 400
CUT_WITHOUT_SUMMARY = 4000
EXACT_OUTPUT_LIMIT = 12000
# Tools whose output the model must see exactly (patch context), cut but never summarised.
EXACT_OUTPUT_TOOLS = frozenset(
    {"read", "context_fetch", "apply_patch", "edit", "write", "todo", "plan"}
)

Summarise = Callable[[str, str], Awaitable[str]]  # (tool name, capped output) -> summary


async def observation_for_model(
    tool: str,
    status: str,
    text: str,
    summarise: Summarise | None,
    *,
    exact: bool = False,
) -> str:
    """The text the model reads for one tool result."""
    if status == "error" or exact or tool in EXACT_OUTPUT_TOOLS:
        return cut_middle(text, EXACT_OUTPUT_LIMIT)
    if len(text) <= SUMMARY_THRESHOLD:
        return text
    if summarise is not None:
        try:
            summary = (await summarise(tool, cut_middle(text, SUMMARY_INPUT_CHARS))).strip()
        except Exception:  # the summary is optional; the cut text is the fallback
            log.warning("summarising %s output failed", tool, exc_info=True)
            summary = ""
        if summary:
            return (
                f"[summary of {len(text)} characters of output from {tool}; "
                f"ask for narrower output if you need exact lines]\n{summary}"
            )
    return cut_middle(text, CUT_WITHOUT_SUMMARY)
