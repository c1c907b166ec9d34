"""The MCP SDK is loaded only when a server is to run: importing it costs seconds of start-up,
which a session without MCP servers (most of them) must not pay."""

from __future__ import annotations

from tests.mcp.conftest import run_exec, stdio_definition, write_mcp_json
from tests.support.scripted_model import call, text, tool_calls

GUARD = 120
# `hello-tui exec` in-process, then which SDK modules it left loaded, on stderr's last line.
CHILD = (
    "import sys\n"
    "from hello_tui.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "loaded = sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.'))\n"
    "print('\\nSDK modules:', len(loaded), loaded[:3], file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def _exec(repo, server, *args):
    proc = run_exec(repo, server, *args, launcher=("-c", CHILD))
    assert proc.returncode == 0, proc.stderr
    return proc, proc.stderr.strip().splitlines()[-1]


def test_a_session_without_mcp_servers_never_imports_the_sdk(tmp_path, scripted_server):
    server = scripted_server([tool_calls([call("ls", {"path": "."})]), text("done")])
    proc, loaded = _exec(tmp_path, server, "list the files")
    assert proc.stdout == "done\n"
    assert loaded.startswith("SDK modules: 0 "), loaded


def test_a_session_with_a_server_loads_it_and_offers_its_tools(tmp_path, scripted_server):
    write_mcp_json(tmp_path, {"demo": stdio_definition()})
    server = scripted_server(
        [tool_calls([call("mcp__demo__add", {"a": 2, "b": 3})]), text("It is 5.")]
    )
    proc, loaded = _exec(tmp_path, server, "--yes", "add")
    assert proc.stdout == "It is 5.\n"
    assert not loaded.startswith("SDK modules: 0 "), loaded
    assert "mcp__demo__add" in {t["function"]["name"] for t in server.chat_requests[0]["tools"]}
