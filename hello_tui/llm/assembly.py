"""Chat-completion chunks and bodies (decoded JSON) into deltas and one Completion.

The answer's size is counted as it grows (text, reasoning, tool-call names
and arguments, in UTF-8 bytes) and `AnswerTooLarge` stops it at the cap, so
a runaway stream cannot take the memory with it. Tool calls a local model
wrote as text are recognised here (when tools were offered), so the loop only
ever sees ordinary `tool_calls`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from hello_tui.llm.text_tool_calls import HeldBackText, Recognised, recognise_tool_calls
from hello_tui.llm.types import (
    Completion,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallDelta,
)


class AnswerTooLarge(Exception):
    """The answer passed the byte cap."""


def text_call_id() -> str:
    # Nine alphanumerics: the one id shape every server accepts (Mistral's
    # templates reject anything else).
    return uuid.uuid4().hex[:9]


def is_chunk(obj: Any) -> bool:
    """Whether a decoded stream event is a chat-completion chunk (usage-only chunks included)."""
    return isinstance(obj, dict) and (
        isinstance(obj.get("choices"), list) or obj.get("object") == "chat.completion.chunk"
    )


def is_completion_body(obj: Any) -> bool:
    """Whether a decoded body is a whole (non-streamed) chat completion."""
    if not isinstance(obj, dict) or not isinstance(obj.get("choices"), list):
        return False
    return all(isinstance(c, dict) and isinstance(c.get("message"), dict) for c in obj["choices"])


def error_message(obj: Any) -> str | None:
    """The message of an OpenAI-style error object, if `obj` is one."""
    if not isinstance(obj, dict) or not obj.get("error"):
        return None
    inner = obj["error"]
    if isinstance(inner, dict):
        message = inner.get("message")
        return message if isinstance(message, str) and message else "an unnamed error"
    return str(inner)


def answer_bytes(completion: Completion) -> int:
    """The size of an answer as the cap counts it: text, reasoning, tool names and arguments."""
    parts = [completion.content, completion.reasoning]
    for call in completion.tool_calls:
        parts += [call.name, call.arguments]
    return sum(len(p.encode("utf-8")) for p in parts)


def _usage(raw: Any) -> TokenUsage | None:
    if not isinstance(raw, dict):
        return None
    return TokenUsage(_int(raw.get("prompt_tokens")), _int(raw.get("completion_tokens")))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _arguments_text(value: Any) -> str:
    # A few servers send the arguments as an object rather than JSON text.
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return _text(value)


def _reasoning(message: Mapping[str, Any]) -> str:
    return _text(message.get("reasoning_content")) or _text(message.get("reasoning"))


class StreamAssembler:
    """Collects streamed chunks into deltas for the caller and one final Completion.

    `tools` is the offered tools (name -> parameters schema); with any, text
    that may be a tool call is held back from the deltas until the end.
    """

    def __init__(self, max_bytes: int | None = None, tools: Mapping[str, dict] | None = None):
        self.max_bytes = max_bytes
        self.tools = dict(tools or {})
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.finish_reason: str | None = None
        self.usage: TokenUsage | None = None
        self.size = 0
        self.chunks = 0
        self._held = HeldBackText() if self.tools else None

    def _grow(self, piece: str) -> None:
        self.size += len(piece.encode("utf-8"))
        if self.max_bytes is not None and self.size > self.max_bytes:
            raise AnswerTooLarge(self.size)

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        self.chunks += 1
        events: list[StreamEvent] = []
        usage = _usage(chunk.get("usage"))
        if usage is not None:
            self.usage = usage
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or _int(choice.get("index")) != 0:
                continue  # we ask for one choice; others are not ours to show
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                continue
            thought = _reasoning(delta)
            if thought:
                self._grow(thought)
                self.reasoning.append(thought)
                events.append(ReasoningDelta(thought))
            text = _text(delta.get("content"))
            if text:
                self._grow(text)
                self.content.append(text)
                shown = self._held.feed(text) if self._held is not None else text
                if shown:
                    events.append(TextDelta(shown))
            for tc in delta.get("tool_calls") or []:
                if isinstance(tc, dict):
                    events.append(self._feed_call(tc))
        return events

    def _feed_call(self, tc: Mapping[str, Any]) -> ToolCallDelta:
        call_id = _text(tc.get("id")) or None
        fn = _mapping(tc.get("function"))
        name = _text(fn.get("name")) or None
        fragment = _arguments_text(fn.get("arguments"))
        index = tc.get("index") if isinstance(tc.get("index"), int) else None
        if index is None:
            # Some servers omit the index: a new id opens a new call, anything
            # else continues the latest one.
            known = next((i for i, c in self.calls.items() if call_id and c["id"] == call_id), None)
            if known is not None:
                index = known
            elif call_id or not self.calls:
                index = max(self.calls, default=-1) + 1
            else:
                index = max(self.calls)
        slot = self.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        if call_id and not slot["id"]:
            slot["id"] = call_id
        if name and name != slot["name"]:
            # Most servers send the name once; a few split it across chunks.
            slot["name"] = name if not slot["name"] else slot["name"] + name
            self._grow(name)
        self._grow(fragment)
        slot["arguments"] += fragment
        return ToolCallDelta(index=index, id=call_id, name=name, arguments_fragment=fragment)

    def finish(self) -> tuple[list[StreamEvent], Completion]:
        """The held-back text that turned out to be prose, and the Completion."""
        calls = [
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
            for i, c in sorted(self.calls.items())
        ]
        content = "".join(self.content)
        found = recognise_in(content, calls, self.tools)
        completion = build_completion(
            content, calls, self.finish_reason, self.usage, "".join(self.reasoning), found
        )
        tail: list[StreamEvent] = []
        if self._held is not None:
            rest = self._held.finish(found)
            if rest:
                tail.append(TextDelta(rest))
        return tail, completion

    def completion(self) -> Completion:
        return self.finish()[1]


def recognise_in(
    content: str, calls: list[ToolCall], tools: Mapping[str, dict] | None
) -> Recognised | None:
    """Tool calls written as text, looked for only when tools were offered and none came natively."""
    if not tools or calls:
        return None
    return recognise_tool_calls(content, tools)


def build_completion(
    content: str,
    calls: list[ToolCall],
    finish_reason: str | None,
    usage: TokenUsage | None,
    reasoning: str,
    found: Recognised | None = None,
) -> Completion:
    if found is not None:
        calls = [ToolCall(text_call_id(), c.name, c.arguments) for c in found.calls]
        content = found.content
        if finish_reason in (None, "stop"):
            finish_reason = "tool_calls"
    return Completion(
        content=content,
        tool_calls=calls,
        finish_reason=finish_reason,
        usage=usage,
        reasoning=reasoning,
    )


def completion_from_body(
    body: Mapping[str, Any], tools: Mapping[str, dict] | None = None
) -> Completion:
    """A whole (non-streamed) chat-completion body as a Completion."""
    usage = _usage(body.get("usage"))
    choices = [c for c in body.get("choices") or [] if isinstance(c, dict)]
    choice = next(
        (c for c in choices if _int(c.get("index")) == 0), choices[0] if choices else None
    )
    if choice is None:
        return Completion(content="", usage=usage)
    msg = _mapping(choice.get("message"))
    calls = []
    for i, tc in enumerate(msg.get("tool_calls") or []):
        if not isinstance(tc, dict):
            continue
        fn = _mapping(tc.get("function"))
        calls.append(
            ToolCall(
                id=_text(tc.get("id")) or f"call_{i}",
                name=_text(fn.get("name")),
                arguments=_arguments_text(fn.get("arguments")),
            )
        )
    finish = choice.get("finish_reason")
    content = _text(msg.get("content"))
    return build_completion(
        content,
        calls,
        str(finish) if finish else None,
        usage,
        _reasoning(msg),
        recognise_in(content, calls, tools),
    )
