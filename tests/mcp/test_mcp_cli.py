"""`hello-tui mcp list`, `doctor` and `exec` with MCP servers, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess

from tests.mcp.conftest import stdio_definition, write_mcp_json, write_user_config
from tests.support.scripted_model import call, text, tool_calls
from tests.support.warm_python import warm_python

GUARD = 90


def cli(repo, *args, server=None):
    flags = []
    if server is not None:
        flags = ["--base-url", server.base_url, "--model", "scripted-model"]
    return subprocess.run(
        [*warm_python(), "-m", "hello_tui", *args, "--repo", str(repo), *flags],
        capture_output=True,
        text=True,
        timeout=GUARD,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        check=False,
    )


def user_demo() -> None:
    definition = stdio_definition()
    write_user_config(
        "[mcp_servers.mine]\n"
        f"command = {json.dumps(definition['command'])}\n"
        f"args = {json.dumps(definition['args'])}\n"
    )


def test_mcp_list_starts_approved_servers_and_never_an_unapproved_repo_one(tmp_path):
    marker = tmp_path.parent / f"{tmp_path.name}-marker"
    user_demo()
    write_mcp_json(tmp_path, {"repo-demo": stdio_definition(env={"DEMO_MARKER": str(marker)})})
    proc = cli(tmp_path, "mcp", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    mine, repo = json.loads(proc.stdout)
    assert (mine["name"], mine["source"], mine["state"]) == ("mine", "user", "running")
    functions = {t["function"] for t in mine["tools"]}
    assert {"mcp__mine__add", "mcp__mine__shout"} <= functions
    assert (repo["name"], repo["source"], repo["state"]) == ("repo-demo", "repo", "not approved")
    assert repo["tools"] == [] and not marker.exists()

    proc = cli(tmp_path, "mcp", "list")
    assert proc.returncode == 0, proc.stderr
    assert "mine [stdio, your config" in proc.stdout and "mcp__mine__add - Add two" in proc.stdout
    assert "repo-demo [stdio, repo, .mcp.json]: not approved" in proc.stdout


def test_mcp_list_without_servers_says_how_to_add_them(tmp_path):
    proc = cli(tmp_path, "mcp", "list")
    assert proc.returncode == 0 and ".mcp.json" in proc.stdout


def test_doctor_checks_each_server(tmp_path, scripted_server):
    user_demo()
    write_mcp_json(
        tmp_path,
        {"unapproved": stdio_definition(), "broken": {"command": "no-such-program-anywhere"}},
    )
    proc = cli(tmp_path, "doctor", server=scripted_server())
    lines = [line for line in proc.stdout.splitlines() if line.startswith("mcp:")]
    assert any("mine" in line and "OK, 12 tools" in line for line in lines), proc.stdout
    assert any("unapproved" in line and "not approved" in line for line in lines)
    assert any("broken" in line and "not approved" in line for line in lines)


def test_exec_starts_repo_servers_only_with_yes(tmp_path, scripted_server):
    write_mcp_json(tmp_path, {"demo": stdio_definition()})
    server = scripted_server(
        [
            text("No tools here."),
            tool_calls([call("mcp__demo__add", {"a": 20, "b": 22})]),
            text("The sum is 42."),
        ]
    )
    proc = cli(tmp_path, "exec", "add 20 and 22 with the demo tool", server=server)
    assert proc.returncode == 0, proc.stderr
    assert "'demo' from .mcp.json was not approved" in proc.stderr
    assert not [t for t in server.chat_requests[0].get("tools", []) if "mcp__" in json.dumps(t)]

    proc = cli(tmp_path, "exec", "--yes", "add 20 and 22 with the demo tool", server=server)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "The sum is 42.\n"
    assert "· mcp__demo__add" in proc.stderr
    assert [m for m in server.chat_requests[2]["messages"] if m["role"] == "tool"][-1][
        "content"
    ] == "42"
    # --yes approved it for that run only: nothing was remembered.
    state = os.path.join(os.environ["XDG_STATE_HOME"], "hello-tui", "mcp-approvals.json")
    assert not os.path.exists(state)
