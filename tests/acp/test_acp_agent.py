"""`hello-tui acp` driven by the ACP SDK's client over real stdio, against the scripted model."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.acp.acp_kit import (
    RecordingClient,
    acp_agent,
    always,
    cancelled,
    chose,
    new_session,
    prompt,
    within,
)
from tests.support.scripted_model import call, slow, text, tool_calls


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    return path


def patch_update(path: str, old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"


async def test_a_prompt_streams_its_answer_back(repo, scripted_server):
    server = scripted_server([text("The answer is forty-two.", chunk_size=4)])
    client = RecordingClient()
    async with acp_agent(repo, server, client) as conn:
        session_id = await new_session(conn, repo)
        response = await prompt(conn, session_id, "what is the answer?")
    assert response.stop_reason == "end_turn"
    chunks = client.of("agent_message_chunk")
    assert len(chunks) > 1  # streamed, not sent whole at the end
    assert client.message() == "The answer is forty-two."
    users = [m["content"] for m in server.chat_requests[-1]["messages"] if m["role"] == "user"]
    assert users == ["what is the answer?"]


async def test_a_tool_call_is_shown_with_its_kind_status_locations_and_output(
    repo, scripted_server
):
    (repo / "a.py").write_text("x = 1\n")
    server = scripted_server(
        [tool_calls([call("read", {"path": "a.py"}, id="call_read")]), text("It sets x.")]
    )
    client = RecordingClient()
    async with acp_agent(repo, server, client) as conn:
        session_id = await new_session(conn, repo)
        await prompt(conn, session_id, "what does a.py do?")
    started = client.of("tool_call")
    assert [(s.tool_call_id, s.kind, s.status) for s in started] == [
        ("call_read", "read", "in_progress")
    ]
    assert started[0].locations[0].path == str((repo / "a.py").resolve())
    finished = [u for u in client.of("tool_call_update") if u.status is not None]
    assert finished[-1].tool_call_id == "call_read" and finished[-1].status == "completed"
    assert "x = 1" in finished[-1].content[0].content.text
    # the call comes before the answer, which still streams
    kinds = [u.session_update for u in client.updates]
    assert kinds.index("tool_call") < kinds.index("agent_message_chunk")
    assert client.message() == "It sets x."


async def test_an_allowed_patch_is_written_backed_up_and_noted(repo, scripted_server):
    (repo / "hello.txt").write_text("hello\n")
    patch = patch_update("hello.txt", "hello", "goodbye")
    server = scripted_server(
        [tool_calls([call("apply_patch", {"patch": patch}, id="call_p")]), text("Changed it.")]
    )
    client = RecordingClient(answer=always("allow"))
    async with acp_agent(repo, server, client) as conn:
        session_id = await new_session(conn, repo)
        response = await prompt(conn, session_id, "say goodbye")
    assert response.stop_reason == "end_turn"
    [(tool_call, options)] = client.asked
    assert tool_call.tool_call_id == "call_p" and tool_call.kind == "edit"
    [diff] = [c for c in tool_call.content if c.type == "diff"]
    assert diff.path == str(repo / "hello.txt")
    assert (diff.old_text, diff.new_text) == ("hello\n", "goodbye\n")
    kinds = {o.option_id: o.kind for o in options}
    assert kinds == {"allow": "allow_once", "allow_always": "allow_always", "reject": "reject_once"}
    assert (repo / "hello.txt").read_text() == "goodbye\n"
    backups = list((repo / ".helloagents" / "backups").rglob("hello.txt.bak"))
    assert [b.read_text() for b in backups] == ["hello\n"]
    notes = [p.read_text() for p in (repo / ".helloagents" / "notes").glob("note_*.md")]
    assert any("hello.txt" in n for n in notes)
    # what the model was told, and what the client was shown of the result
    assert "applied" in server.chat_requests[-1]["messages"][-1]["content"].lower()
    done = [u for u in client.of("tool_call_update") if u.status == "completed"]
    assert done and done[-1].tool_call_id == "call_p"
    titled = [u.title for u in client.of("tool_call_update") if u.title]
    assert titled == ["Edit hello.txt"]


async def test_a_rejected_patch_writes_nothing(repo, scripted_server):
    (repo / "hello.txt").write_text("hello\n")
    patch = patch_update("hello.txt", "hello", "goodbye")
    add = "*** Begin Patch\n*** Add File: new.txt\n+created\n*** End Patch\n"
    server = scripted_server(
        [
            tool_calls([call("apply_patch", {"patch": patch})]),
            tool_calls([call("apply_patch", {"patch": add})]),
            text("Left it."),
        ]
    )
    client = RecordingClient(answer=always("reject"))
    async with acp_agent(repo, server, client) as conn:
        session_id = await new_session(conn, repo)
        await prompt(conn, session_id, "say goodbye")
    assert len(client.asked) == 2
    assert (repo / "hello.txt").read_text() == "hello\n"
    assert not (repo / "new.txt").exists()
    assert not (repo / ".helloagents" / "backups").exists() or not list(
        (repo / ".helloagents" / "backups").rglob("*.bak")
    )
    told = server.chat_requests[-1]["messages"][-1]["content"]
    assert "rejected" in told
    [add_diff] = [c for c in client.asked[1][0].content if c.type == "diff"]
    assert add_diff.old_text is None and add_diff.new_text == "created\n"


async def test_allow_always_writes_later_patches_of_the_session_unasked(repo, scripted_server):
    add_one = "*** Begin Patch\n*** Add File: one.txt\n+1\n*** End Patch\n"
    add_two = "*** Begin Patch\n*** Add File: two.txt\n+2\n*** End Patch\n"
    server = scripted_server(
        [
            tool_calls([call("apply_patch", {"patch": add_one})]),
            tool_calls([call("apply_patch", {"patch": add_two})]),
            text("Both."),
        ]
    )
    client = RecordingClient(answer=always("allow_always"))
    async with acp_agent(repo, server, client) as conn:
        session_id = await new_session(conn, repo)
        await prompt(conn, session_id, "make two files")
    assert len(client.asked) == 1
    assert (repo / "one.txt").read_text() == "1\n" and (repo / "two.txt").read_text() == "2\n"


async def test_a_command_asks_the_same_way(repo, scripted_server):
    server = scripted_server(
        [
            tool_calls([call("terminal", {"command": "touch made.txt"}, id="call_t")]),
            text("Made."),
        ]
    )
    client = RecordingClient(answer=always("allow"))
    async with acp_agent(repo, server, client) as conn:
        session_id = await new_session(conn, repo)
        await prompt(conn, session_id, "make a file")
    [(tool_call, options)] = client.asked
    assert tool_call.tool_call_id == "call_t" and tool_call.kind == "execute"
    assert "touch made.txt" in tool_call.title
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
    assert (repo / "made.txt").exists()
    [started] = client.of("tool_call")
    assert started.kind == "execute"


async def test_cancel_mid_turn_answers_cancelled(repo, scripted_server):
    server = scripted_server([slow("word " * 400, delay=0.02), text("after")])
    client = RecordingClient()
    async with acp_agent(repo, server, client) as conn:
        session_id = await new_session(conn, repo)
        turn = asyncio.create_task(prompt(conn, session_id, "talk for a long time"))
        await within(client.update_arrived.wait())
        await conn.cancel(session_id=session_id)
        response = await within(turn)
        assert response.stop_reason == "cancelled"
        said = client.message()
        assert said and ("word " * 400).startswith(said)
        assert len(said) < len("word " * 400)
        # the session goes on
        again = await prompt(conn, session_id, "and now?")
    assert again.stop_reason == "end_turn"
    assert client.message() == said + "after"


async def test_cancel_while_a_permission_is_pending_writes_nothing(repo, scripted_server):
    add = "*** Begin Patch\n*** Add File: new.txt\n+created\n*** End Patch\n"
    server = scripted_server([tool_calls([call("apply_patch", {"patch": add})]), text("unused")])
    answered = asyncio.Event()

    async def answer(tool_call, options):
        # as the spec asks of a client: a cancelled turn answers its pending request cancelled
        await answered.wait()
        return cancelled()

    client = RecordingClient(answer=answer)
    async with acp_agent(repo, server, client) as conn:
        session_id = await new_session(conn, repo)
        turn = asyncio.create_task(prompt(conn, session_id, "create new.txt"))
        await within(client.permission_asked.wait())
        await conn.cancel(session_id=session_id)
        answered.set()
        response = await within(turn)
    assert response.stop_reason == "cancelled"
    assert not (repo / "new.txt").exists()


async def test_a_cancelled_permission_outcome_declines(repo, scripted_server):
    add = "*** Begin Patch\n*** Add File: new.txt\n+created\n*** End Patch\n"
    server = scripted_server([tool_calls([call("apply_patch", {"patch": add})]), text("ok")])

    async def answer(tool_call, options):
        return cancelled()

    client = RecordingClient(answer=answer)
    async with acp_agent(repo, server, client) as conn:
        session_id = await new_session(conn, repo)
        await prompt(conn, session_id, "create new.txt")
    assert not (repo / "new.txt").exists()
    assert "cancelled" in server.chat_requests[-1]["messages"][-1]["content"]


async def test_load_replays_a_saved_session_and_continues_it(repo, scripted_server):
    (repo / "a.py").write_text("x = 1\n")
    server = scripted_server(
        [
            tool_calls([call("read", {"path": "a.py"}, id="call_r")]),
            text("It sets x."),
            text("Still x."),
        ]
    )
    first = RecordingClient()
    async with acp_agent(repo, server, first) as conn:
        session_id = await new_session(conn, repo)
        await prompt(conn, session_id, "what does a.py do?")
    later = RecordingClient()
    async with acp_agent(repo, server, later) as conn:
        await within(conn.load_session(cwd=str(repo), session_id=session_id, mcp_servers=[]))
        replayed = list(later.updates)
        response = await prompt(conn, session_id, "and now?")
    kinds = [u.session_update for u in replayed]
    assert kinds == ["user_message_chunk", "tool_call", "agent_message_chunk"]
    assert replayed[0].content.text == "what does a.py do?"
    assert replayed[1].tool_call_id == "call_r" and replayed[1].status == "completed"
    assert replayed[1].kind == "read"
    assert replayed[2].content.text == "It sets x."
    assert response.stop_reason == "end_turn"
    users = [m["content"] for m in server.chat_requests[-1]["messages"] if m["role"] == "user"]
    assert users == ["what does a.py do?", "and now?"]


async def test_loading_an_unknown_session_is_an_error(repo, scripted_server):
    from acp import RequestError

    client = RecordingClient()
    async with acp_agent(repo, server := scripted_server([]), client) as conn:
        with pytest.raises(RequestError) as raised:
            await within(conn.load_session(cwd=str(repo), session_id="nope", mcp_servers=[]))
    assert "nope" in str(raised.value) or "nope" in json.dumps(raised.value.data)
    assert server.chat_requests == []


async def test_the_todo_board_is_sent_as_a_plan(repo, scripted_server):
    server = scripted_server(
        [
            tool_calls([call("todo", {"action": "add", "title": "Write the tests"})], content=""),
            text("Planned."),
        ]
    )
    client = RecordingClient()
    async with acp_agent(repo, server, client) as conn:
        session_id = await new_session(conn, repo)
        await prompt(conn, session_id, "plan it")
    plans = client.of("plan")
    assert plans, [u.session_update for u in client.updates]
    assert [(e.content, e.status) for e in plans[-1].entries] == [("Write the tests", "pending")]


async def test_an_mcp_server_from_the_client_is_used_and_each_call_is_asked(repo, scripted_server):
    from acp.schema import McpServerStdio, SseMcpServer

    from tests.mcp.conftest import stdio_definition

    demo = stdio_definition()
    server = scripted_server(
        [tool_calls([call("mcp__demo__add", {"a": 2, "b": 3})]), text("It is 5.")]
    )
    client = RecordingClient(answer=always("allow"))
    async with acp_agent(repo, server, client) as conn:
        new = await within(
            conn.new_session(
                cwd=str(repo),
                mcp_servers=[
                    McpServerStdio(name="demo", command=demo["command"], args=demo["args"], env=[]),
                    SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[]),
                ],
            )
        )
        await prompt(conn, new.session_id, "add 2 and 3")
    assert "mcp__demo__add" in [t["function"]["name"] for t in server.chat_requests[0]["tools"]]
    [(asked, options)] = client.asked
    started = [u for u in client.of("tool_call") if u.tool_call_id == asked.tool_call_id]
    assert started and asked.title == "demo: add" and asked.raw_input == {"a": 2, "b": 3}
    assert [o.option_id for o in options] == ["allow", "allow_always", "reject"]
    tool_messages = [m for m in server.chat_requests[1]["messages"] if m["role"] == "tool"]
    assert tool_messages[-1]["content"] == "5"
    said = client.message()
    assert "SSE" in said and "old" in said and said.endswith("It is 5.")


async def test_a_repo_mcp_server_starts_only_when_the_client_allows_it(repo, scripted_server):
    from tests.mcp.conftest import stdio_definition

    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": stdio_definition()}}))
    server = scripted_server([text("no tools"), text("tools now")])
    answers = iter(["reject", "allow"])

    async def answer(tool_call, options):
        return chose(next(answers))

    client = RecordingClient(answer=answer)
    async with acp_agent(repo, server, client) as conn:
        refused = await within(conn.new_session(cwd=str(repo), mcp_servers=[]))
        await prompt(conn, refused.session_id, "first")
        allowed = await within(conn.new_session(cwd=str(repo), mcp_servers=[]))
        await prompt(conn, allowed.session_id, "second")
    first = [t["function"]["name"] for t in server.chat_requests[0].get("tools", [])]
    assert not [n for n in first if n.startswith("mcp__")]
    second = [t["function"]["name"] for t in server.chat_requests[1].get("tools", [])]
    assert "mcp__demo__add" in second
    asked_ids = [t.tool_call_id for t, _ in client.asked]
    assert len(asked_ids) == 2 and all("demo" in i for i in asked_ids)
    # Each question is on a tool call hello-tui announced first, and that call is closed after.
    announced = {u.tool_call_id for u in client.of("tool_call")}
    assert set(asked_ids) <= announced
    closed = {(u.tool_call_id, u.status) for u in client.of("tool_call_update")}
    assert (asked_ids[0], "failed") in closed and (asked_ids[1], "completed") in closed


async def test_modes_are_offered_and_hold(repo, scripted_server):
    add = "*** Begin Patch\n*** Add File: new.txt\n+created\n*** End Patch\n"
    server = scripted_server(
        [
            tool_calls([call("apply_patch", {"patch": add})]),
            text("could not"),
            tool_calls([call("apply_patch", {"patch": add})]),
            text("made it"),
        ]
    )
    client = RecordingClient(answer=always("allow"))
    async with acp_agent(repo, server, client) as conn:
        new = await within(conn.new_session(cwd=str(repo), mcp_servers=[]))
        assert new.modes.current_mode_id == "ask"
        assert [m.id for m in new.modes.available_modes] == ["ask", "auto-edit", "read-only"]
        await within(conn.set_session_mode(session_id=new.session_id, mode_id="read-only"))
        await prompt(conn, new.session_id, "create new.txt")
        assert not (repo / "new.txt").exists()
        assert "read-only" in server.chat_requests[-1]["messages"][-1]["content"]
        await within(conn.set_session_mode(session_id=new.session_id, mode_id="auto-edit"))
        await prompt(conn, new.session_id, "create new.txt now")
    assert (repo / "new.txt").read_text() == "created\n"
    assert client.asked == []  # neither mode asks: one refuses, the other writes
