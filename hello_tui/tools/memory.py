"""The `memory` tool: episodic memory for the model (the store is `hello_tui.store.memory`).

Each action opens SQLite, so it runs on a worker thread (its connection lives there too).
"""

from __future__ import annotations

import asyncio
import builtins
import sqlite3
from typing import Literal

from pydantic import Field

from hello_tui.core.tools import Tool, ToolArgs, ToolContext, ToolResult
from hello_tui.store.memory import Memory, MemoryStore, MemoryStoreError


class MemoryArgs(ToolArgs):
    action: Literal["add", "search", "list", "forget"]
    content: str | None = None
    query: str | None = None
    importance: float | None = Field(None, ge=0.0, le=1.0, description="Default 0.5.")
    memory_id: int | None = None


def _lines(memories: builtins.list[Memory]) -> str:
    return "\n".join(
        f"- [{m.id}] (importance {m.importance:.2f}, {m.created_at}) {' '.join(m.content.split())}"
        for m in memories
    )


class MemoryTool(Tool):
    name = "memory"
    description = (
        "Remember facts about this repository across sessions; search, list or forget them."
    )
    Args = MemoryArgs
    read_only = False

    async def run(self, args: MemoryArgs, ctx: ToolContext) -> ToolResult:
        return await asyncio.to_thread(self._act, args, ctx)

    def _act(self, args: MemoryArgs, ctx: ToolContext) -> ToolResult:
        store = MemoryStore(ctx.settings.state.memory)
        try:
            if args.action == "add":
                if not args.content:
                    return ToolResult.error("memory action 'add' needs content.")
                mem = store.add(args.content, 0.5 if args.importance is None else args.importance)
                return ToolResult.ok(f"Remembered as [{mem.id}].", mem.to_dict())
            if args.action == "search":
                if not (args.query or "").strip():
                    return ToolResult.error("memory action 'search' needs a non-empty query.")
                found = store.search(args.query or "")
                if not found:
                    return ToolResult.ok(f"No memory matches {args.query!r}.", [])
                return ToolResult.ok(
                    f"{len(found)} memory item(s) match {args.query!r}:\n{_lines(found)}",
                    [m.to_dict() for m in found],
                )
            if args.action == "list":
                memories = store.list()
                if not memories:
                    return ToolResult.ok("Memory is empty.", [])
                return ToolResult.ok(
                    f"{len(memories)} memory item(s), newest first:\n{_lines(memories)}",
                    [m.to_dict() for m in memories],
                )
            if args.memory_id is None:
                return ToolResult.error("memory action 'forget' needs memory_id.")
            mem = store.forget(args.memory_id)
            return ToolResult.ok(f"Forgot [{mem.id}].", mem.to_dict())
        except MemoryStoreError as exc:
            return ToolResult.error(str(exc))
        except sqlite3.Error as exc:
            return ToolResult.error(f"The memory database could not be used: {exc}")
        except OSError as exc:
            return ToolResult.error(f"Could not access the memory folder: {exc}")
