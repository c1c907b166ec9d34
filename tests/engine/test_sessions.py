"""Sessions on disk: atomic saves, history limits, resume, corrupt files, the transcript."""

from __future__ import annotations

import json

import pytest

from hello_tui.config import load_settings
from hello_tui.core.display import ChatMessage
from hello_tui.store.sessions import (
    HISTORY_LIMIT,
    SessionCorrupt,
    SessionNotFound,
    SessionStore,
    open_session,
    trim_history,
)
from tests.engine.agent_kit import collect, open_engine, saved, session_file, transcript
from tests.support.scripted_model import call, text, tool_calls


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
    b.display.append(ChatMessage("user", "second"))
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
    session, notices = open_session(st.state, continue_latest=True)
    assert session.id != s2.id and session.history == []
    assert "unreadable" in notices[0]


async def test_turns_are_saved_and_resumed(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [tool_calls([call("echo", {"text": "a"}, id="c1")]), text("first answer")]
    )
    st = model_settings(tmp_path, server)
    engine = await open_engine(st)
    await collect(engine, "first task")
    data = saved(engine)
    assert [m["role"] for m in data["history"]] == ["user", "assistant", "tool", "assistant"]
    kinds = [(d["type"], d.get("role")) for d in data["display"]]
    assert kinds == [("message", "user"), ("tool", None), ("message", "assistant")]
    assert data["usage"]["prompt_tokens"] > 0 and data["turns"] == 1
    assert data["title"] == "first task" and data["model"] == "scripted-model"

    server.add(text("second answer"))
    engine2 = await open_engine(st, continue_latest=True)
    assert engine2.session_id == engine.session_id
    assert engine2.display() == engine.display()
    await collect(engine2, "second task")
    msgs = server.chat_requests[-1]["messages"]
    assert [m.get("content") for m in msgs if m["role"] == "user"] == ["first task", "second task"]
    resumed, _ = open_session(st.state, resume=engine.session_id)
    assert resumed.turns == 2 and len(resumed.history) == 6


async def test_every_event_goes_to_the_transcript(tmp_path, scripted_server, model_settings):
    server = scripted_server([tool_calls([call("echo", {"text": "a"})]), text("done")])
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "go")
    lines = transcript(engine)
    assert [line["type"] for line in lines] == [e.kind for e in events]
    assert session_file(engine).parent == tmp_path / ".helloagents" / "sessions"


async def test_the_session_list_names_each_session_by_its_first_prompt(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("one"), text("two"), text("three")])
    st = model_settings(tmp_path, server)
    engine = await open_engine(st)
    await collect(engine, "explain  the\nbuild")
    await collect(engine, "and the tests")
    await engine.new_session()
    await collect(engine, "a new question")
    infos = await engine.sessions()
    assert [(i.title, i.turns, i.model) for i in infos] == [
        ("a new question", 1, "scripted-model"),
        ("explain the build", 2, "scripted-model"),
    ]
    await engine.load_session(infos[1].id)
    assert engine.session_id == infos[1].id
    assert [e.text for e in engine.display() if isinstance(e, ChatMessage)][:2] == [
        "explain  the\nbuild",
        "one",
    ]
    with pytest.raises(SessionNotFound):
        await engine.load_session("no-such-session")


def test_sessions_saved_in_the_older_form_still_load(tmp_path):
    st = settings(tmp_path)
    store = SessionStore(st.state)
    path = store.dir / "20240101-000000-abcdef.json"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "session_id": "20240101-000000-abcdef",
                "turns": 1,
                "display": [
                    {"role": "user", "content": "old question", "turn": 1},
                    {
                        "role": "tool",
                        "tool": "read",
                        "arguments": {"path": "a"},
                        "status": "success",
                        "summary": "x = 1",
                        "step": 1,
                    },
                    {"role": "assistant", "content": "old answer", "turn": 1},
                    {"role": "notice", "content": "cancelled by the user", "turn": 1},
                    {"role": "usage", "turn": 1, "prompt_tokens": 3},
                ],
                "history": [{"role": "user", "content": "old question"}],
                "todos": [{"id": "1", "title": "ignored now", "status": "pending"}],
            }
        )
    )
    session = store.load("20240101-000000-abcdef")
    roles = [getattr(e, "role", "tool") for e in session.display]
    assert roles == ["user", "tool", "assistant", "notice"]
    assert session.display[1].output == "x = 1" and session.display[3].text == "Turn cancelled."
    assert [i.title for i in store.infos()] == ["old question"]
