"""MCP servers as tools: configuration, approvals, connections, and the tool adapter.

Sits between the agent and the tools: the engine owns one `McpManager`, which
puts each running server's tools into the tool registry as
`mcp__<server>__<tool>`.
"""

from hello_tui.mcp.config import McpConfigError, McpServerConfig
from hello_tui.mcp.manager import McpManager, McpServerState, McpToolInfo

__all__ = ["McpConfigError", "McpManager", "McpServerConfig", "McpServerState", "McpToolInfo"]
