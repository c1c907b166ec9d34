"""The values the model client hands out: stream items, the final Completion, usage, preflight."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TokenUsage:
    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text as the model sent it; validation is the agent's job


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    index: int
    id: str | None
    name: str | None
    arguments_fragment: str


@dataclass(frozen=True)
class StreamRestarted:
    """The answer streamed so far is void: the client asks again and a new answer follows.

    Yielded when a stream was cut off after some deltas had already gone out;
    the consumer should discard what it showed of this answer.
    """

    reason: str
    attempt: int  # the attempt that starts now (2 for the first retry)


@dataclass(frozen=True)
class Completion:
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: TokenUsage | None = None
    reasoning: str = ""


StreamEvent = TextDelta | ReasoningDelta | ToolCallDelta | StreamRestarted | Completion


@dataclass(frozen=True)
class PreflightResult:
    ok: bool
    message: str
    hint: str
    latency: float  # seconds
