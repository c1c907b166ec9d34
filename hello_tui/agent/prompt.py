"""Prompt assembly: the system prompt for each dialect, AGENTS.md, and the context of a step.

`read_inputs` touches the disk (prompt overrides, AGENTS.md), so the loop runs
it on a worker thread; `context` is pure and fits everything into the budget
(`agent.context`).
"""

from __future__ import annotations

import platform
from dataclasses import dataclass
from datetime import date
from typing import Any

from hello_tui.agent.context import BuiltContext, ContextParts, build_context, cut_middle
from hello_tui.agent.messages import (
    flatten_tool_messages,
    render_todo_board,
    render_tool_catalogue,
)
from hello_tui.agent.tokens import TokenCounter
from hello_tui.config import Settings
from hello_tui.prompts_loader import PromptNotFound, load_prompt
from hello_tui.regular_files import read_regular_file
from hello_tui.tools.env_files import reaches_env_file
from hello_tui.tools.paths import PathError, hidden_area, resolve_repo_path
from hello_tui.tools.registry import ToolRegistry

AGENTS_MD_LIMIT = 16000
# An AGENTS.md bigger than this is not instructions; it is left out.
AGENTS_MD_MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class PromptInputs:
    system: str
    agents_md: str | None


class PromptBuilder:
    def __init__(self, settings: Settings, registry: ToolRegistry, counter: TokenCounter) -> None:
        self.settings = settings
        self.registry = registry
        self.counter = counter
        self.last_context: BuiltContext | None = None

    def read_inputs(self, protocol: str) -> PromptInputs:
        """The system prompt and AGENTS.md (blocking: reads files)."""
        return PromptInputs(self.system_prompt(protocol), self.agents_md())

    def agents_md(self) -> str | None:
        """The repository's AGENTS.md for the system prompt, read as the read tool would let
        the model read it: a link may not lead out of the repo (`AGENTS.md ->
        /proc/self/environ` would hand the model the app's environment, its key among it),
        nor into `.git/` or the state folder, nor to an env file; only a regular file."""
        repo, name = self.settings.repo, "AGENTS.md"
        try:
            target = resolve_repo_path(repo, name)
        except PathError:
            return None
        if hidden_area(target, self.settings.state_dir_name) or reaches_env_file(target.path, repo):
            return None
        try:
            data = read_regular_file(target.path, AGENTS_MD_MAX_BYTES)
        except OSError:
            return None
        return cut_middle(data.decode("utf-8", errors="replace"), AGENTS_MD_LIMIT)

    def system_prompt(self, protocol: str) -> str:
        base = (
            load_prompt("system", self.settings)
            .replace("{{project}}", self.settings.project)
            .replace("{{repo}}", str(self.settings.repo))
            .replace("{{date}}", date.today().isoformat())
            .replace("{{platform}}", platform.system() or "unknown")
        )
        if protocol != "react":
            return base
        parts = [base, load_prompt("react", self.settings)]
        try:
            parts.append(load_prompt("tools", self.settings))
        except PromptNotFound:
            pass  # the generated catalogue below still lists every tool
        parts.append(render_tool_catalogue(self.registry))
        return "\n\n".join(p.strip() for p in parts)

    def context(
        self,
        inputs: PromptInputs,
        protocol: str,
        *,
        todos: list[dict[str, Any]],
        evidence: list[str],
        history: list[dict[str, Any]],
        turn: list[dict[str, Any]],
        schemas: list[dict[str, Any]] | None = None,
        budget: int,
    ) -> list[dict[str, Any]]:
        """The messages of one model call, within `budget` tokens (schemas included)."""
        if protocol == "react":
            # Counted as sent: ReAct requests carry tool calls as text.
            history, turn = flatten_tool_messages(history), flatten_tool_messages(turn)
        built = build_context(
            ContextParts(
                system=inputs.system,
                agents_md=inputs.agents_md,
                todo_board=render_todo_board(todos),
                evidence=evidence,
                history=history,
                turn=turn,
                schema_tokens=self.counter.count_schemas(schemas),
            ),
            budget,
            self.counter,
        )
        self.last_context = built
        return built.messages
