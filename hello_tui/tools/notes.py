"""The `note` tool: the model's structured notebook, backed by NoteStore.

Owns the tool's arguments, which arguments each action needs, and the plain
text the model reads back. Storage rules live in `hello_tui.store.notes`; the
store locks and writes files, so each action runs on a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Literal

from pydantic import Field

from hello_tui.core.events import Event, NoteWritten
from hello_tui.core.tools import Tool, ToolArgs, ToolContext, ToolResult
from hello_tui.store.notes import NOTE_TYPES, Note, NoteError, NoteStore

NoteAction = Literal["create", "read", "update", "delete", "list", "search", "summary"]
PREVIEW_CHARS = 160


class NoteArgs(ToolArgs):
    action: NoteAction
    note_id: str | None = None
    title: str | None = None
    content: str | None = Field(None, description="Markdown.")
    note_type: str | None = Field(
        None,
        description="task_state, conclusion, blocker, action, reference, general",
    )
    tags: list[str] | None = None
    query: str | None = None
    limit: int | None = Field(None, ge=1, le=100)


def _one_line(text: str, width: int = PREVIEW_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _listing(notes: list[Note]) -> str:
    lines = []
    for n in notes:
        tags = f" tags: {', '.join(n.tags)}" if n.tags else ""
        lines.append(f"- [{n.id}] ({n.note_type}) {_one_line(n.title, 80)}{tags}")
        if n.content.strip():
            lines.append(f"  {_one_line(n.content)}")
    return "\n".join(lines)


def _full(note: Note) -> str:
    tags = ", ".join(note.tags) or "(none)"
    return (
        f"[{note.id}] {note.title}\ntype: {note.note_type}  tags: {tags}\n"
        f"created: {note.created_at}  updated: {note.updated_at}\n\n{note.content}"
    )


def _summary_data(note: Note) -> dict:
    data = note.to_dict()
    data.pop("content")
    return data


class NoteTool(Tool):
    name = "note"
    description = (
        "Keep notes that outlive the session: task state, conclusions, blockers, actions, "
        "references."
    )
    Args = NoteArgs
    # Notes live in hello-tui's own state folder, not in the user's code: no review needed.
    read_only = False

    async def run(self, args: NoteArgs, ctx: ToolContext) -> ToolResult:
        # Events are kept and sent from the event loop: the engine's queue is not thread-safe.
        events: list[Event] = []
        try:
            store = NoteStore(ctx.settings.state.notes)
            result = await asyncio.to_thread(self._dispatch, store, args, events.append)
        except NoteError as exc:
            return ToolResult.error(str(exc))
        except OSError as exc:
            return ToolResult.error(f"Could not access the notes folder: {exc}")
        for event in events:
            ctx.emit(event)
        return result

    def _dispatch(
        self, store: NoteStore, args: NoteArgs, emit: Callable[[Event], None]
    ) -> ToolResult:
        action = args.action
        if action in ("read", "update", "delete") and not args.note_id:
            return ToolResult.error(
                f"note action '{action}' needs note_id. Use action 'list' to see ids."
            )
        if action == "create":
            missing = [f for f in ("title", "content") if getattr(args, f) is None]
            if missing:
                return ToolResult.error(f"note action 'create' needs {' and '.join(missing)}.")
            note = store.create(
                args.title or "", args.content or "", args.note_type or "general", args.tags
            )
            emit(NoteWritten(note_id=note.id, title=note.title, note_type=note.note_type))
            return ToolResult.ok(
                f"Created note {note.id} ({note.note_type}): {note.title}", note.to_dict()
            )
        if action == "read":
            note = store.read(args.note_id or "")
            return ToolResult.ok(_full(note), note.to_dict())
        if action == "update":
            fields = ("title", "content", "note_type", "tags")
            if all(getattr(args, f) is None for f in fields):
                return ToolResult.error(
                    "note action 'update' needs at least one of title, content, note_type, tags."
                )
            note = store.update(
                args.note_id or "",
                title=args.title,
                content=args.content,
                note_type=args.note_type,
                tags=args.tags,
            )
            emit(NoteWritten(note_id=note.id, title=note.title, note_type=note.note_type))
            return ToolResult.ok(f"Updated note {note.id}: {note.title}", note.to_dict())
        if action == "delete":
            store.delete(args.note_id or "")
            return ToolResult.ok(f"Deleted note {args.note_id}.", {"id": args.note_id})
        if action == "list":
            notes = store.list(note_type=args.note_type, limit=args.limit or 20)
            if not notes:
                which = f" of type {args.note_type}" if args.note_type else ""
                return ToolResult.ok(f"No notes{which} yet.", [])
            return ToolResult.ok(
                f"{len(notes)} note(s), newest first:\n{_listing(notes)}",
                [_summary_data(n) for n in notes],
            )
        if action == "search":
            if not (args.query or "").strip():
                return ToolResult.error("note action 'search' needs a non-empty query.")
            notes = store.search(args.query or "", limit=args.limit or 10)
            if not notes:
                return ToolResult.ok(f"No note matches {args.query!r}.", [])
            return ToolResult.ok(
                f"{len(notes)} note(s) match {args.query!r}:\n{_listing(notes)}",
                [_summary_data(n) for n in notes],
            )
        return ToolResult.ok(store.summary(), {"types": list(NOTE_TYPES)})
