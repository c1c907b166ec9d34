"""What the MCP SDK logs goes to the log file: `exec` against a server that prints junk on
stdout, or an HTTP server that goes away, writes no traceback, only one clear line."""

from __future__ import annotations

import logging

from hello_tui.core import logs
from hello_tui.mcp.sdk_log import route_sdk_logging
from tests.mcp.conftest import run_exec, stdio_definition, write_mcp_json
from tests.support.scripted_model import call, text, tool_calls

GUARD = 120


def test_a_server_printing_junk_on_stdout_still_works_and_is_one_line(tmp_path, scripted_server):
    write_mcp_json(tmp_path, {"chatty": stdio_definition("--junk", "9")})
    server = scripted_server(
        [tool_calls([call("mcp__chatty__add", {"a": 2, "b": 3})]), text("It is 5.")]
    )
    proc = run_exec(tmp_path, server, "--yes", "add")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "It is 5.\n"
    assert "Traceback" not in proc.stderr and "launcher line" not in proc.stderr
    assert "\x1b" not in proc.stderr
    [line] = [line for line in proc.stderr.splitlines() if "not MCP messages" in line]
    assert line.startswith("note: MCP server 'chatty' writes lines that are not MCP messages")
    assert "hello-tui.log" in line
    log = (tmp_path / ".helloagents" / "logs" / "hello-tui.log").read_text()
    assert "Failed to parse JSONRPC message from server" in log and "launcher line 0" in log


def test_what_the_sdk_logs_goes_to_the_log_file_not_the_terminal(tmp_path, capfd):
    """The SDK's own loggers (`mcp.*` and its bare `client`): "Session termination failed"
    from a killed HTTP server, a failed parse, reach hello-tui's log and not stderr."""
    log_file = tmp_path / "hello-tui.log"
    logs.configure_file(log_file, "WARNING")
    try:
        route_sdk_logging()
        logging.getLogger("mcp.client.streamable_http").warning(
            "Session termination failed: All connection attempts failed"
        )
        try:
            raise ValueError("not json: \x1b[31mjunk")
        except ValueError:
            logging.getLogger("client").exception("Failed to validate notification")
    finally:
        logs.reset()
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""
    text = log_file.read_text()
    assert "Session termination failed: All connection attempts failed" in text
    assert "Traceback" in text and "Failed to validate notification" in text
