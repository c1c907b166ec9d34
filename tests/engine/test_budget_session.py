"""A 200-step scripted session against the budget: what every request carries, and after.

Each step reads three large files (more than the whole budget together), so
the builder has to cut; still no request may exceed the budget (messages and
tool schemas counted with the same tokenizer, the reply reserve left free),
every request after a tool step carries that step's results (at least cut),
the task and the rules are in every request, and `--continue` afterwards
still carries the session's original task.
"""

from __future__ import annotations

from hello_tui.agent.context import REPLY_RESERVE
from hello_tui.agent.tokens import default_counter
from hello_tui.tools import build_registry
from tests.engine.agent_kit import collect, open_engine
from tests.support.scripted_model import call, text, tool_calls

BUDGET = 8000
STEPS = 200
TASK = "ORIGINAL TASK: find where the retry delay is computed"
FILES = [f"mod{i}.py" for i in range(4)]


def make_repo(repo) -> None:
    for n, name in enumerate(FILES):
        lines = [f"def function_{n}_{i}(value):  # line {i} of {name}" for i in range(600)]
        (repo / name).write_text("\n".join(lines) + "\n")


def step_reply(step: int):
    reads = [
        call(
            "read", {"path": FILES[(step + j) % len(FILES)], "offset": step + 1}, id=f"s{step}r{j}"
        )
        for j in range(3)
    ]
    return tool_calls(reads)


def assert_within_budget(request: dict) -> None:
    counter = default_counter()
    used = counter.count_messages(request["messages"]) + counter.count_schemas(request.get("tools"))
    assert used <= int(BUDGET * (1 - REPLY_RESERVE)), used


async def test_a_200_step_session_stays_within_budget_and_keeps_the_thread(
    tmp_path, scripted_server, model_settings
):
    make_repo(tmp_path)
    script = [step_reply(s) for s in range(1, STEPS)] + [text("It is in retry.py.")]
    server = scripted_server(script)
    settings = model_settings(
        tmp_path,
        server,
        environ={"CODE_AGENT_CONTEXT_BUDGET": str(BUDGET), "CODE_AGENT_MAX_STEPS": str(STEPS)},
    )
    engine = await open_engine(settings, build_registry(settings))
    system_head = None
    await collect(engine, TASK)
    requests = server.chat_requests
    assert len(requests) == STEPS
    for k, request in enumerate(requests):
        messages = request["messages"]
        assert_within_budget(request)
        assert messages[0]["role"] == "system"
        system_head = system_head or messages[0]["content"][:200]
        assert messages[0]["content"].startswith(system_head)  # the rules, every time
        assert any(m["role"] == "user" and m["content"] == TASK for m in messages)
        if k == 0:
            continue
        # The previous step's three results are all here, at least shortened.
        results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
        for j in range(3):
            content = results.get(f"s{k}r{j}")
            assert content, f"request {k + 1} lost result s{k}r{j}"
            assert "of mod" in content or "characters omitted" in content
    await engine.aclose()

    server.add(text("resumed"))
    again = await open_engine(settings, build_registry(settings), continue_latest=True)
    await collect(again, "go on")
    last = server.chat_requests[-1]
    assert_within_budget(last)
    users = [m["content"] for m in last["messages"] if m["role"] == "user"]
    assert users[0] == TASK and users[-1] == "go on"
    await again.aclose()


async def test_a_window_too_small_for_the_instructions_is_said_once(
    tmp_path, scripted_server, model_settings
):
    from hello_tui.core.events import Notice

    server = scripted_server([text("hi"), text("hi again")])
    settings = model_settings(
        tmp_path, server, protocol="react", environ={"CODE_AGENT_CONTEXT_BUDGET": "1000"}
    )
    engine = await open_engine(settings, build_registry(settings))
    first = await collect(engine, "Say hello.")
    second = await collect(engine, "And again.")
    said = [e.text for e in first + second if isinstance(e, Notice) and "more than" in e.text]
    assert len(said) == 1, said
    assert "more than the context budget of 1,000" in said[0] and "--protocol tools" in said[0]
    await engine.aclose()
