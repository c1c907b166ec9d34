"""The ACP approver's MCP questions: a tool call and a repository's server start.

The engine asks these through `approve_tool_call` / `approve_server`; here the
approver is driven directly and its question recorded, as the client would get it.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from hello_tui.acp.permissions import AcpApprover
from hello_tui.core.approval import ServerStartRequest
from hello_tui.core.events import ToolCallFinished, ToolCallStarted
from hello_tui.core.modes import ModeApprover


def approver_answering(outcome):
    asked: list = []
    notified: list = []

    async def request(session_id, tool_call, options):
        asked.append((tool_call, options))
        return RequestPermissionResponse(outcome=outcome)

    async def notify(update):
        notified.append(update)

    approver = AcpApprover(request, "s", Path("/r"), notify=notify)
    return approver, asked, notified


def chose(option_id):
    return AllowedOutcome(outcome="selected", option_id=option_id)


TOOL_CALL = SimpleNamespace(
    server="github", tool="search", arguments={"q": "x"}, description="Search issues."
)
SERVER = ServerStartRequest(
    server="files",
    origin=".mcp.json",
    summary="mcp-files --root .",
    env_names=("TOKEN",),
    header_names=("Authorization",),
)


async def test_an_mcp_tool_call_asks_on_its_own_tool_call():
    approver, asked, _ = approver_answering(chose("allow_always"))
    await approver.observe(ToolCallStarted(1, "call_m", "mcp__github__search", {"q": "x"}))
    assert await approver.approve_tool_call(TOOL_CALL) == "session"
    [(tool_call, options)] = asked
    assert tool_call.tool_call_id == "call_m" and tool_call.title == "github: search"
    assert tool_call.raw_input == {"q": "x"}
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]


async def test_the_arguments_are_shown_in_the_content_not_only_in_raw_input():
    approver, asked, _ = approver_answering(chose("allow"))
    await approver.observe(ToolCallStarted(1, "c", "mcp__files__write_file", {}))
    request = SimpleNamespace(
        server="files",
        tool="write_file",
        arguments={"path": "notes/a.md", "content": "# Title\n```\nrm -rf /\n```\n", "mode": 420},
        description="",
    )
    assert await approver.approve_tool_call(request) == "once"
    [(tool_call, _)] = asked
    shown = "\n".join(c.content.text for c in tool_call.content)
    assert "path:\n```\nnotes/a.md\n```" in shown
    # The content's own fence cannot end the block: it is fenced with a longer run.
    assert "content:\n````\n# Title\n```\nrm -rf /\n```\n````" in shown
    assert "mode:\n```\n420\n```" in shown
    huge = SimpleNamespace(server="s", tool="t", arguments={"text": "z" * 30_000}, description="")
    await approver.observe(ToolCallStarted(1, "d", "mcp__s__t", {}))
    await approver.approve_tool_call(huge)
    text = asked[-1][0].content[-1].content.text
    assert "10000 more characters not shown" in text and len(text) < 21_000


async def test_mcp_tool_verdicts():
    for option_id, verdict in (("allow", "once"), ("reject", "deny")):
        approver, _, _ = approver_answering(chose(option_id))
        await approver.observe(ToolCallStarted(1, "c", "mcp__github__search", {}))
        assert await approver.approve_tool_call(TOOL_CALL) == verdict
    approver, _, _ = approver_answering(DeniedOutcome(outcome="cancelled"))
    await approver.observe(ToolCallStarted(1, "c", "mcp__github__search", {}))
    assert await approver.approve_tool_call(TOOL_CALL) == "deny"


async def test_read_only_denies_mcp_calls_unasked():
    approver, asked, _ = approver_answering(chose("allow"))
    # As the engine does: the session's mode answers before the client is asked.
    guarded = ModeApprover(approver, lambda: "read-only")
    await approver.observe(ToolCallStarted(1, "c", "mcp__github__search", {}))
    assert await guarded.approve_tool_call(TOOL_CALL) == "deny"
    assert asked == []


async def test_a_repo_server_start_is_shown_then_asked():
    approver, asked, notified = approver_answering(chose("allow_always"))
    assert await approver.approve_server(SERVER) == "always"
    start, end = notified
    [(tool_call, options)] = asked
    assert start.session_update == "tool_call" and start.kind == "execute"
    assert start.tool_call_id == tool_call.tool_call_id == end.tool_call_id
    assert "mcp-files --root ." in start.content[0].content.text
    assert "TOKEN" in start.content[0].content.text
    assert "Authorization" in start.content[0].content.text
    assert end.status == "completed"
    assert [o.option_id for o in options] == ["allow", "allow_always", "reject"]


async def test_a_refused_server_start_is_marked_failed():
    approver, _, notified = approver_answering(chose("reject"))
    assert await approver.approve_server(SERVER) == "deny"
    assert notified[-1].status == "failed"
    approver, _, _ = approver_answering(chose("allow"))
    assert await approver.approve_server(SERVER) == "once"


async def test_a_call_that_finished_unasked_is_not_the_one_asking():
    approver, asked, _ = approver_answering(chose("allow"))
    await approver.observe(ToolCallStarted(1, "call_old", "mcp__github__search", {}))
    await approver.observe(
        ToolCallFinished(1, "call_old", "mcp__github__search", "success", "ok", "ok", 0.1)
    )
    await approver.observe(ToolCallStarted(2, "call_new", "mcp__github__search", {}))
    assert await approver.approve_tool_call(TOOL_CALL) == "once"
    assert asked[0][0].tool_call_id == "call_new"
