"""Compaction: older history becomes one pinned summary, so a long session keeps its thread.

`/compact` and the automatic compaction (at `CODE_AGENT_COMPACT_AT` of the
budget, default 80%) both come here. What survives whole: the session's first
task, the newest exchange (the last task and what followed it, as far as it
fits in a third of the budget), and everything that lives outside the history
(the rules, the todo board, the recent tool evidence). What lies between
becomes one summary message, pinned by the budget and the history cap.

The summary is made by a model call sized to fit: its input is cut until the
instructions, the transcript, the reply and a headroom fit the budget, so it
can never be "too long to compact". If that call fails (or says nothing), a
mechanical summary is used: the earlier tasks, the first lines of the
answers, and the tools called.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from hello_tui.agent.context import REPLY_RESERVE, group_messages
from hello_tui.agent.tokens import TokenCounter
from hello_tui.core.events import Notice
from hello_tui.store.history import SUMMARY_PREFIX, cut_middle, is_summary, is_task

if TYPE_CHECKING:
    from hello_tui.agent.loop import Agent
    from hello_tui.agent.turn import Turn

log = logging.getLogger(__name__)

SUMMARY_REPLY_TOKENS = 700
HEADROOM = 0.2  # of the budget, left free around the summary call
TAIL_SHARE = 1 / 3  # of the budget, at most, for the newest exchange kept whole
RESULT_CHARS = 300  # of each tool result, in the transcript the summary is made from
MECHANICAL_ITEMS = 12

SUMMARY_INSTRUCTIONS = (
    "You compact the earlier part of a coding session so the work can go on without it. "
    "Write a summary of at most 300 words with these headings: Goal, Done so far (files read "
    "or changed, commands run, with their results), Findings (facts, paths, line numbers, "
    "errors), Open questions, Next steps. Keep every file path, symbol and number that may "
    "matter. Do not invent anything that is not in the transcript."
)

Message = dict[str, Any]
Complete = Callable[[list[Message], int], Awaitable[str]]
Method = Literal["model", "mechanical", "nothing"]


@dataclass(frozen=True)
class CompactResult:
    """What compaction did: the history before and after, and how the summary was made."""

    method: Method
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    summary: str = ""

    @property
    def text(self) -> str:
        if self.method == "nothing":
            return "Nothing to compact yet: the conversation is short."
        how = "by the model" if self.method == "model" else "mechanically (the model call failed)"
        return (
            f"Compacted {self.messages_before} messages into {self.messages_after} "
            f"({self.tokens_before} → {self.tokens_after} tokens); summary written {how}."
        )


def request_tokens(
    counter: TokenCounter,
    system: str,
    agents_md: str | None,
    schemas: list[dict[str, Any]] | None,
    *messages: list[Message],
) -> int:
    """What a request carrying all of it would take: whether to compact before it goes."""
    fixed = counter.count(system) + counter.count(agents_md or "") + counter.count_schemas(schemas)
    return fixed + sum(counter.count_messages(part) for part in messages)


def _render(messages: list[Message]) -> str:
    """The messages as a plain transcript (what the summary is made from)."""
    lines: list[str] = []
    for msg in messages:
        role = msg.get("role")
        content = msg.get("content")
        text = content if isinstance(content, str) else ""
        if role == "tool":
            lines.append(f"[tool result] {cut_middle(text, RESULT_CHARS)}")
            continue
        if is_summary(msg):
            lines.append(text)
            continue
        if text:
            lines.append(f"[{role}] {text}")
        for call in msg.get("tool_calls") or []:
            fn = call.get("function") or {}
            lines.append(
                f"[tool call] {fn.get('name')} {cut_middle(str(fn.get('arguments')), 200)}"
            )
    return "\n".join(lines)


def mechanical_summary(messages: list[Message]) -> str:
    """A summary without a model: the tasks, the answers' first lines, the tools called."""
    tasks = [str(m["content"]) for m in messages if is_task(m)]
    answers = [
        str(m["content"]).strip().splitlines()[0]
        for m in messages
        if m.get("role") == "assistant" and isinstance(m.get("content"), str) and m["content"]
    ]
    calls: dict[str, int] = {}
    for m in messages:
        for call in m.get("tool_calls") or []:
            name = str((call.get("function") or {}).get("name"))
            calls[name] = calls.get(name, 0) + 1
    earlier = [m["content"].split("\n", 1)[-1] for m in messages if is_summary(m)]
    parts = []
    if earlier:
        parts.append("Earlier summary:\n" + cut_middle(earlier[-1], 2000))
    if tasks:
        items = [f"- {cut_middle(t, 300)}" for t in tasks[-MECHANICAL_ITEMS:]]
        parts.append("Tasks asked:\n" + "\n".join(items))
    if answers:
        items = [f"- {cut_middle(a, 200)}" for a in answers[-MECHANICAL_ITEMS:]]
        parts.append("Answers given (first lines):\n" + "\n".join(items))
    if calls:
        parts.append("Tools called: " + ", ".join(f"{n} ×{c}" for n, c in sorted(calls.items())))
    return "\n\n".join(parts) or "(nothing of note)"


def split_history(
    history: list[Message], budget: int, counter: TokenCounter
) -> tuple[list[Message], list[Message], list[Message]]:
    """(pinned head, the part to summarise, the newest exchange kept whole)."""
    groups = group_messages(history)
    head: list[Message] = []
    if groups and is_task(groups[0][0]):
        head = groups.pop(0)
    # The newest exchange: from the last task on, as far as a share of the budget allows.
    room = int(budget * TAIL_SHARE)
    tail_groups: list[list[Message]] = []
    last_task = max((i for i, g in enumerate(groups) if is_task(g[0])), default=None)
    for i in range(len(groups) - 1, -1, -1):
        cost = counter.count_messages(groups[i])
        if cost > room or (last_task is not None and i < last_task):
            break
        room -= cost
        tail_groups.insert(0, groups[i])
    middle_groups = groups[: len(groups) - len(tail_groups)]
    if last_task is not None and last_task < len(middle_groups):
        # The newest task is pinned even when its exchange is too long to keep whole.
        tail_groups.insert(0, middle_groups.pop(last_task))
    middle = [m for g in middle_groups for m in g]
    tail = [m for g in tail_groups for m in g]
    return head, middle, tail


def _fit_transcript(transcript: str, room: int, counter: TokenCounter) -> str:
    """The transcript cut (head and tail) until it fits `room` tokens."""
    text = transcript
    while text and counter.count(text) > room:
        text = cut_middle(transcript, int(len(text) * 0.8))
        if len(text) < 200:
            return text[: max(room, 0)]
    return text


async def compact_history(
    history: list[Message],
    budget: int,
    counter: TokenCounter,
    complete: Complete,
    *,
    reserve: float = REPLY_RESERVE,
) -> tuple[list[Message], CompactResult]:
    """The compacted history and what was done (the history unchanged when there is little)."""
    head, middle, tail = split_history(history, budget, counter)
    tokens_before = counter.count_messages(history)
    if len(middle) < 2:
        return history, CompactResult(
            "nothing", len(history), len(history), tokens_before, tokens_before
        )
    reply_tokens = min(SUMMARY_REPLY_TOKENS, max(budget // 8, 100))
    system = {"role": "system", "content": SUMMARY_INSTRUCTIONS}
    room = int(budget * (1 - reserve - HEADROOM)) - reply_tokens - counter.count_message(system)
    transcript = _fit_transcript(_render(middle), max(room - 50, 0), counter)
    request = [system, {"role": "user", "content": f"Transcript:\n{transcript}"}]
    method: Method = "model"
    try:
        summary = (await complete(request, reply_tokens)).strip()
    except Exception as exc:  # noqa: BLE001 - the mechanical summary stands in for any failure
        log.warning("the summary call failed: %s", exc)
        summary = ""
    if not summary:
        method = "mechanical"
        summary = mechanical_summary(middle)
    message = {"role": "user", "content": f"{SUMMARY_PREFIX}\n{summary}"}
    compacted = [*head, message, *tail]
    return compacted, CompactResult(
        method,
        len(history),
        len(compacted),
        tokens_before,
        counter.count_messages(compacted),
        summary,
    )


# ---------------------------------------------------------------- in a session


async def compact_session(agent: Agent) -> CompactResult:
    """Older history becomes one pinned summary (`/compact`, and automatically when full)."""
    turn = agent.model.current if agent.running else None

    async def complete(messages: list[dict[str, Any]], max_tokens: int) -> str:
        completion = await agent.llm.complete(messages, max_tokens=max_tokens, temperature=0)
        agent.model.account(turn, completion)
        return completion.content

    history, result = await compact_history(
        agent.session.history, agent.context_tokens, agent.counter, complete
    )
    if result.method != "nothing":
        agent.session.history = history
        await agent.session.save_async()
    return result


async def compact_if_full(agent: Agent, turn: Turn) -> None:
    """Compact before the first step when the request would fill `compact_at` of the budget."""
    share = agent.settings.compact_at
    if share is None or not agent.session.history:
        return
    inputs = await asyncio.to_thread(agent.prompts.read_inputs, agent.protocol)
    schemas = agent.registry.schemas() if agent.protocol == "tools" else None
    need = request_tokens(
        agent.counter,
        inputs.system,
        inputs.agents_md,
        schemas,
        agent.session.history,
        turn.messages,
    )
    if need <= share * agent.context_tokens:
        return
    result = await compact_session(agent)
    if result.method != "nothing":
        agent.emit(Notice(text=result.text))
