"""Engine events and the saved display record as ACP `session/update` payloads.

`EventUpdates.updates(event)` maps one event of a running turn to the updates
the client is sent: answer and thought chunks, tool calls with their kind,
status, locations and output, and the todo board as a plan. `replay(entries,
todos)` does the same for a saved session's record (`session/load`).

MCP servers starting before the turn's first model call are one tool call of
their own ("Starting MCP servers: a, b"), its content a line per server as it
is ready or fails, completed when every one has ended. A long MCP tool's
progress reports are its call's content while it runs.

Notices are not part of the answer: an `info` one (a retry, a protocol
switch) goes out as a thought chunk, a warning or error as its own quoted
paragraph of the agent's message.

Every text sent is made safe first (`core.terminal_text`): editors draw it in
terminals too, and escape sequences from a model, a command or a server must
reach them as text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import ToolCallLocation

from hello_tui.core import events as ev
from hello_tui.core.display import ChatMessage, DisplayEntry, ToolStep
from hello_tui.core.terminal_text import safe_event, safe_value

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]

TOOL_KINDS: dict[str, ToolKind] = {
    "read": "read",
    "ls": "read",
    "glob": "search",
    "grep": "search",
    "context_fetch": "fetch",
    "apply_patch": "edit",
    "edit": "edit",
    "write": "edit",
    "terminal": "execute",
    "plan": "think",
    "todo": "think",
    "note": "other",
    "memory": "other",
}
# A tool's output is sent whole up to this size; the live output of a command keeps its tail.
OUTPUT_SENT = 20_000
TITLE_ARGUMENT = 80


def tool_kind(tool: str) -> ToolKind:
    return TOOL_KINDS.get(tool, "other")  # MCP tools (mcp__server__tool) and any others


def tool_title(tool: str, arguments: dict[str, Any]) -> str:
    for key in ("command", "path", "pattern", "query", "url", "title"):
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            value = value.strip().splitlines()[0]
            if len(value) > TITLE_ARGUMENT:
                value = value[: TITLE_ARGUMENT - 1] + "…"
            return f"{tool} {value}"
    return tool


def tool_locations(repo: Path, arguments: dict[str, Any]) -> list[ToolCallLocation]:
    """Files a call works on, as absolute paths (with a line where the call names one)."""
    path = arguments.get("path")
    if not isinstance(path, str) or not path.strip():
        return []
    line = arguments.get("line") or arguments.get("start_line") or arguments.get("offset")
    return [
        ToolCallLocation(
            path=str((repo / path).resolve()),
            line=line if isinstance(line, int) and line > 0 else None,
        )
    ]


def _tail(text: str) -> str:
    if len(text) <= OUTPUT_SENT:
        return text
    return f"[… {len(text) - OUTPUT_SENT} characters before]\n" + text[-OUTPUT_SENT:]


def _output(text: str) -> list[Any]:
    return [tool_content(text_block(_tail(text)))] if text else []


def _status(status: str) -> Literal["completed", "failed"]:
    return "completed" if status in ("success", "partial") else "failed"


_PATCH_VERBS = {"add": "Create", "delete": "Delete", "update": "Edit", "move": "Move"}


def _op(files: list[dict[str, Any]]) -> str:
    """The one operation of every file of a patch ("update" when they differ)."""
    ops = {str(f.get("op")) for f in files}
    return ops.pop() if len(ops) == 1 else "update"


def plan_update(items: Iterable[dict[str, Any]]) -> Any:
    """The todo board as an ACP plan: one entry per item, in order, statuses as they are."""
    entries = []
    for item in items:
        status = item.get("status")
        title = str(item.get("title") or item.get("desc") or "").strip()
        entries.append(
            plan_entry(
                title,
                priority="medium",
                status=status if status in ("pending", "in_progress", "completed") else "pending",
            )
        )
    return update_plan(entries)


def _notice_update(text: str, level: str) -> Any:
    if level == "info":
        return update_agent_thought_text(text.rstrip() + "\n")
    return update_agent_message_text(f"\n\n> {text.strip()}\n\n")


class EventUpdates:
    """The updates for one session's events; remembers live output per tool call."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._output: dict[str, str] = {}
        self._startups = 0  # MCP start-ups seen: each gets a tool call id of its own
        self._startup_lines: list[str] = []

    def updates(self, event: ev.Event) -> list[Any]:
        event = safe_event(event)
        if isinstance(event, ev.AssistantDelta):
            return [update_agent_message_text(event.text)] if event.text else []
        if isinstance(event, ev.ThoughtDelta):
            return [update_agent_thought_text(event.text)] if event.text else []
        if isinstance(event, ev.ToolCallStarted):
            self._output[event.call_id] = ""
            return [
                start_tool_call(
                    event.call_id,
                    tool_title(event.tool, event.arguments),
                    kind=tool_kind(event.tool),
                    status="in_progress",
                    locations=tool_locations(self.repo, event.arguments),
                    raw_input=event.arguments,
                )
            ]
        if isinstance(event, ev.ToolOutputDelta):
            so_far = self._output.get(event.call_id, "") + event.text
            self._output[event.call_id] = so_far[-OUTPUT_SENT * 2 :]
            return [update_tool_call(event.call_id, content=_output(so_far))]
        if isinstance(event, ev.PatchProposed):
            paths = [str(f.get("move_to") or f.get("path")) for f in event.files]
            return [
                update_tool_call(
                    event.call_id,
                    title=f"{_PATCH_VERBS.get(_op(event.files), 'Edit')} {', '.join(paths)}",
                    kind="edit",
                    locations=[ToolCallLocation(path=str(self.repo / p)) for p in paths],
                )
            ]
        if isinstance(event, ev.ToolCallFinished):
            self._output.pop(event.call_id, None)
            return [
                update_tool_call(
                    event.call_id,
                    status=_status(event.status),
                    content=_output(event.text),
                    raw_output={"status": event.status},
                )
            ]
        if isinstance(event, ev.ToolProgress):
            return [update_tool_call(event.call_id, content=_output(event.text))]
        if isinstance(event, ev.McpStartup):
            return [self._startup(event)]
        if isinstance(event, ev.TodoChanged):
            return [plan_update(event.items)]
        if isinstance(event, ev.Notice):
            return [_notice_update(event.text, event.level)]
        if isinstance(event, ev.WriteLockWait) and event.phase == "waiting" and event.text:
            return [update_agent_thought_text(event.text + "\n")]
        return []

    def _startup(self, event: ev.McpStartup) -> Any:
        if event.phase == "starting":
            self._startups += 1
            self._startup_lines = []
            return start_tool_call(
                self._startup_id,
                f"Starting MCP servers: {', '.join(event.servers)}",
                kind="other",
                status="in_progress",
            )
        self._startup_lines.append(event.text)
        done = event.ended >= event.total
        return update_tool_call(
            self._startup_id,
            status=("completed" if done else "in_progress"),
            content=_output("\n".join(self._startup_lines)),
        )

    @property
    def _startup_id(self) -> str:
        return f"mcp-startup-{self._startups}"


def replay(repo: Path, entries: Iterable[DisplayEntry], todos: list[dict[str, Any]]) -> list[Any]:
    """A saved session's record as the updates a client draws it from, in order."""
    updates: list[Any] = []
    for entry in map(safe_event, entries):
        if isinstance(entry, ToolStep):
            updates.append(
                start_tool_call(
                    entry.call_id or f"{entry.turn}-{entry.step}-{entry.tool}",
                    tool_title(entry.tool, entry.arguments),
                    kind=tool_kind(entry.tool),
                    status="failed" if entry.status in ("error", "cancelled") else "completed",
                    locations=tool_locations(repo, entry.arguments),
                    content=_output(entry.output),
                    raw_input=_plain(entry.arguments),
                )
            )
        elif isinstance(entry, ChatMessage):
            updates.append(_message_update(entry))
    if todos:
        updates.append(plan_update(safe_value(todos)))
    return updates


def _message_update(entry: ChatMessage) -> Any:
    if entry.role == "user":
        return update_user_message_text(entry.text)
    if entry.role == "assistant":
        return update_agent_message_text(entry.text)
    # Notices were thoughts when they happened; results and errors were said in the message.
    return _notice_update(entry.text, "info" if entry.role == "notice" else "warning")


def _plain(arguments: dict[str, Any]) -> Any:
    return json.loads(json.dumps(arguments, default=str))
