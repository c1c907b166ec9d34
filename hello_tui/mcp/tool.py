"""An MCP server's tool as one of ours: its schema offered as is, every call approved.

The arguments are passed through untouched (the server validates them against
the schema it published). Before each call the user is asked through the
Approver unless they allowed this tool for the session or "always" for this
server definition. Each call asks the server for progress (the SDK sends a
`progressToken`); what the server reports comes back as `ToolProgress` events
while the call runs. The result goes back in the usual envelope: the text
content for the model, structured content kept in `data` (and shown to the
model when the server sent no text), `isError` as an error result. The text
is made safe to show (`core.terminal_text`): a server's escape sequences reach
the model and every screen as text.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, ClassVar

from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict

from hello_tui.core.approval import ToolCallRequest
from hello_tui.core.events import Notice, ToolProgress
from hello_tui.core.terminal_text import safe_text, safe_value
from hello_tui.core.tools import Tool, ToolContext, ToolResult
from hello_tui.mcp.connection import CallTimedOut, ServerGone

if TYPE_CHECKING:
    from hello_tui.mcp.manager import McpManager


class McpArguments(BaseModel):
    """Whatever object the model sent: the server's own schema is the judge."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool):
    Args: ClassVar[type[BaseModel]] = McpArguments  # type: ignore[assignment]
    read_only: ClassVar[bool] = False  # an external program: asked for, one at a time

    def __init__(
        self, manager: McpManager, server: str, tool: str, function: str, schema: dict[str, Any]
    ) -> None:
        self.manager = manager
        self.server = server
        self.tool = tool
        self.name = function  # type: ignore[misc]
        self._schema = schema
        self.description = schema["function"].get("description", "")  # type: ignore[misc]

    def schema(self) -> dict[str, Any]:
        return self._schema

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        arguments = dict(args.model_extra or {}) if isinstance(args, BaseModel) else dict(args)
        connection = self.manager.connection(self.server)
        if connection is None:
            return ToolResult.error(f"MCP server '{self.server}' is no longer configured.")
        if not await self.manager.tool_allowed(self.server, self.tool):
            # Shown to the user: the server's description and the model's arguments with
            # their escape sequences as text (the call itself gets the arguments as sent).
            verdict = await ctx.approver.approve_tool_call(
                ToolCallRequest(
                    safe_text(self.server),
                    safe_text(self.tool),
                    safe_value(arguments),
                    safe_text(self.description),
                )
            )
            if verdict == "deny":
                return ToolResult.refused_by_user(
                    f"The user declined the call to {self.tool} on MCP server '{self.server}'. "
                    "Do not retry it; continue without it or ask the user.",
                    data={"server": self.server, "tool": self.tool},
                )
            await self.manager.allow_tool(self.server, self.tool, verdict)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            ctx.emit(
                ToolProgress(
                    call_id=ctx.call_id,
                    tool=self.name,
                    progress=done,
                    total=total,
                    message=safe_text(message or ""),
                    text=safe_text(progress_text(done, total, message)),
                )
            )

        try:
            result = await connection.call(self.tool, arguments, progress)
            # The SDK runs each progress report in a task of its own, started as it came
            # in (before the answer): one turn of the loop lets them report before the result.
            await asyncio.sleep(0)
        # The server's name and its errors' words are shown as text, like its results.
        except CallTimedOut as exc:
            return _error(f"MCP tool {self.tool} on '{self.server}': {exc}.")
        except ServerGone as exc:
            gone = self.manager.gone_notice(self.server, str(exc))
            ctx.emit(Notice(text=safe_text(gone), level="warning"))
            return _error(
                f"MCP server '{self.server}' stopped ({exc}); its tools are no longer available."
            )
        except MCPError as exc:  # the server answered with a protocol error
            return _error(f"MCP tool {self.tool} on '{self.server}' failed: {exc.message}")
        return result_envelope(self.server, self.tool, result)


def _error(text: str) -> ToolResult:
    return ToolResult.error(safe_text(text))


def progress_text(done: float, total: float | None, message: str | None) -> str:
    """One line for a progress report: "3 of 10 (30%): message"."""
    amount = f"{done:g}"
    if total:
        amount += f" of {total:g} ({min(done / total, 1.0):.0%})"
    return f"{amount}: {message}" if message else amount


def result_envelope(server: str, tool: str, result: Any) -> ToolResult:
    """The SDK's CallToolResult as our ToolResult."""
    texts = [_block_text(block) for block in result.content or []]
    structured = getattr(result, "structured_content", None)
    text = "\n".join(t for t in texts if t)
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, indent=2)
    text = safe_text(text)
    data = {"server": server, "tool": tool, "structured_content": structured}
    if result.is_error:
        return ToolResult.error(text or f"MCP tool {tool} reported an error.", data=data)
    return ToolResult.ok(text or "(the tool returned no content)", data=data)


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        size = len(getattr(block, "data", "") or "") * 3 // 4
        return f"[{kind}: {getattr(block, 'mime_type', '?')}, about {size} bytes, not shown]"
    if kind == "resource":
        resource = block.resource
        if getattr(resource, "text", None) is not None:
            return f"[resource {resource.uri}]\n{resource.text}"
        return f"[resource {resource.uri}: {getattr(resource, 'mime_type', None) or 'binary'}]"
    if kind == "resource_link":
        return f"[resource link: {block.uri}{' — ' + block.name if block.name else ''}]"
    return f"[{kind or 'unknown'} content]"
