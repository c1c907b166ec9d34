"""The registry's hook for tools that come and go: a group replaced whole, no name shadowed."""

from __future__ import annotations

from hello_tui.core.tools import ToolContext
from hello_tui.mcp.tool import McpTool
from hello_tui.tools.registry import ToolRegistry
from tests.engine.agent_kit import EchoTool


def _tool(name: str) -> McpTool:
    schema = {"type": "function", "function": {"name": name, "description": "d", "parameters": {}}}
    return McpTool(None, "srv", name, name, schema)  # type: ignore[arg-type]


def test_a_group_is_replaced_whole_and_never_shadows_a_tool():
    registry = ToolRegistry([EchoTool()])
    registry.set_group("mcp", [_tool("mcp__srv__a"), _tool("mcp__srv__b"), _tool("echo")])
    assert registry.names == ["echo", "mcp__srv__a", "mcp__srv__b"]
    assert isinstance(registry.get("echo"), EchoTool)
    assert [s["function"]["name"] for s in registry.schemas()][1:] == ["mcp__srv__a", "mcp__srv__b"]
    registry.set_group("mcp", [_tool("mcp__srv__c")])
    assert registry.names == ["echo", "mcp__srv__c"]
    registry.set_group("mcp", [])
    assert registry.names == ["echo"]


async def test_arguments_pass_through_untouched(tmp_path):
    class Manager:
        def connection(self, server):
            return None

    tool = McpTool(Manager(), "srv", "t", "mcp__srv__t", {"function": {"description": ""}})  # type: ignore[arg-type]
    registry = ToolRegistry([tool])
    result = await registry.run("mcp__srv__t", {"deep": {"x": [1, 2]}}, ToolContext(settings=None))  # type: ignore[arg-type]
    assert result.status == "error" and "no longer configured" in result.text
    args = tool.Args.model_validate({"deep": {"x": [1, 2]}, "n": 3})
    assert args.model_extra == {"deep": {"x": [1, 2]}, "n": 3}
