"""Small helpers shared by the tool tests: a context on a repo, and file writing."""

from __future__ import annotations

from pathlib import Path

from hello_tui.config import load_settings
from hello_tui.core.tools import ToolContext


def make_ctx(repo: Path) -> ToolContext:
    """A tool context on `repo` with an empty environment (no stray keys or settings)."""
    return ToolContext(settings=load_settings(repo, environ={}))


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path
