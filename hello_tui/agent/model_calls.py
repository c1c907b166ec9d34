"""The loop's model calls: streamed requests as answer or thought deltas, and their cost.

Every call is charged to the session's totals and to the turn it belongs to,
and reported as a `Usage` event carrying the session totals (consumers assign
them; they never add them up). Tools that need the model (plan, summaries)
call through here too, so their tokens are charged to the running turn.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Literal

from hello_tui.agent.turn import Turn
from hello_tui.config import Settings
from hello_tui.core.events import AnswerRestarted, AssistantDelta, Event, ThoughtDelta, Usage
from hello_tui.llm import (
    Completion,
    LLMClient,
    LLMError,
    ReasoningDelta,
    StreamRestarted,
    TextDelta,
    cost,
)
from hello_tui.prompts_loader import load_prompt
from hello_tui.store.sessions import Session

SUMMARY_MAX_TOKENS = 400
YIELD_INTERVAL = 0.01  # seconds of streaming between two turns of the event loop

TextAs = Literal["answer", "thought"]


class ModelCalls:
    def __init__(self, llm: LLMClient, session: Session, emit: Callable[[Event], None]) -> None:
        self.llm = llm
        self.session = session
        self.emit = emit
        self.current: Turn | None = None  # the turn calls made by tools are charged to

    @property
    def settings(self) -> Settings:
        """The client's: a call is priced at the model it went to."""
        return self.llm.settings

    def account(self, turn: Turn | None, completion: Completion) -> None:
        usage = completion.usage
        if usage is None:
            return
        price = cost(usage, self.settings)
        totals = self.session.usage
        totals.add(usage.prompt_tokens, usage.completion_tokens, price)
        if turn is not None:
            turn.usage.add(usage.prompt_tokens, usage.completion_tokens, price)
        self.emit(
            Usage(
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                session_prompt_tokens=totals.prompt_tokens,
                session_completion_tokens=totals.completion_tokens,
                cost=totals.cost,
            )
        )

    async def stream(
        self,
        turn: Turn,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        text_as: TextAs,
        step: int = 0,
    ) -> Completion:
        """One streamed model call; its text goes out as answer or thought deltas."""
        completion = None
        last_yield = time.monotonic()
        async for item in self.llm.stream_chat(messages, tools=tools):
            # A fast stream can arrive faster than the loop turns over (buffered chunks do
            # not suspend): step aside now and then, so a UI on this loop keeps handling keys.
            now = time.monotonic()
            if now - last_yield >= YIELD_INTERVAL:
                last_yield = now
                await asyncio.sleep(0)
            if isinstance(item, TextDelta):
                if text_as == "answer":
                    self.emit(AssistantDelta(text=item.text))
                else:
                    self.emit(ThoughtDelta(text=item.text, step=step))
            elif isinstance(item, ReasoningDelta):
                self.emit(ThoughtDelta(text=item.text, step=step))
            elif isinstance(item, StreamRestarted):
                self.emit(AnswerRestarted(reason=item.reason, attempt=item.attempt))
            elif isinstance(item, Completion):
                completion = item
        if completion is None:
            raise LLMError("the model's answer ended without a completion", "protocol")
        self.account(turn, completion)
        return completion

    async def complete_for_tool(self, messages: list[dict[str, Any]], max_tokens: int) -> str:
        completion = await self.llm.complete(messages, max_tokens=max_tokens)
        self.account(self.current, completion)
        return completion.content

    async def summarise(self, tool: str, output: str) -> str:
        """A long tool output, summarised for the model (prompts/summarize_observation.md)."""
        task = self.current.task if self.current else ""
        messages = [
            {"role": "system", "content": load_prompt("summarize_observation", self.settings)},
            {"role": "user", "content": f"Task: {task}\nTool: {tool}\n\nOutput:\n{output}"},
        ]
        completion = await self.llm.complete(messages, max_tokens=SUMMARY_MAX_TOKENS, temperature=0)
        self.account(self.current, completion)
        return completion.content
