"""Sessions on disk: atomic saves, history limits, resume, corrupt files, the transcript."""

from __future__ import annotations

import json

import pytest

from hello_tui.agent.factory import open_session
from hello_tui.config import load_settings
from hello_tui.store.sessions import (
    HISTORY_LIMIT,
    SessionCorrupt,
    SessionNotFound,
    SessionStore,
    trim_history,
)
from hello_tui.testing.scripted_model import call, text, tool_calls
from tests.engine.agent_kit import collect, make_agent


def settings(tmp_path):
    return load_settings(tmp_path, base_url="http://127.0.0.1:9/v1", api_key="k", environ={})


def test_new_session_saves_atomically(tmp_path):
    store = SessionStore(settings(tmp_path).state)
    s = store.new()
    s.history.append({"role": "user", "content": "hi"})
    s.save()
    data = json.loads(s.path.read_text())
    assert data["session_id"] == s.id and data["history"] == [{"role": "user", "content": "hi"}]
    assert s.path.parent == tmp_path / ".helloagents" / "sessions"
    assert [p.name for p in s.path.parent.iterdir()] == [f"{s.id}.json"]  # no temp file left


def test_history_keeps_the_last_50_without_orphan_tool_results():
    history = [{"role": "user", "content": str(i)} for i in range(60)]
    assert len(trim_history(history)) == HISTORY_LIMIT
    pairs = []
    for i in range(40):
        pairs += [
            {"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}"}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "r"},
        ]
    pairs.append({"role": "user", "content": "next"})  # 81 messages: the cut lands on a tool result
    kept = trim_history(pairs)
    assert kept[0]["role"] == "assistant"
    assert len(kept) == HISTORY_LIMIT - 1


def test_latest_and_load(tmp_path):
    store = SessionStore(settings(tmp_path).state)
    assert store.latest() is None
    a = store.new()
    a.save()
    b = store.new()
    b.display.append({"role": "user", "content": "second"})
    b.save()
    assert store.latest().id == b.id
    assert store.load(a.id).id == a.id
    with pytest.raises(SessionNotFound, match="No session 'nope'"):
        store.load("nope")
    with pytest.raises(SessionNotFound):
        store.load("../escape")


def test_corrupt_file_is_set_aside_and_a_new_session_starts(tmp_path):
    st = settings(tmp_path)
    store = SessionStore(st.state)
    s = store.new()
    s.save()
    s.path.write_text("{ this is not json")
    with pytest.raises(SessionCorrupt) as info:
        store.load(s.id)
    assert "unreadable" in str(info.value) and "Starting a new session" in str(info.value)
    assert not s.path.exists()
    aside = list(s.path.parent.glob(f"{s.id}.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_text() == "{ this is not json"

    s2 = store.new()
    s2.save()
    s2.path.write_text(json.dumps({"history": "not a list"}))
    session, notices = open_session(st, continue_latest=True)
    assert session.id != s2.id and session.history == []
    assert "unreadable" in notices[0]


async def test_turns_are_saved_and_resumed(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [tool_calls([call("echo", {"text": "a"}, id="c1")]), text("first answer")]
    )
    st = model_settings(tmp_path, server)
    agent = make_agent(st)
    await collect(agent, "first task")
    saved = json.loads(agent.session.path.read_text())
    assert [m["role"] for m in saved["history"]] == ["user", "assistant", "tool", "assistant"]
    roles = [d["role"] for d in saved["display"]]
    assert roles == ["user", "tool", "assistant", "usage"]
    assert saved["usage"]["prompt_tokens"] > 0 and saved["turns"] == 1

    session, _ = open_session(st, continue_latest=True)
    assert session.id == agent.session.id
    server.add(text("second answer"))
    agent2 = make_agent(st, session=session)
    await collect(agent2, "second task")
    msgs = server.chat_requests[-1]["messages"]
    assert [m.get("content") for m in msgs if m["role"] == "user"] == ["first task", "second task"]
    resumed, _ = open_session(st, resume=session.id)
    assert resumed.turns == 2 and len(resumed.history) == 6


async def test_every_event_goes_to_the_transcript(tmp_path, scripted_server, model_settings):
    server = scripted_server([tool_calls([call("echo", {"text": "a"})]), text("done")])
    agent = make_agent(model_settings(tmp_path, server))
    events = await collect(agent, "go")
    lines = agent.log.read()
    assert [line["type"] for line in lines] == [e.kind for e in events]
    assert agent.log.path == tmp_path / ".helloagents" / "logs" / f"{agent.session.id}.jsonl"
