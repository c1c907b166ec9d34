"""Agent overhead: the engine's own time per step, and context building at an 8,000-token budget.

A 50-step scripted session runs through the engine facade against the local
scripted model server. The peer is a plain `openai` client sending the very same 51 requests to the
same server and reading every chunk: whatever the agent spends beyond that
(context building, parsing, tool dispatch, events, session saves) is the
engine's own time. Medians of several runs; run with `python bench/agent_overhead.py`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hello_tui.agent.context import ContextParts, build_context
from hello_tui.agent.tokens import TokenCounter, _load_offline_encoder
from hello_tui.core.approval import PolicyApprover
from hello_tui.core.tools import Tool, ToolArgs, ToolContext, ToolResult
from hello_tui.demo.model import (
    ScriptedModelServer,
    call,
    settings_for_server,
    text,
    tool_calls,
)
from hello_tui.engine.facade import Engine
from hello_tui.tools.registry import ToolRegistry

STEPS = 50
RUNS = 5
OUTPUT_CHARS = 1200  # under the summary threshold: no extra model calls


class LookArgs(ToolArgs):
    path: str


class LookTool(Tool):
    name = "look"
    description = "Return some lines of a pretend file."
    Args = LookArgs

    async def run(self, args: LookArgs, ctx: ToolContext) -> ToolResult:
        body = "\n".join(f"{args.path}:{i}: some code here = {i}" for i in range(200))
        return ToolResult.ok(body[:OUTPUT_CHARS])


def script() -> list:
    replies = [
        tool_calls([call("look", {"path": f"src/module_{i}.py"})], content="") for i in range(STEPS)
    ]
    return replies + [text("All modules looked at; nothing to change.")]


async def agent_run(repo: Path) -> tuple[float, list[dict], int]:
    with ScriptedModelServer(script()) as server:
        settings = settings_for_server(server, repo, max_steps=STEPS + 5)
        engine = await Engine.open(
            settings, PolicyApprover(yes=False), registry=ToolRegistry([LookTool()])
        )
        started = time.perf_counter()
        steps = 0
        async for event in engine.run_turn("look at every module"):
            if event.kind == "StepStarted":
                steps += 1
            if event.kind in ("TurnFailed",):
                raise SystemExit(f"bench turn failed: {event.error}")
        elapsed = time.perf_counter() - started
        await engine.aclose()
        return elapsed, list(server.chat_requests), steps


async def peer_run(requests: list[dict]) -> float:
    """The same requests through the bare openai client, every chunk read."""
    import openai

    with ScriptedModelServer(script()) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
        started = time.perf_counter()
        for body in requests:
            body = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
            stream = await client.chat.completions.create(
                **body, stream=True, stream_options={"include_usage": True}
            )
            async for _chunk in stream:
                pass
        elapsed = time.perf_counter() - started
        await client.close()
        return elapsed


def context_build_ms(counter_factory, warm: bool) -> float:
    history: list[dict] = [{"role": "user", "content": "look at every module"}]
    for i in range(STEPS):
        history.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {
                            "name": "look",
                            "arguments": f'{{"path": "src/module_{i}.py"}}',
                        },
                    }
                ],
            }
        )
        history.append(
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"{i} " + "x = 1\n" * 200}
        )
    parts = ContextParts(
        system="rules " * 600,
        agents_md="project rules " * 100,
        todo_board="- [pending] one\n- [in_progress] two",
        evidence=["look → success: ..."] * 3,
        history=[],
        turn=history,
    )
    times = []
    counter = counter_factory()
    for _ in range(9):
        if not warm:
            counter = counter_factory()
        t = time.perf_counter()
        build_context(parts, 8000, counter)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main() -> None:
    agent_times, peer_times = [], []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as tmp:
            elapsed, requests, steps = asyncio.run(agent_run(Path(tmp)))
        assert steps == STEPS + 1, steps
        agent_times.append(elapsed)
        peer_times.append(asyncio.run(peer_run(requests)))
    agent_med = statistics.median(agent_times)
    peer_med = statistics.median(peer_times)
    per_step_ms = (agent_med - peer_med) / (STEPS + 1) * 1000
    encoder = _load_offline_encoder()
    tik = (lambda: TokenCounter(encoder)) if encoder else (lambda: TokenCounter(None))
    print(f"steps per session:                  {STEPS + 1} model calls, {STEPS} tool calls")
    print(f"agent session (median of {RUNS}):       {agent_med * 1000:.0f} ms")
    print(f"plain client, same requests:        {peer_med * 1000:.0f} ms")
    print(f"ratio agent / plain client:         {agent_med / peer_med:.2f}")
    print(f"engine time per step:               {per_step_ms:.2f} ms (target <= 15 ms)")
    print(f"context build, 8,000 budget, warm:  {context_build_ms(tik, True):.2f} ms")
    print(f"context build, 8,000 budget, cold:  {context_build_ms(tik, False):.2f} ms")


if __name__ == "__main__":
    main()
