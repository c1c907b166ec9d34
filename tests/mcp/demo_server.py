"""A real MCP server for the tests, written with the SDK's server side.

Run as a script it serves stdio (`python demo_server.py [--many N] [--slow-start SECONDS]
[--junk N] [--linger SECONDS]`; `--junk` prints N lines that are not MCP messages, with
escape codes, on stdout first, as a chatty launcher does; `--linger` stays that long after
its input ends, as a server slow to stop does, until a signal ends it); imported,
`build(...)` gives the server whose streamable HTTP app the tests mount on
127.0.0.1. When DEMO_MARKER names a file, starting appends a line to it, so a
test can tell whether the server ever ran.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build(many: int = 0) -> MCPServer:
    server = MCPServer("demo")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    @server.tool()
    def shout(text: str) -> str:
        """Say the text in capitals."""
        return text.upper()

    @server.tool()
    def refuse(reason: str) -> str:
        """Always reports an error."""
        raise ToolError(f"refused: {reason}")

    @server.tool()
    def die() -> str:
        """End the server's process at once."""
        os._exit(3)

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool()
    def env(name: str) -> str:
        """The value of one environment variable of the server."""
        return os.environ.get(name, "(unset)")

    @server.tool()
    def header(name: str, ctx: Context) -> str:
        """The value of one HTTP header of the request (over streamable HTTP)."""
        headers = ctx.headers or {}
        value = next((v for k, v in headers.items() if k.lower() == name.lower()), None)
        return "(unset)" if value is None else value or "(empty)"

    @server.tool()
    async def progress(steps: int, ctx: Context) -> str:
        """Report progress `steps` times, then answer."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
        return f"did {steps} steps"

    @server.tool()
    def escapes() -> str:
        """Answer with terminal escape sequences."""
        return "clip \x1b]52;c;aGk=\x07 clear \x1b[2J csi8 \x9b2J"

    @server.tool()
    def touch(path: str) -> str:
        """Create a file (so a test can see whether a call ran)."""
        Path(path).write_text("touched\n")
        return f"created {path}"

    @server.tool()
    async def sleep(seconds: float) -> str:
        """Wait, then answer."""
        import anyio

        await anyio.sleep(seconds)
        return "awake"

    @server.tool()
    def weather(city: str) -> dict[str, object]:
        """Structured weather for a city."""
        return {"city": city, "celsius": 21}

    for index in range(many):

        def numbered(x: int, index: int = index) -> int:
            return x + index

        server.add_tool(
            numbered,
            name=f"tool_{index:03d}",
            description=f"Numbered tool {index}. " + "It adds its number to x. " * 20,
        )
    return server


if __name__ == "__main__":
    marker = os.environ.get("DEMO_MARKER")
    if marker:
        with Path(marker).open("a") as fh:
            fh.write("started\n")
    if "--slow-start" in sys.argv:
        import time

        time.sleep(float(sys.argv[sys.argv.index("--slow-start") + 1]))
    if "--junk" in sys.argv:
        for line in range(int(sys.argv[sys.argv.index("--junk") + 1])):
            print(f"\x1b[32mstarting\x1b[0m launcher line {line}", flush=True)
    many = int(sys.argv[sys.argv.index("--many") + 1]) if "--many" in sys.argv else 0
    build(many).run()
    if "--linger" in sys.argv:
        import time

        time.sleep(float(sys.argv[sys.argv.index("--linger") + 1]))
