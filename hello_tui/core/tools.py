"""What every tool shares: the result envelope, the context it runs in, the base class.

Each tool declares its arguments as a pydantic model; the same model gives the
JSON schema for native tool calling and validates ReAct JSON input.
"""

from __future__ import annotations

import abc
import copy
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from hello_tui.config import Settings
from hello_tui.core.approval import Approver, PolicyApprover
from hello_tui.core.editor_files import EditorFiles
from hello_tui.core.events import Event

Status = Literal["success", "partial", "error"]


class ToolResult(BaseModel):
    """The envelope: `text` is what the model reads; `data` is structured, for the UI."""

    status: Status
    text: str
    data: Any = None
    # The user (or a headless policy) said no: an answer, not a tool failure,
    # so it does not count towards the circuit breaker.
    declined: bool = False

    @classmethod
    def ok(cls, text: str, data: Any = None) -> ToolResult:
        return cls(status="success", text=text, data=data)

    @classmethod
    def partial(cls, text: str, data: Any = None) -> ToolResult:
        return cls(status="partial", text=text, data=data)

    @classmethod
    def error(cls, text: str, data: Any = None) -> ToolResult:
        return cls(status="error", text=text, data=data)

    @classmethod
    def refused_by_user(cls, text: str, data: Any = None) -> ToolResult:
        return cls(status="error", text=text, data=data, declined=True)


class ToolArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass
class ReadRecord:
    """What `read` saw of a file: the patch engine's stale guard and `edit` use it."""

    sha256: str
    size: int
    mtime: float


# A model call for tools that need one (plan, summaries): messages -> text.
CompleteFn = Callable[[list[dict[str, Any]], int], Awaitable[str]]


@dataclass
class ToolContext:
    settings: Settings
    approver: Approver = field(default_factory=lambda: PolicyApprover(yes=False))
    emit: Callable[[Event], None] = lambda event: None
    complete: CompleteFn | None = None
    reads: dict[str, ReadRecord] = field(default_factory=dict)  # relpath -> record
    allowed_commands: set[str] = field(default_factory=set)  # "allow for the session"
    cwd: Path | None = None  # the terminal's working directory (inside the repo)
    call_id: str = ""
    step: int = 0
    user_task: str = ""  # the current user request, for notes
    session_id: str = ""  # whose todo list the `todo` tool keeps ("" outside a session)
    # The user's editor, when the front-end offers its buffers (tools/editor_texts.py).
    editor: EditorFiles | None = None

    @property
    def repo(self) -> Path:
        return self.settings.repo


class Tool(abc.ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[ToolArgs]]
    # Read-only tools may run without any approval and in parallel.
    read_only: ClassVar[bool] = True

    @abc.abstractmethod
    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        """Do the work; never raise for expected failures, return an error result."""

    def schema(self) -> dict[str, Any]:
        # Every request carries every schema, and pydantic builds one in about a millisecond:
        # built once per model, copied so that a caller may change what it is given.
        params = copy.deepcopy(_parameters(self.Args))
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }


# Bounds are checked when a call is validated, and the error says what was wrong; in
# every request they cost tokens and rarely change what a model sends.
_LEFT_OUT = frozenset({"title", "minimum", "maximum", "exclusiveMinimum", "minLength"})


def _compact_property(prop: dict[str, Any]) -> dict[str, Any]:
    prop = {k: v for k, v in prop.items() if k not in _LEFT_OUT}
    options = prop.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        # Optional[X] is said by leaving the field out of "required"; the null branch
        # and its null default only cost tokens (the arguments are validated here anyway).
        rest = [o for o in options if o != {"type": "null"}]
        del prop["anyOf"]
        if len(rest) == 1:
            prop = {**{k: v for k, v in rest[0].items() if k not in _LEFT_OUT}, **prop}
        else:
            prop["anyOf"] = rest
    if "default" in prop and (prop["default"] is None or prop["default"] is False):
        del prop["default"]
    return prop


@functools.cache
def _parameters(args: type[ToolArgs]) -> dict[str, Any]:
    return compact_parameters(args.model_json_schema())


def compact_parameters(params: dict[str, Any]) -> dict[str, Any]:
    """A tool's JSON schema as sent to the model: the same contract, fewer tokens.

    Titles, bounds, `null` branches of optional fields, null/false defaults and
    `additionalProperties` are left out; pydantic still validates every call
    against the full model, so nothing the model may send changes.
    """
    out = {k: v for k, v in params.items() if k not in ("title", "additionalProperties")}
    props = out.get("properties")
    if isinstance(props, dict):
        out["properties"] = {name: _compact_property(p) for name, p in props.items()}
    return out
