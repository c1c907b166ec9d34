"""Building the prompt within a token budget: gather, select, structure, compress (GSSC).

Gather: system rules, AGENTS.md, the todo board, the last tool evidence,
the session history and this turn's messages.
Select: the system rules, AGENTS.md and the current task are never cut; older
history goes first (oldest first), but the session's first user task is kept
while it fits. Messages move in groups, so a tool call never loses its result.
Structure: one system message (rules, AGENTS.md, board, evidence), then the
kept history in order, then the current task and this turn's steps.
Compress: when everything does not fit, old tool outputs are shortened to
their head and tail before anything is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hello_tui.agent.tokens import TokenCounter, default_counter

REPLY_RESERVE = 0.15
EVIDENCE_ITEMS = 3
EVIDENCE_CHARS = 600
# Tool outputs older than this many groups may be shortened to fit the budget.
RECENT_GROUPS_UNCOMPRESSED = 3
COMPRESSED_OUTPUT_CHARS = 800
# ReAct tool results travel as user messages starting with this.
OBSERVATION_PREFIX = "Observation"


@dataclass
class ContextParts:
    system: str
    agents_md: str | None = None
    todo_board: str | None = None
    evidence: list[str] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    # This turn: the user's task first, then the steps taken so far.
    turn: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class BuiltContext:
    messages: list[dict[str, Any]]
    tokens: int
    budget: int
    dropped_messages: int
    compressed_messages: int


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


def group_messages(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Split into groups that must stay together: an assistant turn plus its tool results."""
    groups: list[list[dict[str, Any]]] = []
    for msg in messages:
        content = msg.get("content")
        is_result = msg.get("role") == "tool" or (
            msg.get("role") == "user"
            and isinstance(content, str)
            and content.startswith(OBSERVATION_PREFIX)
        )
        if is_result and groups and groups[-1][0].get("role") == "assistant":
            groups[-1].append(msg)
        else:
            groups.append([msg])
    return groups


def _system_text(parts: ContextParts, with_board: bool, with_evidence: bool) -> str:
    sections = [parts.system.strip()]
    if parts.agents_md and parts.agents_md.strip():
        sections.append("# Project instructions (AGENTS.md)\n\n" + parts.agents_md.strip())
    if with_board and parts.todo_board:
        sections.append("# Todo board\n\n" + parts.todo_board.strip())
    if with_evidence and parts.evidence:
        items = [cut_middle(e, EVIDENCE_CHARS) for e in parts.evidence[-EVIDENCE_ITEMS:]]
        sections.append("# Recent tool evidence\n\n" + "\n\n".join(f"- {i}" for i in items))
    return "\n\n".join(sections)


def _compress_group(group: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    changed = 0
    out = []
    for msg in group:
        content = msg.get("content")
        is_output = msg.get("role") == "tool" or (
            msg.get("role") == "user"
            and isinstance(content, str)
            and content.startswith(OBSERVATION_PREFIX)
        )
        if is_output and isinstance(content, str) and len(content) > COMPRESSED_OUTPUT_CHARS:
            msg = {**msg, "content": cut_middle(content, COMPRESSED_OUTPUT_CHARS)}
            changed += 1
        out.append(msg)
    return out, changed


def build_context(
    parts: ContextParts,
    budget: int,
    counter: TokenCounter | None = None,
    reserve: float = REPLY_RESERVE,
) -> BuiltContext:
    counter = counter or default_counter()
    available = int(budget * (1 - reserve))
    if not parts.turn:
        raise ValueError("build_context needs the current task as the first message of the turn")
    task, steps = parts.turn[0], parts.turn[1:]

    # Structure the system message; the board and evidence yield before history does not.
    system_msg = {"role": "system", "content": _system_text(parts, True, True)}
    fixed = counter.count_message(system_msg) + counter.count_message(task)
    if fixed > available:
        for board, evidence in ((True, False), (False, False)):
            system_msg = {"role": "system", "content": _system_text(parts, board, evidence)}
            fixed = counter.count_message(system_msg) + counter.count_message(task)
            if fixed <= available:
                break

    history_groups = group_messages(parts.history)
    first_task_group: list[dict[str, Any]] | None = None
    if history_groups and history_groups[0][0].get("role") == "user":
        first_task_group = history_groups.pop(0)
    step_groups = group_messages(steps)
    # Candidates newest first; tagged so the order can be rebuilt.
    candidates = [("step", i, g) for i, g in enumerate(step_groups)][::-1] + [
        ("hist", i, g) for i, g in enumerate(history_groups)
    ][::-1]

    room = available - fixed
    total_needed = sum(counter.count_messages(g) for _, _, g in candidates)
    if first_task_group:
        total_needed += counter.count_messages(first_task_group)
    compressed = 0
    if total_needed > room:
        squeezed = []
        for rank, (where, i, g) in enumerate(candidates):
            if rank >= RECENT_GROUPS_UNCOMPRESSED:
                g, n = _compress_group(g)
                compressed += n
            squeezed.append((where, i, g))
        candidates = squeezed

    kept_steps: dict[int, list[dict[str, Any]]] = {}
    kept_hist: dict[int, list[dict[str, Any]]] = {}
    dropped = 0
    keep_first = False
    if first_task_group:
        cost = counter.count_messages(first_task_group)
        if cost <= room:
            room -= cost
            keep_first = True
        else:
            dropped += len(first_task_group)
    exhausted = False
    for where, i, g in candidates:
        cost = counter.count_messages(g)
        if not exhausted and cost <= room:
            room -= cost
            (kept_steps if where == "step" else kept_hist)[i] = g
        else:
            # Oldest first: once something does not fit, everything older goes too.
            exhausted = True
            dropped += len(g)

    messages: list[dict[str, Any]] = [system_msg]
    if keep_first and first_task_group:
        messages.extend(first_task_group)
    for i in sorted(kept_hist):
        messages.extend(kept_hist[i])
    messages.append(task)
    for i in sorted(kept_steps):
        messages.extend(kept_steps[i])
    return BuiltContext(
        messages=messages,
        tokens=available - room,
        budget=budget,
        dropped_messages=dropped,
        compressed_messages=compressed,
    )
