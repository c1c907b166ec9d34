"""Reading MCP server definitions, naming their tools, trimming their schemas, remembering
approvals."""

from __future__ import annotations

import json
import re

import pytest

from hello_tui.mcp.approvals import ApprovalMemory, user_state_dir
from hello_tui.mcp.budget import Offer, estimate_tokens, trim
from hello_tui.mcp.config import (
    McpConfigError,
    McpServerConfig,
    configured_servers,
    expand,
    expanded,
    repo_servers,
    user_config_path,
    user_servers,
)
from hello_tui.mcp.names import function_name
from tests.mcp.conftest import write_mcp_json, write_user_config

FUNCTION_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_claude_code_format_stdio_and_http(tmp_path):
    write_mcp_json(
        tmp_path,
        {
            "files": {"command": "npx", "args": ["-y", "srv", "."], "env": {"A": "1"}},
            "typed": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]},
            "web": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-K": "v"}},
            "web2": {"type": "streamable-http", "url": "http://127.0.0.1:9/mcp"},
            "camel": {"type": "streamableHttp", "url": "http://127.0.0.1:9/mcp"},
        },
    )
    servers, notices = repo_servers(tmp_path)
    assert notices == []
    by_name = {s.name: s for s in servers}
    assert by_name["files"].transport == "stdio" and by_name["files"].args == ("-y", "srv", ".")
    assert by_name["files"].env == {"A": "1"} and by_name["files"].needs_approval
    assert by_name["typed"].command == "uvx"
    assert by_name["web"].transport == "http" and by_name["web"].headers == {"X-K": "v"}
    assert by_name["web2"].transport == "http" and by_name["camel"].transport == "http"
    assert {s.source for s in servers} == {"repo"}


@pytest.mark.parametrize(
    ("definition", "says"),
    [
        ({"type": "sse", "url": "http://x/sse"}, "unknown type 'sse'"),
        ({"type": "websocket", "url": "ws://x"}, "unknown type 'websocket'"),
        ({"args": ["x"]}, "needs a command"),
        ({"type": "http"}, "needs a url"),
        ({"command": "x", "args": "not a list"}, "args must be a list"),
        ({"command": "x", "env": {"A": 1}}, "env must map names to strings"),
        ({"command": "x", "timeout": -1}, "timeout must be a positive number"),
        ("just a string", "not an object"),
    ],
)
def test_unusable_definitions_are_refused_with_a_notice(tmp_path, definition, says):
    write_mcp_json(tmp_path, {"bad": definition, "good": {"command": "ok"}})
    servers, notices = repo_servers(tmp_path)
    assert [s.name for s in servers] == ["good"]
    [notice] = notices
    assert "'bad'" in notice and says in notice


def test_a_broken_mcp_json_is_a_notice(tmp_path):
    (tmp_path / ".mcp.json").write_text("{not json")
    servers, notices = repo_servers(tmp_path)
    assert servers == [] and "not valid JSON" in notices[0]
    assert repo_servers(tmp_path / "absent") == ([], [])


def test_user_config_tables_and_the_repo_cannot_take_their_names(tmp_path):
    path = write_user_config(
        '[mcp_servers.time]\ncommand = "uvx"\nargs = ["mcp-server-time"]\n'
        '[mcp_servers.web]\ntype = "http"\nurl = "http://127.0.0.1:1/mcp"\ntimeout = 5\n'
    )
    assert user_config_path() == path
    users, notices = user_servers()
    assert notices == [] and [s.name for s in users] == ["time", "web"]
    assert users[1].timeout == 5.0 and not users[0].needs_approval
    write_mcp_json(tmp_path, {"time": {"command": "evil"}, "extra": {"command": "x"}})
    servers, notices = configured_servers(tmp_path)
    assert [(s.name, s.source) for s in servers] == [
        ("time", "user"),
        ("web", "user"),
        ("extra", "repo"),
    ]
    assert servers[0].command == "uvx" and "yours is used" in notices[0]


def test_user_config_path_follows_xdg_and_home():
    assert str(user_config_path({"XDG_CONFIG_HOME": "/c"})) == "/c/hello-tui/config.toml"
    assert str(user_config_path({"HOME": "/h"})) == "/h/.config/hello-tui/config.toml"
    assert str(user_state_dir({"XDG_STATE_HOME": "/s"})) == "/s/hello-tui"
    assert str(user_state_dir({"HOME": "/h"})) == "/h/.local/state/hello-tui"


def test_variables_expand_like_the_shell():
    env = {"TOKEN": "t0k", "EMPTY": ""}
    assert expand("Bearer ${TOKEN}", env) == "Bearer t0k"
    assert expand("${MISSING:-fallback}/x", env) == "fallback/x"
    assert expand("${EMPTY:-fallback}", env) == "fallback"
    assert expand("${EMPTY}", env) == ""
    assert expand("$TOKEN and ${TOKEN", env) == "$TOKEN and ${TOKEN"
    with pytest.raises(McpConfigError, match="MISSING is not set"):
        expand("${MISSING}", env)
    config = McpServerConfig(
        name="s", command="${TOKEN}", args=("${TOKEN}",), env={"K": "${TOKEN}"}
    )
    done = expanded(config, env)
    assert (done.command, done.args, done.env) == ("t0k", ("t0k",), {"K": "t0k"})
    with pytest.raises(McpConfigError, match="MCP server 's'"):
        expanded(McpServerConfig(name="s", command="${NOPE}"), env)


def test_the_fingerprint_covers_what_runs_but_not_where_it_was_read():
    base = McpServerConfig(name="s", command="c", args=("a",), env={"K": "v"})
    same = McpServerConfig(name="s", command="c", args=("a",), env={"K": "v"}, origin="x")
    assert base.fingerprint() == same.fingerprint()
    for changed in (
        McpServerConfig(name="s", command="c2", args=("a",), env={"K": "v"}),
        McpServerConfig(name="s", command="c", args=("b",), env={"K": "v"}),
        McpServerConfig(name="s", command="c", args=("a",), env={"K": "w"}),
        McpServerConfig(name="s", command="c", args=("a",), env={"K": "v"}, cwd="sub"),
    ):
        assert changed.fingerprint() != base.fingerprint()
    http = McpServerConfig(name="h", transport="http", url="http://a")
    assert McpServerConfig(name="h", transport="http", url="http://b").fingerprint() != (
        http.fingerprint()
    )


def test_function_names_follow_the_rules_and_stay_unique():
    taken: set[str] = set()
    assert function_name("time", "get_current_time", taken) == "mcp__time__get_current_time"
    odd = function_name("my server.v2", "read/file", taken)
    assert odd == "mcp__my_server_v2__read_file" and FUNCTION_NAME.match(odd)
    clash = function_name("my server.v2", "read.file", taken)
    assert clash != odd and FUNCTION_NAME.match(clash)
    long = function_name("s" * 40, "t" * 40, taken)
    assert len(long) == 64 and FUNCTION_NAME.match(long)
    assert long == function_name("s" * 40, "t" * 40, set())  # stable across sessions
    assert function_name("s" * 40, "t" * 39 + "u", set()) != long
    assert FUNCTION_NAME.match(function_name("ünï", "çödé", set()))


def _offer(server: str, index: int, description_size: int = 100) -> Offer:
    schema = {
        "type": "function",
        "function": {
            "name": f"mcp__{server}__t{index}",
            "description": "d" * description_size,
            "parameters": {"type": "object", "properties": {"x": {"description": "p" * 400}}},
        },
    }
    return Offer(server, f"mcp__{server}__t{index}", schema, f"t{index}")


def test_a_small_set_is_offered_untouched():
    offers = [_offer("a", i) for i in range(3)]
    result = trim(offers, token_budget=10_000)
    assert result.offers == offers and not result.cut_descriptions and result.notices() == []


def test_descriptions_are_cut_before_any_tool_is_dropped():
    offers = [_offer("a", i, 2000) for i in range(5)]
    full = sum(estimate_tokens(o.schema) for o in offers)
    result = trim(offers, token_budget=full // 2)
    assert len(result.offers) == 5 and result.cut_descriptions and not result.dropped
    function = result.offers[0].schema["function"]
    assert len(function["description"]) <= 240 and function["description"].endswith("…")
    assert len(function["parameters"]["properties"]["x"]["description"]) <= 240
    assert len(offers[0].schema["function"]["description"]) == 2000  # the original is kept


def test_tools_are_dropped_from_the_largest_server_with_a_notice():
    offers = [_offer("small", i) for i in range(3)] + [_offer("big", i) for i in range(200)]
    result = trim(offers, token_budget=4_000, max_tools=96)
    assert sum(estimate_tokens(o.schema) for o in result.offers) <= 4_000
    kept = [o.server for o in result.offers]
    assert kept.count("small") == 3 and 0 < kept.count("big") < 200
    assert result.dropped["big"][-1] == "mcp__big__t199" and "small" not in result.dropped
    notice = result.notices()[-1]
    assert "'big'" in notice and f"{len(result.dropped['big'])} left out" in notice
    assert len(trim(offers, token_budget=10**9, max_tools=50).offers) == 50


def test_approvals_are_bound_to_repo_name_and_definition(tmp_path):
    memory = ApprovalMemory(tmp_path / "state" / "approvals.json")
    repo_a, repo_b = tmp_path / "a", tmp_path / "b"
    repo_a.mkdir(), repo_b.mkdir()
    server = McpServerConfig(name="s", command="c", source="repo")
    assert not memory.server_approved(server, repo_a)
    memory.approve_server(server, repo_a)
    assert memory.server_approved(server, repo_a)
    assert not memory.server_approved(server, repo_b)
    assert not memory.server_approved(McpServerConfig(name="s", command="d", source="repo"), repo_a)
    assert not memory.server_approved(McpServerConfig(name="t", command="c", source="repo"), repo_a)
    assert memory.server_approved(McpServerConfig(name="u", command="c", source="user"), repo_a)
    memory.always_allow_tool(server, repo_a, "read")
    assert memory.tool_always_allowed(server, repo_a, "read")
    assert not memory.tool_always_allowed(server, repo_a, "write")
    assert not memory.tool_always_allowed(server, repo_b, "read")
    data = json.loads(memory.path.read_text())
    assert set(data) == {"servers", "tools"}


def test_an_unreadable_approval_file_approves_nothing(tmp_path):
    memory = ApprovalMemory(tmp_path / "approvals.json")
    memory.path.write_text("{broken")
    server = McpServerConfig(name="s", command="c", source="repo")
    assert not memory.server_approved(server, tmp_path)
    memory.approve_server(server, tmp_path)
    assert memory.server_approved(server, tmp_path)
