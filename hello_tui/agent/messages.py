"""Small message builders the loop uses: argument decoding, flattening, the board, the catalogue."""

from __future__ import annotations

import json
from typing import Any

from hello_tui.agent.react import parse_action_input
from hello_tui.tools.registry import ToolRegistry

CANCELLED_RESULT = "cancelled by the user"


def decode_tool_arguments(tool: str, raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """Native tool-call arguments → (object, None) or (None, what was wrong, for the model)."""
    text = (raw or "").strip()
    if not text:
        return {}, None
    try:
        value = json.loads(text)
    except ValueError as exc:
        value, problem = parse_action_input(text)
        if problem is not None or not isinstance(value, dict):
            return None, (
                f"Invalid JSON in the arguments for tool '{tool}': {exc}. "
                f"Received: {text[:300]}. Send the arguments as one JSON object."
            )
    if not isinstance(value, dict):
        return None, (
            f"The arguments for tool '{tool}' must be a JSON object, "
            f"not {type(value).__name__}: {text[:300]}"
        )
    return value, None


def flatten_tool_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Native tool-call messages as plain text, for requests sent without `tools`."""
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for msg in messages:
        role = msg.get("role")
        if role == "assistant" and msg.get("tool_calls"):
            lines = [msg.get("content") or ""]
            for call in msg["tool_calls"]:
                fn = call.get("function", {})
                names[call.get("id", "")] = fn.get("name", "?")
                lines.append(f"Action: {fn.get('name', '?')}[{fn.get('arguments', '')}]")
            out.append({"role": "assistant", "content": "\n".join(l for l in lines if l)})
        elif role == "tool":
            name = names.get(msg.get("tool_call_id", ""), "tool")
            out.append(
                {"role": "user", "content": f"Observation ({name}): {msg.get('content', '')}"}
            )
        else:
            out.append(msg)
    return out


def render_todo_board(items: list[dict[str, Any]]) -> str | None:
    if not items:
        return None
    order = {"in_progress": 0, "pending": 1, "completed": 2}
    lines = []
    for item in sorted(items, key=lambda i: order.get(str(i.get("status")), 3)):
        title = item.get("title") or item.get("desc") or "(untitled)"
        ident = item.get("id")
        prefix = f"#{ident} " if ident is not None else ""
        lines.append(f"- [{item.get('status', 'pending')}] {prefix}{title}")
    return "\n".join(lines)


def render_tool_catalogue(registry: ToolRegistry) -> str:
    """Every registered tool with its arguments, generated from the same schemas as native calls."""
    lines = ["# Available tools", ""]
    for schema in registry.schemas():
        fn = schema.get("function", {})
        params = fn.get("parameters", {})
        required = set(params.get("required", []))
        args = []
        for name, spec in params.get("properties", {}).items():
            kind = (
                spec.get("type")
                or "/".join(str(a.get("type")) for a in spec.get("anyOf", []) if a.get("type"))
                or "any"
            )
            args.append(f"{name}: {kind}" + ("" if name in required else " (optional)"))
        desc = (fn.get("description") or "").strip().splitlines()
        lines.append(f"- {fn.get('name')}[{{{', '.join(args)}}}]: {desc[0] if desc else ''}")
    lines.append("- Finish[answer]: end the turn with your final answer to the user.")
    return "\n".join(lines)


def converge_instruction(reason: str, steps: int) -> str:
    why = (
        f"You have used all {steps} steps of this turn."
        if reason == "max_steps"
        else "You kept repeating the same tool call."
    )
    return (
        f"{why} Do not call any more tools. Write your final answer to the user now: "
        "state what you found and the evidence for it (files, lines, command output), "
        "then give 1–3 concrete next steps."
    )


def fallback_answer(steps: int, reason: str, evidence: list[str]) -> str:
    """The answer of a loop that ended without one: why it stopped, what it found, what next."""
    why = (
        f"I stopped after {steps} steps without a final answer"
        if reason == "max_steps"
        else "I stopped because the same tool call kept repeating"
    )
    found = "\n".join(f"- {e}" for e in evidence[-3:]) or "- (none gathered)"
    return (
        f"{why}.\n\nEvidence so far:\n{found}\n\nNext steps:\n"
        "1. Narrow the request to one file or symbol and ask again.\n"
        "2. Raise the step limit with --max-steps if the task needs more exploration."
    )
