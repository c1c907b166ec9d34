"""The GSSC context builder and offline token counting."""

from __future__ import annotations

import subprocess
import sys

from hello_tui.agent.context import (
    ContextParts,
    _shorten,
    build_context,
    cut_middle,
    group_messages,
)
from hello_tui.agent.tokens import TokenCounter, default_counter, estimate_tokens


def counter() -> TokenCounter:
    # Deterministic: one token per character keeps budgets easy to reason about.
    return TokenCounter(len, method="chars")


def user(text):
    return {"role": "user", "content": text}


def assistant(text):
    return {"role": "assistant", "content": text}


def call_pair(i, size=50):
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": f"c{i}", "content": "r" * size},
    ]


def test_everything_fits_in_order():
    parts = ContextParts(
        system="RULES",
        agents_md="AGENTS",
        history=[user("first task"), assistant("first answer")],
        turn=[user("now")],
    )
    built = build_context(parts, 10_000, counter())
    assert [m["role"] for m in built.messages] == ["system", "user", "assistant", "user"]
    assert built.messages[0]["content"].startswith("RULES")
    assert "AGENTS" in built.messages[0]["content"]
    assert built.messages[-1]["content"] == "now"
    assert built.dropped_messages == 0


def test_oldest_history_goes_first_but_first_task_stays():
    history = [user("FIRST TASK")]
    for i in range(20):
        history += [user(f"question {i} " + "q" * 80), assistant(f"answer {i} " + "a" * 80)]
    parts = ContextParts(system="S" * 100, history=history, turn=[user("CURRENT")])
    built = build_context(parts, 1500, counter())
    contents = [m["content"] for m in built.messages]
    assert contents[1] == "FIRST TASK"
    assert contents[-1] == "CURRENT"
    assert built.dropped_messages > 0
    kept_questions = [c for c in contents if c.startswith("question")]
    # What is kept is the most recent stretch, contiguous up to the newest.
    assert kept_questions[-1].startswith("question 19")
    numbers = [int(c.split()[1]) for c in kept_questions]
    assert numbers == list(range(numbers[0], 20))
    assert built.tokens <= int(1500 * 0.85)


def test_system_rules_and_current_task_are_never_cut():
    parts = ContextParts(system="R" * 5000, history=[user("old")], turn=[user("T" * 5000)])
    built = build_context(parts, 1000, counter())
    assert built.messages[0]["content"] == "R" * 5000
    assert built.messages[-1]["content"] == "T" * 5000
    # The session's first task is pinned too: it is never dropped for the budget.
    assert [m["content"] for m in built.messages[1:-1]] == ["old"]


def test_tool_call_pairs_are_never_split():
    turn = [user("task")]
    for i in range(30):
        turn += call_pair(i, size=120)
    built = build_context(ContextParts(system="S", turn=turn), 2000, counter())
    ids_called = {c["id"] for m in built.messages for c in (m.get("tool_calls") or [])}
    ids_answered = {m["tool_call_id"] for m in built.messages if m["role"] == "tool"}
    assert ids_called == ids_answered and ids_called
    assert built.messages[1]["content"] == "task"
    # The newest step is kept.
    assert "c29" in ids_called
    assert built.tokens <= 1700


def test_old_tool_outputs_are_compressed_before_dropping():
    turn = [user("task")]
    for i in range(6):
        turn += call_pair(i, size=3000)
    built = build_context(ContextParts(system="S", turn=turn), 16_000, counter())
    tool_msgs = [m for m in built.messages if m["role"] == "tool"]
    assert len(tool_msgs) == 6
    assert built.compressed_messages == 3
    assert "characters omitted" in tool_msgs[0]["content"]
    assert tool_msgs[-1]["content"] == "r" * 3000


def test_board_and_evidence_are_included_and_yield_first():
    parts = ContextParts(
        system="S", todo_board="- [pending] a", evidence=["read a.py → ok"], turn=[user("t")]
    )
    built = build_context(parts, 10_000, counter())
    assert "# Todo board" in built.messages[0]["content"]
    assert "read a.py → ok" in built.messages[0]["content"]
    tight = ContextParts(
        system="S" * 90, todo_board="B" * 50, evidence=["E" * 50], turn=[user("t")]
    )
    built = build_context(tight, 130, counter())
    assert "E" * 50 not in built.messages[0]["content"]


def test_react_observations_group_with_their_action():
    msgs = [user("t"), assistant("Action: x[]"), user("Observation: y"), assistant("Action: z[]")]
    groups = group_messages(msgs)
    assert [len(g) for g in groups] == [1, 2, 1]


def test_cut_middle_reports_what_was_omitted():
    text = "a" * 600 + "b" * 400
    cut = cut_middle(text, 100)
    assert cut.startswith("a" * 60) and cut.endswith("b" * 40)
    assert "[… 900 characters omitted …]" in cut
    assert cut_middle("short", 100) == "short"


def test_offline_tiktoken_encoding_counts():
    c = default_counter()
    assert c.method == "tiktoken"
    assert c.count("hello world") == 2


def test_estimate_is_used_when_the_encoding_is_unavailable():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.startswith('tiktoken'):\n"
        "            raise ImportError('no tiktoken here')\n"
        "sys.meta_path.insert(0, Block())\n"
        "from hello_tui.agent.tokens import default_counter\n"
        "from hello_tui.agent.context import ContextParts, build_context\n"
        "c = default_counter()\n"
        "print(c.method, c.count('abcdefgh'), c.count('你好世界'))\n"
        "b = build_context(ContextParts(system='s', turn=[{'role': 'user', 'content': 'x'}]), 8000)\n"
        "print(len(b.messages))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["estimate", "2", "4", "2"]


def test_estimate_rules():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("中文") == 2
    assert estimate_tokens("éé") == 1


async def test_long_sessions_stay_within_the_budget(tmp_path, scripted_server, model_settings):
    from tests.engine.agent_kit import collect, open_engine
    from tests.support.scripted_model import text

    server = scripted_server([text("answer " + "z" * 400) for _ in range(12)])
    settings = model_settings(tmp_path, server, environ={"CODE_AGENT_CONTEXT_BUDGET": "2500"})
    engine = await open_engine(settings)
    for i in range(12):
        await collect(engine, f"task number {i} " + "y" * 300)
    sent = server.chat_requests[-1]["messages"]
    assert default_counter().count_messages(sent) <= int(2500 * 0.85)
    users = [m["content"] for m in sent if m["role"] == "user"]
    assert users[0].startswith("task number 0 ")  # the first task is kept
    assert users[-1].startswith("task number 11 ")  # the current task is never cut
    assert not any(u.startswith("task number 5 ") for u in users)  # the middle went first


def test_a_message_past_half_the_budget_is_cut_head_and_tail_with_a_notice():
    from hello_tui.agent.context import MAX_CHARS_PER_TOKEN, fit_task

    counted: list[int] = []

    def encoder(text: str) -> int:
        counted.append(len(text))
        return len(text) // 4 + 1

    counter = TokenCounter(encoder)
    huge = "HEAD " + "x" * 60_000_000 + " TAIL"  # 60 MB: never counted whole
    fitted = fit_task(huge, 8000, counter)
    assert fitted.text.startswith("HEAD ") and fitted.text.endswith(" TAIL")
    assert "characters omitted" in fitted.text
    assert counter.count(fitted.text) <= 4000
    assert max(counted) <= 4000 * MAX_CHARS_PER_TOKEN + 100
    assert fitted.notice is not None and "60,000,010 characters" in fitted.notice
    small = fit_task("fix the bug in a.py", 8000, counter)
    assert small.text == "fix the bug in a.py" and small.notice is None


def test_the_count_cache_keeps_hot_texts_and_evicts_the_coldest_within_its_bound():
    encoded: list[str] = []

    def encoder(text: str) -> int:
        encoded.append(text)
        return len(text)

    counter = TokenCounter(encoder, cache_chars=1000)
    hot = "h" * 100
    for i in range(50):  # 50 cold texts of 100 characters pass through, the hot one recurs
        counter.count(hot)
        counter.count(f"{i:03}" + "c" * 97)
    assert encoded.count(hot) == 1
    assert counter._cached_chars <= 1000
    assert sum(len(t) for t in counter._cache) == counter._cached_chars
    encoded.clear()
    counter.count("000" + "c" * 97)  # the oldest cold text was evicted: counted again
    counter.count("049" + "c" * 97)  # the newest is still cached
    assert encoded == ["000" + "c" * 97]
    counter.count("x" * 5000)  # longer than the whole cache: counted, never cached
    assert counter._cached_chars <= 1000 and counter.count(hot) == 100


def test_the_newest_results_are_cut_just_enough_in_few_trials():
    """Against brute force: the cut fits, leaves at most the tolerance unused, and takes
    far fewer trials (each a full count) than a bisection over the limit would."""
    import math
    import random

    from hello_tui.agent.context import CUT_TOLERANCE, _cut_to_fit

    rng = random.Random(5)
    counter = TokenCounter(lambda text: len(text) // 3 + 1)
    trials_made, bisection_trials = 0, 0
    for _ in range(60):
        sizes = [rng.randint(1, 30_000) for _ in range(rng.randint(1, 4))]
        group = [call_pair(0)[0]] + [
            {"role": "tool", "tool_call_id": f"c{i}", "content": "ab c" * n}
            for i, n in enumerate(sizes)
        ]
        longest = max(len(m["content"]) for m in group[1:])

        def cost_at(limit, group=group):
            return counter.count_messages(_shorten(group, limit, answers=False)[0])

        room = rng.randint(cost_at(0), counter.count_messages(group) - 1)
        trials: list[int] = []

        def counted(candidate, trials=trials):
            trials.append(1)
            return counter.count_messages(candidate)

        got = _cut_to_fit(group, room, counted)
        assert counter.count_messages(got) <= room
        lo, hi = 0, longest  # the largest limit that fits, by brute force
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if cost_at(mid) <= room else (lo, mid - 1)
        tolerance = max(1, int(longest * CUT_TOLERANCE))
        assert counter.count_messages(got) >= cost_at(max(lo - tolerance, 0)) - 2
        trials_made += len(trials)
        bisection_trials += math.ceil(math.log2(longest + 1)) + 1
    assert trials_made * 2 < bisection_trials, (trials_made, bisection_trials)
