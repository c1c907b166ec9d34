"""Test-only tools and helpers for driving the engine facade against the scripted model server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hello_tui.config import Settings
from hello_tui.core.approval import PolicyApprover
from hello_tui.core.events import CommandApprovalNeeded, Event, ToolOutputDelta
from hello_tui.core.tools import Tool, ToolArgs, ToolContext, ToolResult
from hello_tui.engine.facade import Engine
from hello_tui.llm import LLMClient
from hello_tui.tools.registry import ToolRegistry


class EchoArgs(ToolArgs):
    text: str


class EchoTool(Tool):
    name = "echo"
    description = "Repeat the text."
    Args = EchoArgs

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def run(self, args: EchoArgs, ctx: ToolContext) -> ToolResult:
        self.calls.append(args.text)
        return ToolResult.ok(f"echo: {args.text}")


class CountArgs(ToolArgs):
    n: int


class CountTool(Tool):
    name = "count"
    description = "Count to n."
    Args = CountArgs

    async def run(self, args: CountArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(" ".join(str(i) for i in range(1, args.n + 1)))


class FailArgs(ToolArgs):
    path: str


class FailTool(Tool):
    name = "broken"
    description = "Always fails."
    Args = FailArgs

    async def run(self, args: FailArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult.error(f"cannot open {args.path}: Permission denied (errno 13)")


class BigArgs(ToolArgs):
    size: int = 5000


class BigTool(Tool):
    name = "big"
    description = "Prints a lot."
    Args = BigArgs

    async def run(self, args: BigArgs, ctx: ToolContext) -> ToolResult:
        lines = [f"line {i:05d} of the long output" for i in range(args.size // 30 + 1)]
        return ToolResult.ok("\n".join(lines)[: args.size])


class CommandArgs(ToolArgs):
    command: str


class GatedCommandTool(Tool):
    """Asks the approver like the terminal does, emitting events before and during the wait."""

    name = "run"
    description = "Run a command after approval."
    Args = CommandArgs
    read_only = False

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def run(self, args: CommandArgs, ctx: ToolContext) -> ToolResult:
        ctx.emit(CommandApprovalNeeded(call_id=ctx.call_id, command=args.command, reason="writes"))
        verdict = await ctx.approver.approve_command(args.command, "writes")
        if verdict == "deny":
            return ToolResult.error(f"The user declined to run `{args.command}`.")
        ctx.emit(ToolOutputDelta(call_id=ctx.call_id, text="working\n"))
        self.ran.append(args.command)
        return ToolResult.ok(f"ran {args.command}")


class TodoArgs(ToolArgs):
    title: str


class FakeTodoTool(Tool):
    name = "todo"
    description = "Keep a todo list."
    Args = TodoArgs

    async def run(self, args: TodoArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(f"added {args.title}")


def registry(*extra: Tool) -> ToolRegistry:
    return ToolRegistry([EchoTool(), CountTool(), FailTool(), BigTool(), *extra])


async def open_engine(
    settings: Settings,
    reg: ToolRegistry | None = None,
    *,
    yes: bool = False,
    approver: Any = None,
    resume: str | None = None,
    continue_latest: bool = False,
) -> Engine:
    """The real engine with test tools and a client that retries without waiting long."""
    llm = LLMClient(settings, base_delay=0.01, max_delay=0.02, retry_after_cap=0.05)
    return await Engine.open(
        settings,
        approver or PolicyApprover(yes=yes),
        resume=resume,
        continue_latest=continue_latest,
        llm=llm,
        registry=reg or registry(),
    )


async def collect(engine: Engine, text: str) -> list[Event]:
    return [event async for event in engine.run_turn(text)]


def session_file(engine: Engine) -> Path:
    return engine.settings.state.sessions / f"{engine.session_id}.json"


def saved(engine: Engine) -> dict[str, Any]:
    """The session as it is on disk."""
    return json.loads(session_file(engine).read_text())


def transcript(engine: Engine) -> list[dict[str, Any]]:
    path = engine.settings.state.logs / f"{engine.session_id}.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def of(events: list[Event], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def answer_text(events: list[Event]) -> str:
    from hello_tui.core.events import AssistantDelta

    return "".join(e.text for e in events if isinstance(e, AssistantDelta))


def run(coro: Any) -> Any:
    return asyncio.run(coro)
