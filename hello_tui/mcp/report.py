"""MCP servers as text: the lines `/mcp`, `hello-tui mcp list` and doctor print."""

from __future__ import annotations

from hello_tui.core.terminal_text import safe_text
from hello_tui.mcp.manager import McpServerState

SOURCES = {"repo": "repo", "user": "your config", "client": "the editor"}


def server_lines(state: McpServerState, *, tools: bool = True) -> list[str]:
    where = SOURCES.get(state.source, state.source)
    if state.origin and state.source != "client":
        where += f", {state.origin}"
    head = f"{state.name} [{state.transport}, {where}]: {state.state}"
    if state.error:
        head += f" ({state.error})"
    lines = [head, f"  {state.summary}"]
    if tools and state.tools:
        offered = sum(t.offered for t in state.tools)
        lines.append(f"  tools ({offered} of {len(state.tools)} offered):")
        for tool in state.tools:
            mark = "" if tool.offered else " (left out: context budget)"
            about = f" - {tool.description}" if tool.description else ""
            lines.append(f"    {tool.function or tool.name}{about}{mark}")
    # Names and commands are a repo's file's words, descriptions and errors a server's:
    # printed to a terminal, their escape sequences are shown, never obeyed.
    return [safe_text(line) for line in lines]


def render(states: list[McpServerState]) -> str:
    if not states:
        return (
            "No MCP servers are configured. Add them to .mcp.json in the repo "
            "or to [mcp_servers.NAME] in ~/.config/hello-tui/config.toml."
        )
    lines: list[str] = []
    for state in states:
        lines += server_lines(state)
    return "\n".join(lines)
