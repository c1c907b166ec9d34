"""Compaction: `/compact` and the automatic one, with a model summary or a mechanical one."""

from __future__ import annotations

import pytest

from hello_tui.agent.compaction import SUMMARY_INSTRUCTIONS, compact_history
from hello_tui.agent.context import REPLY_RESERVE
from hello_tui.agent.tokens import default_counter
from hello_tui.config import ConfigError, load_settings
from hello_tui.core.events import Notice
from hello_tui.store.history import SUMMARY_PREFIX
from tests.engine.agent_kit import collect, of, open_engine, saved
from tests.support.scripted_model import error, text

FIRST = "FIRST TASK: make the retry delay configurable"


def is_summary_request(body: dict) -> bool:
    return body["messages"][0]["content"] == SUMMARY_INSTRUCTIONS


async def long_session(tmp_path, server, model_settings, turns: int = 8, **environ: str):
    settings = model_settings(
        tmp_path, server, environ={"CODE_AGENT_CONTEXT_BUDGET": "4000", **environ}
    )
    engine = await open_engine(settings)
    await collect(engine, FIRST)
    for i in range(1, turns):
        await collect(engine, f"follow-up {i}: " + "details " * 40)
    return engine


async def test_compact_makes_one_pinned_summary_and_keeps_the_task(
    tmp_path, scripted_server, model_settings
):
    replies = [text(f"answer {i} " + "words " * 40) for i in range(8)]
    server = scripted_server(
        replies,
    )
    engine = await long_session(tmp_path, server, model_settings, CODE_AGENT_COMPACT_AT="off")
    before = len(saved(engine)["history"])
    server.add(text("Goal: configurable retry delay. Done: read retry.py."), text("next answer"))
    result = await engine.compact()
    assert result.method == "model"
    assert result.messages_after < before
    (request,) = [r for r in server.chat_requests if is_summary_request(r)]
    counter = default_counter()
    assert counter.count_messages(request["messages"]) <= int(4000 * (1 - REPLY_RESERVE))
    history = saved(engine)["history"]
    assert history[0] == {"role": "user", "content": FIRST}
    assert history[1]["content"].startswith(SUMMARY_PREFIX)
    assert "configurable retry delay" in history[1]["content"]
    assert history[-1]["content"].startswith("answer 7")  # the newest exchange stays whole
    await collect(engine, "go on")
    sent = server.chat_requests[-1]["messages"]
    users = [m["content"] for m in sent if m["role"] == "user"]
    assert users[0] == FIRST and users[1].startswith(SUMMARY_PREFIX) and users[-1] == "go on"
    await engine.aclose()


async def test_a_failed_summary_call_falls_back_to_a_mechanical_summary(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text(f"answer {i}") for i in range(8)])
    engine = await long_session(tmp_path, server, model_settings, CODE_AGENT_COMPACT_AT="off")
    server.add(error(400, "bad request"))
    result = await engine.compact()
    assert result.method == "mechanical"
    summary = saved(engine)["history"][1]["content"]
    assert summary.startswith(SUMMARY_PREFIX)
    assert "follow-up 1:" in summary and "answer 1" in summary
    await engine.aclose()


async def test_a_short_session_has_nothing_to_compact(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("hi")])
    engine = await open_engine(model_settings(tmp_path, server))
    await collect(engine, FIRST)
    result = await engine.compact()
    assert result.method == "nothing" and "Nothing to compact" in result.text
    assert not [r for r in server.chat_requests if is_summary_request(r)]
    await engine.aclose()


async def test_compaction_starts_on_its_own_at_the_threshold(
    tmp_path, scripted_server, model_settings
):
    def script(body: dict):
        if is_summary_request(body):
            return text("Summary: the retry delay work so far.")
        return text("answer " + "words " * 150)

    server = scripted_server(script)
    engine = await long_session(tmp_path, server, model_settings, turns=16)
    summaries = [r for r in server.chat_requests if is_summary_request(r)]
    assert summaries, "no compaction happened"
    history = saved(engine)["history"]
    assert history[0] == {"role": "user", "content": FIRST}
    assert any(m["content"].startswith(SUMMARY_PREFIX) for m in history if m["role"] == "user")
    events = await collect(engine, "one more " + "details " * 200)
    notices = [n.text for n in of(events, Notice) if n.text.startswith("Compacted")]
    assert len(notices) <= 1
    await engine.aclose()


async def test_off_never_compacts(tmp_path, scripted_server, model_settings):
    # The same session that compacts on its own at the default threshold.
    server = scripted_server(lambda body: text("answer " + "words " * 150))
    engine = await long_session(
        tmp_path, server, model_settings, turns=16, CODE_AGENT_COMPACT_AT="off"
    )
    assert not [r for r in server.chat_requests if is_summary_request(r)]
    await engine.aclose()


async def test_a_huge_history_is_never_too_long_to_compact():
    counter = default_counter()
    history = [{"role": "user", "content": FIRST}]
    for i in range(40):
        history += [
            {"role": "user", "content": f"task {i} " + "x " * 3000},
            {"role": "assistant", "content": f"answer {i} " + "y " * 3000},
        ]
    sent: list[list[dict]] = []

    async def complete(messages, max_tokens):
        sent.append(messages)
        assert counter.count_messages(messages) + max_tokens <= 4000
        return "summary"

    compacted, result = await compact_history(history, 4000, counter, complete)
    assert result.method == "model" and len(sent) == 1
    assert compacted[0]["content"] == FIRST
    # The newest answer is longer than the tail's share: the newest task stays pinned.
    assert compacted[-1]["content"].startswith("task 39")


@pytest.mark.parametrize(
    ("raw", "value"), [("", 0.8), ("off", None), ("0.5", 0.5), ("70%", 0.7), ("90", 0.9)]
)
def test_compact_at_setting(tmp_path, raw, value):
    settings = load_settings(
        tmp_path, base_url="http://127.0.0.1:9/v1", environ={"CODE_AGENT_COMPACT_AT": raw}
    )
    assert settings.compact_at == value


def test_a_bad_compact_at_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="CODE_AGENT_COMPACT_AT"):
        load_settings(
            tmp_path, base_url="http://127.0.0.1:9/v1", environ={"CODE_AGENT_COMPACT_AT": "soon"}
        )
