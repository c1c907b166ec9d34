"""Per-hunk choices: offered only to a client that announces them, and written exactly as chosen.

The client here is the SDK's low-level JSON-RPC connection: the `_`-prefixed
option kinds are an extension the SDK's typed client side does not list.
"""

from __future__ import annotations

import asyncio
import os

import pytest
from acp import spawn_stdio_connection

from tests.acp.acp_kit import GUARD, agent_command
from tests.support.scripted_model import call, text, tool_calls
from tests.support.warm_python import warm_python

BEFORE = "".join(f"line {i}\n" for i in range(1, 21))
PATCH = (
    "*** Begin Patch\n*** Update File: f.txt\n"
    "@@\n line 2\n-line 3\n+LINE THREE\n line 4\n"
    "@@\n line 17\n-line 18\n+LINE EIGHTEEN\n line 19\n"
    "*** End Patch\n"
)


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    (path / "f.txt").write_text(BEFORE)
    return path


async def run_session(repo, server, *, announce: bool, choose) -> list[dict]:
    asked: list[dict] = []

    async def handler(method, params, is_notification):
        if method == "session/request_permission":
            asked.append(params)
            return {"outcome": choose(params)}
        return None

    async with spawn_stdio_connection(
        handler, *warm_python(), *agent_command(repo, server), env=dict(os.environ)
    ) as (conn, _process):
        capabilities = {"_meta": {"hello-tui": {"hunkChoices": True}}} if announce else {}
        await asyncio.wait_for(
            conn.send_request(
                "initialize", {"protocolVersion": 1, "clientCapabilities": capabilities}
            ),
            GUARD,
        )
        new = await asyncio.wait_for(
            conn.send_request("session/new", {"cwd": str(repo), "mcpServers": []}), GUARD
        )
        await asyncio.wait_for(
            conn.send_request(
                "session/prompt",
                {
                    "sessionId": new["sessionId"],
                    "prompt": [{"type": "text", "text": "shout two lines"}],
                },
            ),
            GUARD,
        )
    return asked


def option(params: dict, option_id: str) -> dict:
    [found] = [o for o in params["options"] if o["optionId"] == option_id]
    return found


async def test_one_hunk_of_two_is_written_when_the_client_chooses_it(repo, scripted_server):
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("ok")])

    def choose(params):
        hunks = option(params, "hunks")["_meta"]["hello-tui"]["hunks"]
        second = [h["index"] for h in hunks if h["path"] == "f.txt"][1]
        return {
            "outcome": "selected",
            "optionId": "hunks",
            "_meta": {"hello-tui": {"hunks": {"f.txt": [second]}}},
        }

    [params] = await run_session(repo, server, announce=True, choose=choose)
    assert option(params, "hunks")["kind"] == "_select_hunks"
    hunks = option(params, "hunks")["_meta"]["hello-tui"]["hunks"]
    assert [(h["path"], h["added"], h["removed"]) for h in hunks] == [
        ("f.txt", 1, 1),
        ("f.txt", 1, 1),
    ]
    assert (repo / "f.txt").read_text() == BEFORE.replace("line 18\n", "LINE EIGHTEEN\n")
    told = server.chat_requests[-1]["messages"][-1]["content"]
    assert "declined" in told.lower()


async def test_choosing_no_hunk_writes_nothing(repo, scripted_server):
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("ok")])

    def choose(params):
        return {
            "outcome": "selected",
            "optionId": "hunks",
            "_meta": {"hello-tui": {"hunks": {"f.txt": [], "elsewhere.txt": [0]}}},
        }

    await run_session(repo, server, announce=True, choose=choose)
    assert (repo / "f.txt").read_text() == BEFORE


async def test_a_client_that_does_not_announce_them_sees_only_the_spec_kinds(repo, scripted_server):
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("ok")])

    def choose(params):
        return {"outcome": "selected", "optionId": "allow"}

    [params] = await run_session(repo, server, announce=False, choose=choose)
    assert [o["kind"] for o in params["options"]] == ["allow_once", "allow_always", "reject_once"]
    assert params["toolCall"]["content"][0]["type"] == "diff"
    assert (repo / "f.txt").read_text() == BEFORE.replace("line 3\n", "LINE THREE\n").replace(
        "line 18\n", "LINE EIGHTEEN\n"
    )
