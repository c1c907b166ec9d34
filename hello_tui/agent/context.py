"""Building the prompt within a token budget: gather, select, structure, compress (GSSC).

The budget counts everything a request carries, with one tokenizer: the
messages, the tool schemas (`schema_tokens`, every tool as sent) and a reserve
for the reply. What is pinned is never cut: the system rules, AGENTS.md, the
session's first task, the compaction summary and the current task. Messages
move in groups (an assistant call with its results), so a call never loses
its result.

When everything does not fit, in this order:
1. older turns' tool outputs and answers are shortened (head and tail);
2. older turns go, oldest first;
3. this turn's older results are shortened, then cut to 160 characters (head and tail);
4. this turn's older steps go, oldest first;
5. only then are the newest results cut, head and tail, with a note saying
   how much was left out. The newest step is never dropped wholesale.
The todo board and the recent evidence yield before any history does not.

The user's message itself is pinned, so it is bounded before the turn starts
(`fit_task`, for every front end alike): at most half the budget, its middle
cut, and the user told.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hello_tui.agent.tokens import TokenCounter, default_counter
from hello_tui.store.history import cut_middle, is_summary, is_task

__all__ = [
    "BuiltContext",
    "ContextParts",
    "FittedTask",
    "build_context",
    "cut_middle",
    "fit_task",
    "group_messages",
]

REPLY_RESERVE = 0.15
EVIDENCE_ITEMS = 3
EVIDENCE_CHARS = 600
COMPRESSED_OUTPUT_CHARS = 800
SHORTEST_OUTPUT_CHARS = 160
# A pinned message (first task, summary) longer than this is cut only when nothing else fits.
PINNED_FLOOR_CHARS = 2000
# The user's message may fill at most this share of the budget; the rest is for the rules,
# the tool schemas, the history and the reply.
TASK_SHARE = 0.5
# No token of the tokenizers in use spans more characters than this, so a text this many
# times longer than a token limit is past it without being counted (counting is CPU-bound).
MAX_CHARS_PER_TOKEN = 8
# The last-resort cut of the newest results may leave this share of the longest result's
# characters unused: each trial of a limit is a full count of the cut text.
CUT_TOLERANCE = 0.002
# ReAct tool results travel as user messages starting with this.
OBSERVATION_PREFIX = "Observation"

Message = dict[str, Any]
Group = list[Message]


@dataclass
class ContextParts:
    system: str
    agents_md: str | None = None
    todo_board: str | None = None
    evidence: list[str] = field(default_factory=list)
    history: list[Message] = field(default_factory=list)
    # This turn: the user's task first, then the steps taken so far.
    turn: list[Message] = field(default_factory=list)
    # The tool schemas sent with the request, counted with the same tokenizer.
    schema_tokens: int = 0


@dataclass
class BuiltContext:
    messages: list[Message]
    tokens: int  # the messages' tokens
    budget: int
    dropped_messages: int
    compressed_messages: int
    schema_tokens: int = 0
    cut_newest: bool = False  # the last resort was needed: the newest results were cut

    @property
    def used(self) -> int:
        """Everything the request carries: messages and tool schemas."""
        return self.tokens + self.schema_tokens


def _is_result(msg: Message) -> bool:
    content = msg.get("content")
    return msg.get("role") == "tool" or (
        msg.get("role") == "user"
        and isinstance(content, str)
        and content.startswith(OBSERVATION_PREFIX)
    )


def group_messages(messages: list[Message]) -> list[Group]:
    """Split into groups that must stay together: an assistant turn plus its tool results."""
    groups: list[Group] = []
    for msg in messages:
        if _is_result(msg) and groups and groups[-1][0].get("role") == "assistant":
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


def _shorten(group: Group, limit: int, *, answers: bool) -> tuple[Group, int]:
    """Results (and, for older turns, assistant texts) cut to `limit` characters."""
    changed = 0
    out = []
    for msg in group:
        content = msg.get("content")
        cuttable = _is_result(msg) or (answers and msg.get("role") == "assistant")
        if cuttable and isinstance(content, str) and len(content) > limit:
            msg = {**msg, "content": cut_middle(content, limit)}
            changed += 1
        out.append(msg)
    return out, changed


def _cut_to_fit(group: Group, room: int, cost: Callable[[Group], int]) -> Group:
    """The group with its results cut (head and tail) just enough to fit `room`.

    Each trial counts the cut results anew (tiktoken, CPU-bound), so the limit is found
    by interpolation between a limit that fits and one that does not (the cost grows
    about linearly with it), with a bisection step whenever that stops halving the
    interval, and stops within `CUT_TOLERANCE` of the longest result's length.
    """
    longest = max((len(m.get("content") or "") for m in group if _is_result(m)), default=0)

    def trial(limit: int) -> tuple[Group, int]:
        candidate = _shorten(group, limit, answers=False)[0]
        return candidate, cost(candidate)

    best, low_cost = trial(0)
    if low_cost > room or longest == 0:
        return best
    whole, high_cost = trial(longest)
    if high_cost <= room:
        return whole
    low, high = 0, longest
    # f(limit) = cost - room: at most 0 at `low`, above 0 at `high`.
    f_low, f_high = float(low_cost - room), float(high_cost - room)
    tolerance = max(1, int(longest * CUT_TOLERANCE))
    kept_side = 0  # which end the last two trials kept (Illinois: then halve the other's f)
    bisect = False
    while high - low > tolerance:
        width = high - low
        if bisect:
            guess = (low + high) // 2
        else:
            guess = low + int(-f_low * width / (f_high - f_low))
        guess = min(max(guess, low + 1), high - 1)
        candidate, spent = trial(guess)
        if spent <= room:
            best, low, f_low = candidate, guess, float(spent - room)
            if kept_side == 1:
                f_high /= 2
            kept_side = 1
        else:
            high, f_high = guess, float(spent - room)
            if kept_side == -1:
                f_low /= 2
            kept_side = -1
        bisect = not bisect and (high - low) * 2 > width
    return best


class _Selection:
    """The optional groups, with their costs, shrunk stage by stage until they fit."""

    def __init__(self, hist: list[Group], steps: list[Group], counter: TokenCounter) -> None:
        self.counter = counter
        self.hist: list[Group | None] = list(hist)
        self.steps: list[Group | None] = list(steps)
        self._costs = {"hist": [self.cost(g) for g in hist], "steps": [self.cost(g) for g in steps]}
        self._total = sum(self._costs["hist"]) + sum(self._costs["steps"])
        self.dropped = 0
        self.compressed = 0

    def cost(self, group: Group) -> int:
        return self.counter.count_messages(group)

    def total(self) -> int:
        return self._total

    def _lists(self, which: str) -> tuple[list[Group | None], list[int]]:
        return (self.hist if which == "hist" else self.steps), self._costs[which]

    def replace(self, which: str, i: int, group: Group | None) -> None:
        groups, costs = self._lists(which)
        new_cost = 0 if group is None else self.cost(group)
        self._total += new_cost - costs[i]
        groups[i], costs[i] = group, new_cost

    def shorten(self, which: str, upto: int, limit: int, answers: bool, room: int) -> None:
        """Oldest first, and only as many as it takes: the newer stay whole longer."""
        groups, _ = self._lists(which)
        for i in range(upto):
            if self._total <= room:
                return
            group = groups[i]
            if group is not None:
                short, n = _shorten(group, limit, answers=answers)
                if n:
                    self.compressed += n
                    self.replace(which, i, short)

    def drop_oldest(self, which: str, upto: int, room: int) -> None:
        groups, _ = self._lists(which)
        for i in range(upto):
            if self._total <= room:
                return
            group = groups[i]
            if group is not None:
                self.dropped += len(group)
                self.replace(which, i, None)


def _protected_steps(steps: list[Group]) -> int:
    """How many of the newest step groups are never dropped: the last one, and the last
    one with results when a note (an empty-reply nudge, a closing instruction) came after."""
    if not steps:
        return 0
    for back, group in enumerate(reversed(steps)):
        if any(_is_result(m) for m in group):
            return back + 1
        if back >= 1:
            break
    return 1


def build_context(
    parts: ContextParts,
    budget: int,
    counter: TokenCounter | None = None,
    reserve: float = REPLY_RESERVE,
) -> BuiltContext:
    counter = counter or default_counter()
    available = int(budget * (1 - reserve)) - parts.schema_tokens
    if not parts.turn:
        raise ValueError("build_context needs the current task as the first message of the turn")
    task, steps = parts.turn[0], parts.turn[1:]

    # Pinned: the rules, the session's first task, the newest summary, the current task.
    history_groups = group_messages(parts.history)
    first = next((i for i, g in enumerate(history_groups) if is_task(g[0])), None)
    summary = next(
        (i for i in range(len(history_groups) - 1, -1, -1) if is_summary(history_groups[i][0])),
        None,
    )
    pinned = {i: history_groups[i] for i in (first, summary) if i is not None}

    def fixed_cost(system: Message) -> int:
        pins = sum(counter.count_messages(g) for g in pinned.values())
        return counter.count_message(system) + counter.count_message(task) + pins

    system_msg = {"role": "system", "content": _system_text(parts, True, True)}
    fixed = fixed_cost(system_msg)
    for board, evidence in ((True, False), (False, False)):
        if fixed <= available:
            break
        system_msg = {"role": "system", "content": _system_text(parts, board, evidence)}
        fixed = fixed_cost(system_msg)
    if fixed > available:
        # Pinned messages are single user messages: cut, never dropped.
        pinned = {
            i: [{**g[0], "content": cut_middle(str(g[0].get("content") or ""), PINNED_FLOOR_CHARS)}]
            for i, g in pinned.items()
        }
        fixed = fixed_cost(system_msg)

    room = available - fixed
    others = [(i, g) for i, g in enumerate(history_groups) if i not in pinned]
    step_groups = group_messages(steps)
    sel = _Selection([g for _, g in others], step_groups, counter)
    older_steps = len(step_groups) - _protected_steps(step_groups)
    stages: list[Callable[[], None]] = [
        lambda: sel.shorten("hist", len(sel.hist), COMPRESSED_OUTPUT_CHARS, True, room),
        lambda: sel.drop_oldest("hist", len(sel.hist), room),
        lambda: sel.shorten("steps", older_steps, COMPRESSED_OUTPUT_CHARS, False, room),
        lambda: sel.shorten("steps", older_steps, SHORTEST_OUTPUT_CHARS, False, room),
        lambda: sel.drop_oldest("steps", older_steps, room),
    ]
    for stage in stages:
        if sel.total() <= room:
            break
        stage()
    cut_newest = False
    if sel.total() > max(room, 0):
        # The last resort: the newest results are cut, head and tail, never dropped.
        cut_newest = True
        for i in range(older_steps, len(sel.steps)):
            group = sel.steps[i]
            if group is None:
                continue
            rest = sel.total() - sel._costs["steps"][i]
            sel.replace("steps", i, _cut_to_fit(group, max(room - rest, 0), sel.cost))
            sel.compressed += 1

    kept_hist = dict(pinned)
    for (i, _), group in zip(others, sel.hist, strict=True):
        if group is not None:
            kept_hist[i] = group
    messages: list[Message] = [system_msg]
    for i in sorted(kept_hist):
        messages.extend(kept_hist[i])
    messages.append(task)
    for group in sel.steps:
        if group is not None:
            messages.extend(group)
    return BuiltContext(
        messages=messages,
        tokens=counter.count_messages(messages),
        budget=budget,
        dropped_messages=sel.dropped,
        compressed_messages=sel.compressed,
        schema_tokens=parts.schema_tokens,
        cut_newest=cut_newest,
    )


@dataclass(frozen=True)
class FittedTask:
    text: str  # what the model gets
    notice: str | None = None  # what the user is told when it was cut


def fit_task(text: str, budget: int, counter: TokenCounter | None = None) -> FittedTask:
    """The user's message within `TASK_SHARE` of the budget: head and tail kept, the middle
    cut, and a notice saying so. CPU-bound for long texts: run it on a worker thread."""
    counter = counter or default_counter()
    limit = max(int(budget * TASK_SHARE), 1)
    # Byte-level tokenizers make at most one token of each UTF-8 byte: short texts fit uncounted.
    if len(text) <= limit and len(text.encode("utf-8", "surrogatepass")) <= limit:
        return FittedTask(text)
    cap = limit * MAX_CHARS_PER_TOKEN
    work = cut_middle(text, cap) if len(text) > cap else text
    tokens = counter.count(work)
    if work is text and tokens <= limit:
        return FittedTask(text)
    keep = len(work)
    while tokens > limit and keep > 0:
        keep = int(keep * limit / tokens * 0.95)
        work = cut_middle(text, keep)
        tokens = counter.count(work)
    notice = (
        f"Your message has {len(text):,} characters, more than half the context budget "
        f"({budget:,} tokens) holds: the model gets its beginning and end, {keep:,} characters "
        f"in all; {len(text) - keep:,} in the middle were left out."
    )
    return FittedTask(work, notice)
