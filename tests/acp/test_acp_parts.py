"""The ACP adapter's pure parts: prompt blocks, MCP server lists, tool kinds, the plan."""

from __future__ import annotations

from pathlib import Path

from acp import embedded_text_resource, image_block, resource_block, resource_link_block, text_block
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from hello_tui.acp.mcp_servers import mcp_configs
from hello_tui.acp.permissions import client_offers_hunks
from hello_tui.acp.prompt_text import prompt_text
from hello_tui.acp.updates import plan_update, tool_kind, tool_locations, tool_title


def test_prompt_text_joins_text_and_attaches_context():
    blocks = [
        text_block("explain "),
        text_block("this file"),
        resource_block(embedded_text_resource("file:///r/a.py", "x = 1\n")),
        resource_link_block("b.py", "file:///r/b.py"),
        image_block("AAAA", "image/png"),
    ]
    said = prompt_text(blocks)
    assert said.startswith("explain this file\n\n")
    assert '<context uri="file:///r/a.py">\nx = 1\n\n</context>' in said
    assert "file:///r/b.py" in said
    assert "image was attached" in said


def test_mcp_servers_from_the_client_become_engine_configs():
    servers = [
        McpServerStdio(
            name="files",
            command="mcp-files",
            args=["--root", "."],
            env=[EnvVariable(name="A", value="1")],
        ),
        HttpMcpServer(
            type="http",
            name="web",
            url="http://127.0.0.1:9/mcp",
            headers=[HttpHeader(name="X", value="y")],
        ),
        SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[]),
    ]
    configs, refused = mcp_configs(servers)
    files, web = configs
    assert (files.name, files.transport, files.command, files.args, files.env) == (
        "files",
        "stdio",
        "mcp-files",
        ("--root", "."),
        {"A": "1"},
    )
    assert (web.name, web.transport, web.url, web.headers) == (
        "web",
        "http",
        "http://127.0.0.1:9/mcp",
        {"X": "y"},
    )
    # The editor's user configured them: they start unasked (their calls are still asked).
    assert {c.source for c in configs} == {"client"} and not files.needs_approval
    assert refused == ["old"]


def test_tool_kinds_titles_and_locations():
    assert [tool_kind(t) for t in ("read", "grep", "apply_patch", "terminal", "context_fetch")] == [
        "read",
        "search",
        "edit",
        "execute",
        "fetch",
    ]
    assert tool_kind("mcp__github__search") == "other"
    assert tool_title("terminal", {"command": "pytest -q\nmore"}) == "terminal pytest -q"
    [location] = tool_locations(Path("/r"), {"path": "src/a.py", "line": 3})
    assert (location.path, location.line) == ("/r/src/a.py", 3)
    assert tool_locations(Path("/r"), {"pattern": "x"}) == []


def test_the_todo_board_maps_to_plan_entries():
    update = plan_update(
        [
            {"id": "1", "title": "Read", "status": "completed"},
            {"id": "2", "title": "Write", "status": "in_progress"},
            {"id": "3", "title": "Test", "status": "odd"},
        ]
    )
    assert [(e.content, e.status) for e in update.entries] == [
        ("Read", "completed"),
        ("Write", "in_progress"),
        ("Test", "pending"),
    ]


def test_hunk_choices_need_the_exact_announcement():
    assert client_offers_hunks({"hello-tui": {"hunkChoices": True}})
    assert not client_offers_hunks({"hello-tui": {"hunkChoices": "yes"}})
    assert not client_offers_hunks({"other": {"hunkChoices": True}})
    assert not client_offers_hunks(None)
