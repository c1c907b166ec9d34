"""What one model request carries: the context budget it must fit and the messages it holds.

The budget is the model's window (asked once per endpoint and model, off the
loop) or the user's override; a server that states no window names it when a
request is past it, and the budget follows. The messages are assembled by the
prompt builder within that budget; in a native-tools request MCP schemas yield
to the newest tool results, so those reach the model whole while they fit.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

from hello_tui.agent.prompt import PromptBuilder
from hello_tui.agent.turn import Turn
from hello_tui.config import Settings
from hello_tui.core.events import ContextUsage, Event, Notice
from hello_tui.core.modes import READ_ONLY_PROMPT
from hello_tui.llm import Budget, LLMClient, LLMError, budget_for, model_window
from hello_tui.llm.model_window import budget_warning, learnt_window, window_from_error
from hello_tui.mcp.names import PREFIX as MCP_PREFIX
from hello_tui.store.sessions import Session

Messages = list[dict[str, Any]]
Schemas = list[dict[str, Any]] | None


def _is_mcp_schema(schema: dict[str, Any]) -> bool:
    function = schema.get("function")
    return isinstance(function, dict) and str(function.get("name", "")).startswith(MCP_PREFIX)


class Requests:
    """The session's budget and the messages of each request within it."""

    def __init__(
        self,
        llm: LLMClient,
        prompts: PromptBuilder,
        session: Session,
        emit: Callable[[Event], None],
        say_next_turn: Callable[[str], None],
        todos: Callable[[], list[dict[str, Any]]],
    ) -> None:
        self._llm = llm
        self.prompts = prompts
        self.session = session
        self._emit = emit
        self._say_next_turn = say_next_turn  # a notice for the start of the next turn
        self._todos = todos
        # The model's window, learnt at the first turn (and again when the model or the
        # endpoint changes), or the override.
        self.budget: Budget | None = None
        self._budget_key: tuple[str, str] | None = None
        # Until then: the override or the default, or what an earlier session learnt.
        self._tokens_before = self.settings.context_budget
        self._left_out: list[str] = []  # MCP tools the last request went without
        self._said_past_budget: int | None = None  # the budget a too-big request was told of

    @property
    def settings(self) -> Settings:
        """The client's: the budget is the window of the endpoint and model it talks to."""
        return self._llm.settings

    @property
    def tokens(self) -> int:
        """The tokens a request may fill: the budget once learnt."""
        return self.budget.tokens if self.budget is not None else self._tokens_before

    def carry_tokens(self, tokens: int) -> None:
        """The budget an earlier session of the engine learnt: it stands until this one's is."""
        self._tokens_before = tokens

    async def learn_budget(self) -> Budget:
        """The context budget for the endpoint and model in use: their window (probed once,
        off the loop) or the override; an override past the window is said at the next turn."""
        key = (self.settings.base_url, self.settings.model)
        if self.budget is not None and self._budget_key == key:
            return self.budget
        budget = budget_for(self.settings, await model_window(self.settings))
        self.budget, self._budget_key = budget, key
        warning = budget_warning(budget)
        if warning is not None:
            self._say_next_turn(warning)
        return budget

    def learn_window_from(self, exc: LLMError) -> bool:
        """A server that does not say its window says it when a request is past it: learn it
        (unless the budget is an override) and tell the user. True when the budget shrank."""
        tokens = window_from_error(exc.message)
        if tokens is None or self.budget is None or tokens >= self.budget.tokens:
            return False
        if self.settings.sources.get("context_budget", "default") != "default":
            return False  # the user chose the budget; the error says why it fails
        before = self.budget.tokens
        self.budget = budget_for(self.settings, learnt_window(self.settings, tokens))
        self._emit(
            Notice(
                text=f"The endpoint said the model's window is {tokens} tokens: the context "
                f"budget goes from {before} to {tokens} tokens and the request is sent again.",
                level="warning",
            )
        )
        return True

    async def messages(self, turn: Turn, protocol: str, schemas: Schemas = None) -> Messages:
        return (await self._build(turn, protocol, schemas))[0]

    async def for_tools(self, turn: Turn, schemas: Schemas) -> tuple[Messages, Schemas]:
        """The messages and the schemas of a native-tools request. MCP schemas yield to the
        newest tool results: when those would be cut, as few MCP tools as it takes are left
        out of this request (the user is told which) so that the results reach the model whole."""
        return await self._build(turn, "tools", schemas, mcp_may_yield=True)

    async def _build(
        self, turn: Turn, protocol: str, schemas: Schemas, *, mcp_may_yield: bool = False
    ) -> tuple[Messages, Schemas]:
        inputs = await asyncio.to_thread(self.prompts.read_inputs, protocol)
        if self.session.mode == "read-only":
            # The model is told it plans; the mode's approver refuses writes whatever it does.
            inputs = dataclasses.replace(inputs, system=f"{inputs.system}\n\n{READ_ONLY_PROMPT}")

        def build(offered: Schemas) -> Messages:
            return self.prompts.context(
                inputs,
                protocol,
                todos=self._todos(),
                evidence=self.session.evidence,
                history=self.session.history,
                turn=turn.messages,
                schemas=offered,
                budget=self.tokens,
            )

        messages = build(schemas)
        built = self.prompts.last_context
        mcp = [s for s in schemas or [] if _is_mcp_schema(s)]
        if mcp_may_yield and mcp and built is not None and built.cut_newest:
            others = [s for s in schemas or [] if not _is_mcp_schema(s)]
            # The most MCP schemas (in their order) with which the newest results stay whole.
            low, high = 0, len(mcp) - 1
            while low < high:
                mid = (low + high + 1) // 2
                build(others + mcp[:mid])
                fits = (
                    self.prompts.last_context is not None
                    and not self.prompts.last_context.cut_newest
                )
                low, high = (mid, high) if fits else (low, mid - 1)
            schemas = (others + mcp[:low]) or None
            messages = build(schemas)
            built = self.prompts.last_context
            self._say_left_out([str(s.get("function", {}).get("name", "")) for s in mcp[low:]])
        if built is not None:
            source = self.budget.source if self.budget is not None else ""
            self._emit(ContextUsage(used=built.used, budget=built.budget, source=source))
            if built.used > built.budget:
                self._say_past_budget(built.used, built.budget, source, protocol)
        return messages, schemas

    def _say_past_budget(self, used: int, budget: int, source: str, protocol: str) -> None:
        """Once per budget: a request that nothing more can shorten is past the window."""
        if self._said_past_budget == budget:
            return
        self._said_past_budget = budget
        where = f" ({source})" if source else ""
        react = (
            " In the ReAct protocol the tool list travels in the instructions; with "
            "--protocol tools it goes as schemas, which some servers keep shorter."
            if protocol == "react"
            else ""
        )
        self._emit(
            Notice(
                text=f"This request takes about {used:,} tokens, more than the context budget "
                f"of {budget:,}{where}, even with the older messages dropped and the results "
                "cut: the instructions and the task alone do not fit. The server may refuse or "
                "cut off the answer. Give the model a larger window (llama.cpp's -c / --n_ctx, "
                f"Ollama's num_ctx) or use a model with one.{react}",
                level="warning",
            )
        )

    def _say_left_out(self, names: list[str]) -> None:
        """Once per set of names: which MCP tools this request goes without, and why."""
        if names == self._left_out:
            return
        self._left_out = names
        shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        self._emit(
            Notice(
                text=f"{len(names)} MCP tools were left out of this request so that the newest "
                f"tool results reach the model whole within the context budget "
                f"({self.tokens:,} tokens): {shown}",
                level="warning",
            )
        )
