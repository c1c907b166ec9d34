"""The tool registry: schemas for the model, argument validation, the circuit breaker.

Validation errors and tool failures come back as error results the model can
read; nothing a model sends can crash the loop. The circuit breaker counts
tool failures only: a result marked `declined` is an answer (a policy
refusal, the user's "no", a command that ran and failed) and never switches a
tool off.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from hello_tui.core.tools import Tool, ToolContext, ToolResult

log = logging.getLogger(__name__)

BREAKER_THRESHOLD = 3
BREAKER_COOLDOWN = 300.0


def describe_validation_error(tool: Tool, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "(arguments)"
        problems.append(f"- {where}: {err.get('msg')}")
    fields = ", ".join(tool.Args.model_fields)
    return (
        f"Invalid arguments for tool '{tool.name}':\n"
        + "\n".join(problems)
        + f"\nExpected fields: {fields}."
    )


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = (), clock=time.monotonic) -> None:
        self._tools: dict[str, Tool] = {}
        self._failures: dict[str, int] = {}
        self._disabled_until: dict[str, float] = {}
        self._groups: dict[str, list[str]] = {}  # tools that come and go (MCP servers')
        self._clock = clock
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def set_group(self, group: str, tools: Iterable[Tool]) -> None:
        """Replace the tools registered under `group`; none may take a name already in use."""
        for name in self._groups.pop(group, []):
            self._tools.pop(name, None)
        added = []
        for tool in tools:
            if tool.name not in self._tools:
                self._tools[tool.name] = tool
                added.append(tool.name)
        self._groups[group] = added

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self._tools.values()]

    def coerce_arguments(self, tool: Tool, raw: Any) -> dict[str, Any]:
        """ReAct input tolerance: a plain string becomes the single required argument."""
        if isinstance(raw, dict):
            return raw
        if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], dict):
            return raw[0]
        required = [n for n, f in tool.Args.model_fields.items() if f.is_required()]
        if isinstance(raw, str) and len(required) == 1:
            return {required[0]: raw}
        if raw in (None, "") and not required:
            return {}
        raise ValueError(
            f"Tool '{tool.name}' needs a JSON object with fields "
            f"{', '.join(tool.Args.model_fields)}; got {type(raw).__name__}."
        )

    def disabled_reason(self, name: str) -> str | None:
        until = self._disabled_until.get(name)
        if until is None:
            return None
        left = until - self._clock()
        if left <= 0:
            del self._disabled_until[name]
            self._failures[name] = 0
            return None
        return (
            f"Tool '{name}' is switched off for {int(left)} more seconds after "
            f"{BREAKER_THRESHOLD} consecutive failures. Use another tool or conclude."
        )

    def _record(self, name: str, result: ToolResult) -> ToolResult:
        if result.declined:
            return result
        if result.status == "error":
            self._failures[name] = self._failures.get(name, 0) + 1
            if self._failures[name] >= BREAKER_THRESHOLD:
                self._disabled_until[name] = self._clock() + BREAKER_COOLDOWN
                result = ToolResult(
                    status="error",
                    data=result.data,
                    text=result.text
                    + f"\n[circuit breaker] '{name}' failed {BREAKER_THRESHOLD} times in a row "
                    f"and is switched off for {int(BREAKER_COOLDOWN)} s.",
                )
        else:
            self._failures[name] = 0
        return result

    async def run(self, name: str, raw_args: Any, ctx: ToolContext) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            return ToolResult.error(
                f"Unknown tool '{name}'. Available tools: {', '.join(self._tools)}."
            )
        blocked = self.disabled_reason(name)
        if blocked:
            return ToolResult.error(blocked)
        try:
            args = tool.Args.model_validate(self.coerce_arguments(tool, raw_args))
        except ValidationError as exc:
            return self._record(name, ToolResult.error(describe_validation_error(tool, exc)))
        except ValueError as exc:
            return self._record(name, ToolResult.error(str(exc)))
        try:
            result = await tool.run(args, ctx)
        except Exception as exc:
            log.exception("tool %s raised", name)
            result = ToolResult.error(f"Tool '{name}' failed: {type(exc).__name__}: {exc}")
        return self._record(name, result)
