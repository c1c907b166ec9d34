"""Function names for MCP tools: `mcp__<server>__<tool>`, within the function-name rules.

OpenAI-compatible endpoints accept `^[a-zA-Z0-9_-]{1,64}$`. Other characters
become `_`; a name that would be longer than 64 characters, or that two tools
would share after sanitising, is cut and given a short hash of the original
so it stays unique and stable from one session to the next.
"""

from __future__ import annotations

import hashlib
import re

MAX_NAME = 64
PREFIX = "mcp__"
_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def sanitise(part: str) -> str:
    return _INVALID.sub("_", part) or "_"


def _hashed(name: str, original: str) -> str:
    digest = hashlib.sha256(original.encode("utf-8")).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def function_name(server: str, tool: str, taken: set[str]) -> str:
    """The name the model calls; `taken` holds names already given (case-insensitively)."""
    original = f"{PREFIX}{server}__{tool}"
    name = f"{PREFIX}{sanitise(server)}__{sanitise(tool)}"
    if len(name) > MAX_NAME or name.lower() in taken:
        name = _hashed(name, original)
    taken.add(name.lower())
    return name
