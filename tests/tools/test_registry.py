"""The registry: validation errors the model can read, string coercion, the circuit breaker."""

from __future__ import annotations

from hello_tui.config import load_settings
from hello_tui.core.tools import Tool, ToolArgs, ToolContext, ToolResult
from hello_tui.tools.registry import BREAKER_COOLDOWN, ToolRegistry


class EchoArgs(ToolArgs):
    text: str
    times: int = 1


class EchoTool(Tool):
    name = "echo"
    description = "Repeat text."
    Args = EchoArgs

    def __init__(self) -> None:
        self.outcomes: list[ToolResult] = []

    async def run(self, args: EchoArgs, ctx: ToolContext) -> ToolResult:
        if self.outcomes:
            return self.outcomes.pop(0)
        return ToolResult.ok(args.text * args.times)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(tmp_path):
    tool, clock = EchoTool(), Clock()
    ctx = ToolContext(settings=load_settings(tmp_path, environ={}))
    return ToolRegistry([tool], clock=clock), tool, clock, ctx


async def test_plain_string_becomes_the_single_required_argument(tmp_path):
    registry, _, _, ctx = make(tmp_path)
    result = await registry.run("echo", "hi", ctx)
    assert (result.status, result.text) == ("success", "hi")


async def test_wrong_types_and_extra_fields_are_explained(tmp_path):
    registry, _, _, ctx = make(tmp_path)
    result = await registry.run("echo", {"text": "a", "times": "many"}, ctx)
    assert result.status == "error" and "times" in result.text and "Expected fields" in result.text
    result = await registry.run("echo", {"text": "a", "allow_dangerous": True}, ctx)
    assert result.status == "error" and "allow_dangerous" in result.text


async def test_unknown_tool_lists_the_available_ones(tmp_path):
    registry, _, _, ctx = make(tmp_path)
    result = await registry.run("nope", {}, ctx)
    assert result.status == "error" and "echo" in result.text


async def test_three_failures_switch_a_tool_off_until_the_cooldown_ends(tmp_path):
    registry, tool, clock, ctx = make(tmp_path)
    tool.outcomes = [ToolResult.error("boom")] * 3
    for _ in range(2):
        assert "circuit breaker" not in (await registry.run("echo", "x", ctx)).text
    third = await registry.run("echo", "x", ctx)
    assert "circuit breaker" in third.text
    blocked = await registry.run("echo", "x", ctx)
    assert blocked.status == "error" and "switched off" in blocked.text
    clock.now += BREAKER_COOLDOWN + 1
    assert (await registry.run("echo", "x", ctx)).status == "success"


async def test_a_success_resets_the_failure_count(tmp_path):
    registry, tool, _, ctx = make(tmp_path)
    tool.outcomes = [
        ToolResult.error("a"),
        ToolResult.error("b"),
        ToolResult.ok("fine"),
        ToolResult.error("c"),
        ToolResult.error("d"),
    ]
    for _ in range(5):
        await registry.run("echo", "x", ctx)
    assert registry.disabled_reason("echo") is None


async def test_user_refusals_do_not_trip_the_breaker(tmp_path):
    registry, tool, _, ctx = make(tmp_path)
    tool.outcomes = [ToolResult.refused_by_user("the user said no")] * 4
    for _ in range(4):
        result = await registry.run("echo", "x", ctx)
        assert result.status == "error" and "circuit" not in result.text
    assert registry.disabled_reason("echo") is None


async def test_a_crashing_tool_becomes_an_error_result(tmp_path):
    class Crash(EchoTool):
        name = "crash"

        async def run(self, args, ctx):
            raise RuntimeError("bug inside")

    registry = ToolRegistry([Crash()])
    ctx = ToolContext(settings=load_settings(tmp_path, environ={}))
    result = await registry.run("crash", "x", ctx)
    assert result.status == "error" and "bug inside" in result.text
