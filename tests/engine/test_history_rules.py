"""The saved model history stays valid: repaired on load, tasks pinned by the cap, bounded."""

from __future__ import annotations

import json

from hello_tui.config import load_settings
from hello_tui.store.history import (
    HISTORY_ANSWER_CHARS,
    REPAIRED_RESULT,
    SUMMARY_PREFIX,
    repair_history,
    trim_history,
)
from hello_tui.store.sessions import SessionStore
from tests.engine.agent_kit import collect, open_engine, saved
from tests.support.scripted_model import call, text, tool_calls


def calls(*ids: str, arguments: str = "{}") -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "echo", "arguments": arguments}}
            for i in ids
        ],
    }


def result(call_id: str, content: str = "ok") -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def user(content: str) -> dict:
    return {"role": "user", "content": content}


def assert_well_formed(history: list[dict]) -> None:
    open_ids: list[str] = []
    for msg in history:
        if msg["role"] == "tool":
            assert msg["tool_call_id"] in open_ids, msg
            open_ids.remove(msg["tool_call_id"])
            continue
        assert not open_ids, f"unanswered calls {open_ids} before {msg}"
        for c in msg.get("tool_calls") or []:
            assert isinstance(json.loads(c["function"]["arguments"]), dict)
            open_ids.append(c["id"])
    assert not open_ids


def test_a_dangling_call_gets_a_cancelled_result_and_an_orphan_result_is_dropped():
    history = [
        user("task"),
        calls("a", "b"),
        result("a"),  # b never answered (the process died)
        user("next"),
        result("zz"),  # an orphan: its call is gone
        calls("c"),
        result("c"),
        result("c"),  # answered twice
        calls("d"),  # dangling at the very end
    ]
    repaired, changes = repair_history(history)
    assert_well_formed(repaired)
    assert changes == 4
    tool_msgs = [(m["tool_call_id"], m["content"]) for m in repaired if m["role"] == "tool"]
    assert tool_msgs == [("a", "ok"), ("b", REPAIRED_RESULT), ("c", "ok"), ("d", REPAIRED_RESULT)]
    assert repair_history(repaired) == (repaired, 0)


def test_invalid_arguments_in_a_saved_history_become_an_empty_object():
    history = [user("t"), calls("a", arguments='{"pat'), result("a", "Invalid JSON ...")]
    repaired, changes = repair_history(history)
    assert changes == 1
    assert repaired[1]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert repaired[2]["content"] == "Invalid JSON ..."  # the error the model read is kept


def test_loading_a_broken_session_repairs_it(tmp_path):
    settings = load_settings(tmp_path, base_url="http://127.0.0.1:9/v1", api_key="k", environ={})
    store = SessionStore(settings.state)
    session = store.new()
    session.history = [user("task"), calls("a"), result("orphan")]
    session.save()
    loaded = store.load(session.id)
    assert loaded.history == [user("task"), calls("a"), result("a", REPAIRED_RESULT)]


def test_the_cap_keeps_the_first_task_the_summary_and_the_newest_task():
    history = [user("FIRST")] + [user(f"q{i}") for i in range(10)]
    history += [user(SUMMARY_PREFIX + " earlier work"), user("NEWEST")]
    for i in range(60):
        history += [calls(f"c{i}"), result(f"c{i}")]
    kept = trim_history(history, 50)
    assert len(kept) <= 50
    contents = [m.get("content") for m in kept if m["role"] == "user"]
    assert contents == ["FIRST", SUMMARY_PREFIX + " earlier work", "NEWEST"]
    assert_well_formed(kept)
    assert kept[-1] == result("c59")


async def test_invalid_tool_arguments_are_stored_as_an_empty_object(
    tmp_path, scripted_server, model_settings
):
    bad = call("echo", '{"text": "unterminated')
    server = scripted_server([tool_calls([bad]), text("done")])
    engine = await open_engine(model_settings(tmp_path, server))
    await collect(engine, "echo something")
    history = saved(engine)["history"]
    (stored,) = [m for m in history if m.get("tool_calls")]
    assert stored["tool_calls"][0]["function"]["arguments"] == "{}"
    (answer,) = [m for m in history if m["role"] == "tool"]
    assert "Invalid JSON" in answer["content"]
    # Neither the next request nor any later one replays the broken text.
    last = json.dumps(server.chat_requests[-1]["messages"])
    assert '\\"text\\": \\"unterminated"' not in last
    assert '"arguments": "{}"' in last
    await engine.aclose()


async def test_a_huge_answer_is_kept_whole_once(tmp_path, scripted_server, model_settings):
    huge = "word " * 20000
    server = scripted_server([text(huge, chunk_size=4000)])
    engine = await open_engine(model_settings(tmp_path, server))
    await collect(engine, "write a lot")
    data = saved(engine)
    (answer,) = [m for m in data["history"] if m["role"] == "assistant"]
    assert len(answer["content"]) <= HISTORY_ANSWER_CHARS + 100
    assert "characters omitted" in answer["content"]
    shown = [e for e in data["display"] if e.get("role") == "assistant"]
    assert shown and shown[-1]["text"].strip() == huge.strip()
    await engine.aclose()
