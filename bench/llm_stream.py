"""The model client's own stream reader against the `openai` client's, on the same stream.

hello-tui reads the body itself (bounded SSE decoding, truncation checks,
the answer cap, the deadline, text tool-call hold-back). This measures what
that costs: a 20,000-token answer in one-token chunks from the scripted
server, read (a) by `LLMClient.stream_chat`, (b) the same with tools offered
(so text that may be a tool call is watched), and (c) the peer: a plain
`openai.AsyncOpenAI` stream. Printed: medians of several runs as ratios to
the peer (target <= 1.5x).

Run with `python bench/llm_stream.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hello_tui.demo.model import ScriptedModelServer, settings_for_server, text
from hello_tui.llm import LLMClient, TextDelta

TOKENS = 20_000
TOOLS = [{"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}]
MESSAGES = [{"role": "user", "content": "write a lot"}]


def _answer() -> str:
    return " ".join(f"w{i % 97}" for i in range(TOKENS // 2))


async def _ours(server: ScriptedModelServer, repo: str, tools: list | None) -> float:
    client = LLMClient(settings_for_server(server, repo))
    try:
        started = time.perf_counter()
        size = 0
        async for event in client.stream_chat(MESSAGES, tools=tools):
            if isinstance(event, TextDelta):
                size += len(event.text)
        elapsed = time.perf_counter() - started
    finally:
        await client.aclose()
    assert size == len(_answer()), size
    return elapsed


async def _peer(server: ScriptedModelServer) -> float:
    import openai

    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    try:
        started = time.perf_counter()
        size = 0
        stream = await client.chat.completions.create(
            model="scripted-model",
            messages=MESSAGES,
            stream=True,
            stream_options={"include_usage": True},
        )
        async for chunk in stream:
            for choice in chunk.choices:
                size += len(choice.delta.content or "")
        elapsed = time.perf_counter() - started
    finally:
        await client.close()
    assert size == len(_answer()), size
    return elapsed


async def main(runs: int) -> None:
    reply = text(_answer(), chunk_size=4)
    times: dict[str, list[float]] = {"peer": [], "ours": [], "ours+tools": []}
    with tempfile.TemporaryDirectory() as repo:
        for _ in range(runs):
            # Interleaved, so drift of a noisy machine hits all three alike.
            with ScriptedModelServer([reply] * 3) as server:
                times["peer"].append(await _peer(server))
                times["ours"].append(await _ours(server, repo, None))
                times["ours+tools"].append(await _ours(server, repo, TOOLS))
    peer = statistics.median(times["peer"])
    print(f"{TOKENS} tokens in one-token chunks, median of {runs} runs")
    for name in ("ours", "ours+tools"):
        ratio = statistics.median(times[name]) / peer
        print(f"  {name:<11} / openai stream: {ratio:.2f}x  (target <= 1.5x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    asyncio.run(main(parser.parse_args().runs))
