"""The model history's rules: every request well-formed, the tasks pinned, the file bounded.

A saved history is replayed to the model on every later request, so it must
be something a strict OpenAI-compatible server accepts: each assistant tool
call is followed by exactly one result, no result stands without its call,
and a call's arguments are a JSON object (a malformed one is stored as `{}`;
the error the model was told stays in the call's result). `repair_history`
enforces that on load, whatever an older version or a crash left behind.

`trim_history` bounds what is kept on disk without losing the thread: the
session's first task, the compaction summary and the newest turn's task are
pinned; the messages in between go oldest first, in whole groups (a call
with its results).
"""

from __future__ import annotations

import json
from typing import Any

HISTORY_LIMIT = 50
# A final answer is kept whole in the display record; the history's copy is bounded.
HISTORY_ANSWER_CHARS = 16000
REPAIRED_RESULT = "cancelled: this call was interrupted before it returned a result"
# The compaction summary is a user message that starts with this.
SUMMARY_PREFIX = "[Summary of the earlier conversation]"
# User messages the loop writes itself (not a task the user gave): what they start with.
LOOP_NOTE_PREFIXES = (
    "Observation",
    "[patch from your answer]",
    "Your last message was empty",
    SUMMARY_PREFIX,
)

Message = dict[str, Any]


def is_task(message: Message) -> bool:
    """A user message that is a task the user gave (not a note the loop added)."""
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, str)
        and not content.startswith(LOOP_NOTE_PREFIXES)
    )


def is_summary(message: Message) -> bool:
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, str)
        and content.startswith(SUMMARY_PREFIX)
    )


def cut_middle(text: str, limit: int) -> str:
    """Keep the head and the tail of `text`, saying how much was left out."""
    if len(text) <= limit:
        return text
    head = int(limit * 0.6)
    tail = max(limit - head, 0)
    omitted = len(text) - head - tail
    return (
        text[:head]
        + f"\n[… {omitted} characters omitted …]\n"
        + (text[len(text) - tail :] if tail else "")
    )


def _object_arguments(raw: Any) -> str:
    """The arguments as stored: the JSON object text, or `{}` when they are not one."""
    if isinstance(raw, dict):
        return json.dumps(raw, ensure_ascii=False)
    if not isinstance(raw, str) or not raw.strip():
        return "{}"
    try:
        value = json.loads(raw)
    except ValueError:
        return "{}"
    return raw if isinstance(value, dict) else "{}"


def _repaired_call(call: Any) -> dict[str, Any] | None:
    if not isinstance(call, dict) or not call.get("id"):
        return None
    function = call.get("function")
    fn: dict[str, Any] = function if isinstance(function, dict) else {}
    return {
        **call,
        "type": call.get("type") or "function",
        "function": {
            **fn,
            "name": str(fn.get("name") or "unknown"),
            "arguments": _object_arguments(fn.get("arguments")),
        },
    }


def repair_history(history: list[Message]) -> tuple[list[Message], int]:
    """A well-formed copy of `history`, and how many messages were added, dropped or fixed."""
    out: list[Message] = []
    changes = 0
    open_ids: list[str] = []

    def close_open() -> None:
        nonlocal changes
        for call_id in open_ids:
            out.append({"role": "tool", "tool_call_id": call_id, "content": REPAIRED_RESULT})
            changes += 1
        open_ids.clear()

    for msg in history:
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id in open_ids:
                open_ids.remove(call_id)
                out.append(msg)
            else:
                changes += 1  # an orphan result: its call is gone or it was answered already
            continue
        close_open()
        if role == "assistant" and msg.get("tool_calls"):
            calls = [c for c in map(_repaired_call, msg["tool_calls"]) if c is not None]
            if calls != msg["tool_calls"]:
                changes += 1
            if calls:
                msg = {**msg, "tool_calls": calls}
                open_ids.extend(c["id"] for c in calls)
            else:
                msg = {k: v for k, v in msg.items() if k != "tool_calls"}
                if not msg.get("content"):
                    continue
        out.append(msg)
    close_open()
    return out, changes


def _groups(history: list[Message]) -> list[list[Message]]:
    groups: list[list[Message]] = []
    for msg in history:
        if msg.get("role") == "tool" and groups:
            groups[-1].append(msg)
        else:
            groups.append([msg])
    return groups


def trim_history(history: list[Message], limit: int = HISTORY_LIMIT) -> list[Message]:
    """At most about `limit` messages: the pinned ones kept, the oldest others gone first.

    Pinned: the first task, the latest compaction summary and the newest task.
    Groups are never split, so a call keeps its results.
    """
    if len(history) <= limit:
        return history
    groups = _groups(history)
    pinned: set[int] = set()
    first_task = next((i for i, g in enumerate(groups) if is_task(g[0])), None)
    last_task = next((i for i in range(len(groups) - 1, -1, -1) if is_task(groups[i][0])), None)
    summary = next((i for i in range(len(groups) - 1, -1, -1) if is_summary(groups[i][0])), None)
    pinned.update(i for i in (first_task, last_task, summary) if i is not None)
    room = limit - sum(len(groups[i]) for i in pinned)
    kept = set(pinned)
    for i in range(len(groups) - 1, -1, -1):
        if i in pinned:
            continue
        if len(groups[i]) > room:
            break
        room -= len(groups[i])
        kept.add(i)
    return [m for i, g in enumerate(groups) if i in kept for m in g]


def bounded_answer(text: str) -> str:
    """The history's copy of a final answer (the display record keeps it whole)."""
    return cut_middle(text, HISTORY_ANSWER_CHARS)
