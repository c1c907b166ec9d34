"""The `todo` tool: the model's handle on the session's todo board (`hello_tui.store.todos`).

The store locks and writes a file, so each action runs on a worker thread.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import Field

from hello_tui.core.events import TodoChanged
from hello_tui.core.tools import Tool, ToolArgs, ToolContext, ToolResult
from hello_tui.store.todos import TodoError, TodoStatus, TodoStore, render_board


class TodoArgs(ToolArgs):
    action: Literal["add", "update", "delete", "clear", "list"] = Field()
    id: int | str | None = None
    title: str | None = None
    desc: str | None = None
    status: TodoStatus | None = Field(None)


class TodoTool(Tool):
    name = "todo"
    description = "Keep the task's todo list, shown to the user; one item in_progress at a time."
    Args = TodoArgs
    read_only = False

    async def run(self, args: TodoArgs, ctx: ToolContext) -> ToolResult:
        todo_id = "" if args.id is None else str(args.id).strip()
        if args.action in ("update", "delete") and not todo_id:
            return ToolResult.error(f"todo action '{args.action}' needs an id.")
        if args.action == "add" and not args.title:
            return ToolResult.error("todo action 'add' needs a title.")
        if args.action == "update" and (args.title, args.desc, args.status) == (None, None, None):
            return ToolResult.error(
                "todo action 'update' needs at least one of title, desc, status."
            )
        try:
            store = TodoStore(ctx.settings.state.todos, ctx.session_id)
            result = await asyncio.to_thread(_apply, store, args, todo_id)
        except TodoError as exc:
            return ToolResult.error(str(exc))
        except OSError as exc:
            return ToolResult.error(f"Could not access the todo list: {exc}")
        if args.action != "list":
            ctx.emit(TodoChanged(items=result.data))
        return result


def _apply(store: TodoStore, args: TodoArgs, todo_id: str) -> ToolResult:
    """One action on the store (blocking: file lock and writes)."""
    if args.action == "list":
        items = store.load()
        return ToolResult.ok(render_board(items), [i.to_dict() for i in items])
    if args.action == "add":
        item = store.add(args.title or "", args.desc or "", args.status or "pending")
        message = f"Added todo [{item.id}] {item.title} ({item.status})."
    elif args.action == "update":
        item = store.update(todo_id, title=args.title, desc=args.desc, status=args.status)
        message = f"Updated todo [{item.id}] {item.title} ({item.status})."
    elif args.action == "delete":
        item = store.delete(todo_id)
        message = f"Deleted todo [{item.id}] {item.title}."
    else:
        count = store.clear()
        message = f"Cleared the todo list ({count} item(s) removed)."
    items = store.load()
    return ToolResult.ok(f"{message}\n{render_board(items)}", [i.to_dict() for i in items])
