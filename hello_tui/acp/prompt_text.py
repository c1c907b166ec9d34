"""A `session/prompt`'s content blocks as the one text the engine's turn takes.

Text blocks are the request. An embedded resource (what a client attaches
when the user @-mentions a file, `embeddedContext`) follows it as a
`<context>` block naming its URI; a resource link is named so the model can
read it with its tools. Images and audio are not advertised; if a client
sends them anyway the model is told one was left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def prompt_text(blocks: Iterable[Any]) -> str:
    said: list[str] = []
    context: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            said.append(block.text)
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if isinstance(text, str):
                context.append(f'<context uri="{resource.uri}">\n{text}\n</context>')
            else:
                context.append(f"(attached: {resource.uri}, not text: left out)")
        elif kind == "resource_link":
            context.append(f"(the user points at {block.uri})")
        elif kind in ("image", "audio"):
            context.append(f"(an {kind} was attached; this agent reads text only: left out)")
    return "\n\n".join(part for part in ["".join(said).strip(), *context] if part)
