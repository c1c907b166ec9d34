"""Tool calls that local models write as text in `content`, recognised as real tool calls.

Servers without a tool-call parser (Ollama templates, llama.cpp without
--jinja, vLLM without --tool-call-parser) hand the model's tool-call syntax
back as plain text. These forms are recognised:

- Hermes / Qwen: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, one
  or several; a last block missing its closing tag counts when its JSON is whole;
- Qwen3-Coder: `<function=NAME><parameter=KEY>VALUE</parameter></function>`,
  inside `<tool_call>` or bare; values are typed by the tool's JSON schema;
- a bare JSON object `{"name": ..., "arguments": {...}}` (or a list of them)
  that is the whole message, alone or in one ```json fence;
- Mistral: `[TOOL_CALLS][{"name": ..., "arguments": {...}}]` and the newer
  `[TOOL_CALLS]name[ARGS]{...}` (optionally with `[CALL_ID]id`).

Safety rules: only names of tools that were offered; all or nothing (one
unreadable or unknown call leaves the whole message as text); tags inside
code (fenced blocks, inline backticks) are quoted material, never calls; bare
JSON counts only when it is the entire message. Everything here is pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

TOOL_CALL_OPEN = "<tool_call>"
TOOL_CALL_CLOSE = "</tool_call>"
FUNCTION_OPEN = "<function="
FUNCTION_CLOSE = "</function>"
MISTRAL_MARKER = "[TOOL_CALLS]"
MARKERS = (TOOL_CALL_OPEN, FUNCTION_OPEN, MISTRAL_MARKER)
_LONGEST_MARKER = max(len(m) for m in MARKERS)

_FENCE = re.compile(
    r"^[ ]{0,3}(`{3,}|~{3,})([^\n]*)\n(.*?)(?:^[ ]{0,3}\1[ \t]*$|\Z)", re.DOTALL | re.MULTILINE
)
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_JSON_FENCE_LANGS = frozenset({"", "json", "jsonc", "json5", "tool_call", "tool_code"})
_FUNCTION = re.compile(r"<function=([^>\n]+)>(.*?)</function>", re.DOTALL)
_FUNCTION_HEAD = re.compile(r"<function=([^>\n]+)>")
_PARAMETER = re.compile(r"<parameter=([^>\n]+)>")
_MISTRAL_NAME = re.compile(r"\s*([A-Za-z0-9_.\-]+)(?:\[CALL_ID\]([A-Za-z0-9_\-]*))?\[ARGS\]")
_CALL_KEYS = frozenset({"name", "arguments", "parameters", "id", "type"})


@dataclass(frozen=True)
class TextToolCall:
    name: str
    arguments: str  # a JSON object as text


@dataclass(frozen=True)
class Recognised:
    calls: list[TextToolCall]
    content: str  # the prose that remains once the calls are taken out


class _NotACall(Exception):
    """This text is not a (complete, offered) tool call; leave the message as it is."""


def offered_tools(tools: Iterable[dict] | None) -> dict[str, dict]:
    """Name -> parameters schema of the tools in an OpenAI `tools` request field."""
    offered: dict[str, dict] = {}
    for tool in tools or ():
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            params = fn.get("parameters")
            offered[fn["name"]] = params if isinstance(params, dict) else {}
    return offered


def recognise_tool_calls(content: str, tools: Mapping[str, dict]) -> Recognised | None:
    """The tool calls written in `content`, or None when it holds none (or one not allowed)."""
    if not tools or not content.strip():
        return None
    try:
        found = _tagged_calls(content, tools)
        if found is None:
            found = _bare_json_calls(content, tools)
    except _NotACall:
        return None
    return found


# ---------------------------------------------------------------- tagged forms


def code_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds code (fenced blocks and inline backtick spans)."""
    spans: list[tuple[int, int]] = []
    last = 0
    for fence in _FENCE.finditer(text):
        spans.extend(_inline_spans(text, last, fence.start()))
        spans.append((fence.start(), fence.end()))
        last = fence.end()
    spans.extend(_inline_spans(text, last, len(text)))
    return spans


def _inline_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(m.start() + start, m.end() + start) for m in _INLINE_CODE.finditer(text[start:end])]


def _next_marker(text: str, start: int) -> tuple[int, str] | None:
    """The next marker at or after `start` that is not inside code.

    Code spans are found in the rest of the text only, so a fence inside an
    earlier call's argument cannot hide a later call.
    """
    rest = text[start:]
    spans = code_spans(rest)
    pos = 0
    while True:
        hits = [(i, m) for m in MARKERS if (i := rest.find(m, pos)) >= 0]
        if not hits:
            return None
        index, marker = min(hits)
        inside = next((e for s, e in spans if s <= index < e), None)
        if inside is None:
            return start + index, marker
        pos = inside


def _tagged_calls(content: str, tools: Mapping[str, dict]) -> Recognised | None:
    calls: list[TextToolCall] = []
    prose: list[str] = []
    pos = 0
    while (hit := _next_marker(content, pos)) is not None:
        index, marker = hit
        prose.append(content[pos:index])
        if marker == TOOL_CALL_OPEN:
            found, pos = _tool_call_block(content, index, tools)
        elif marker == FUNCTION_OPEN:
            found, pos = _function_block(content, index, tools)
        else:
            found, pos = _mistral_calls(content, index, tools)
        calls.extend(found)
    if not calls:
        return None
    prose.append(content[pos:])
    return Recognised(calls, _join_prose(prose))


def _join_prose(parts: list[str]) -> str:
    kept = [p.strip() for p in parts if p.strip()]
    return "\n\n".join(kept)


def _tool_call_block(
    text: str, index: int, tools: Mapping[str, dict]
) -> tuple[list[TextToolCall], int]:
    body_start = index + len(TOOL_CALL_OPEN)
    close = text.find(TOOL_CALL_CLOSE, body_start)
    end = len(text) if close < 0 else close + len(TOOL_CALL_CLOSE)
    body = text[body_start : len(text) if close < 0 else close].strip()
    if body.startswith(("{", "[")):
        value = _whole_json(body)  # an unclosed block counts only when its JSON is whole
        items = value if isinstance(value, list) else [value]
        if not items:
            raise _NotACall("an empty list in <tool_call>")
        return [_call_from_object(item, tools) for item in items], end
    if FUNCTION_OPEN in body:
        calls: list[TextToolCall] = []
        pos = 0
        while (at := body.find(FUNCTION_OPEN, pos)) >= 0:
            if body[pos:at].strip():
                raise _NotACall("text between functions of one <tool_call>")
            call, pos = _function_at(body, at, tools, block_end_closes=True)
            calls.append(call)
        if body[pos:].strip() or not calls:
            raise _NotACall("text after the function in <tool_call>")
        return calls, end
    raise _NotACall("<tool_call> holds neither JSON nor a <function=...>")


def _function_block(
    text: str, index: int, tools: Mapping[str, dict]
) -> tuple[list[TextToolCall], int]:
    call, end = _function_at(text, index, tools, block_end_closes=False)
    return [call], end


def _function_at(
    text: str, index: int, tools: Mapping[str, dict], *, block_end_closes: bool
) -> tuple[TextToolCall, int]:
    match = _FUNCTION.match(text, index)
    if match is not None:
        name, body, end = match.group(1), match.group(2), match.end()
    elif block_end_closes:
        # Inside a closed <tool_call> block the block's end also ends the function.
        head = _FUNCTION_HEAD.match(text, index)
        if head is None:
            raise _NotACall("malformed <function=...>")
        name, body, end = head.group(1), text[head.end() :], len(text)
    else:
        raise _NotACall("<function=...> without </function>")
    name = name.strip()
    schema = _schema_for(name, tools)
    return TextToolCall(name, _dump(_function_parameters(body, schema))), end


def _function_parameters(body: str, schema: dict) -> dict[str, Any]:
    found = schema.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    heads = list(_PARAMETER.finditer(body))
    if not heads and body.strip():
        raise _NotACall("text inside <function=...> that is not a parameter")
    if heads and body[: heads[0].start()].strip():
        raise _NotACall("text before the first parameter")
    arguments: dict[str, Any] = {}
    for i, head in enumerate(heads):
        stop = heads[i + 1].start() if i + 1 < len(heads) else len(body)
        raw = body[head.end() : stop]
        close = raw.find("</parameter>")
        if close >= 0:
            if raw[close + len("</parameter>") :].strip():
                raise _NotACall("text between parameters")
            raw = raw[:close]
        # The template puts the value on its own lines: one newline each side is framing.
        raw = raw.removeprefix("\n").removesuffix("\n")
        key = head.group(1).strip()
        arguments[key] = _typed_value(raw, props.get(key))
    return arguments


def _typed_value(raw: str, prop: Any) -> Any:
    """Convert a Qwen3-Coder parameter's text by its schema type, as its reference parser does."""
    kind = _schema_type(prop)
    if kind is None or kind == "string":
        return raw
    text = raw.strip()
    if text.lower() == "null":
        return None
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            number = float(text)
            return int(number) if number.is_integer() and "." not in text else number
        if kind == "boolean":
            if text.lower() in ("true", "false"):
                return text.lower() == "true"
            return raw
        if kind in ("object", "array"):
            return json.loads(text)
    except ValueError:
        return raw  # the tool's validation tells the model what was wrong
    return raw


def _schema_type(prop: Any) -> str | None:
    if not isinstance(prop, dict):
        return None
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if isinstance(kind, str):
        return kind
    for key in ("anyOf", "oneOf"):
        options = prop.get(key)
        if isinstance(options, list):
            for option in options:
                found = _schema_type(option)
                if found and found != "null":
                    return found
    return None


def _mistral_calls(
    text: str, index: int, tools: Mapping[str, dict]
) -> tuple[list[TextToolCall], int]:
    pos = index + len(MISTRAL_MARKER)
    rest = text[pos:].lstrip()
    if rest.startswith("["):
        start = len(text) - len(rest)
        value, end = _json_at(text, start)
        if not isinstance(value, list) or not value:
            raise _NotACall("[TOOL_CALLS] without a list of calls")
        return [_call_from_object(item, tools) for item in value], end
    match = _MISTRAL_NAME.match(text, pos)
    if match is None:
        raise _NotACall("[TOOL_CALLS] without name[ARGS]")
    name = match.group(1)
    _schema_for(name, tools)
    arguments, end = _json_at(text, _skip_space(text, match.end()))
    if not isinstance(arguments, dict):
        raise _NotACall("[ARGS] is not a JSON object")
    return [TextToolCall(name, _dump(arguments))], end


# ---------------------------------------------------------------- bare JSON


def _bare_json_calls(content: str, tools: Mapping[str, dict]) -> Recognised | None:
    body = content.strip()
    fence = _FENCE.fullmatch(body)
    if fence is not None:
        if fence.group(2).strip().lower() not in _JSON_FENCE_LANGS:
            return None
        body = fence.group(3).strip()
    if not body.startswith(("{", "[")):
        return None
    try:
        value = _whole_json(body)
    except _NotACall:
        return None
    items = value if isinstance(value, list) else [value]
    if not items or not all(_looks_like_call(item) for item in items):
        return None
    return Recognised([_call_from_object(item, tools) for item in items], "")


def _looks_like_call(item: Any) -> bool:
    """The strict shape a bare object needs before it is taken for a call at all."""
    if not isinstance(item, dict):
        return False
    if isinstance(item.get("function"), dict) and set(item) <= {"type", "function", "id"}:
        return _looks_like_call(item["function"])
    return (
        isinstance(item.get("name"), str)
        and ("arguments" in item or "parameters" in item)
        and set(item) <= _CALL_KEYS
    )


# ---------------------------------------------------------------- shared


def _call_from_object(value: Any, tools: Mapping[str, dict]) -> TextToolCall:
    if isinstance(value, dict) and isinstance(value.get("function"), dict):
        value = value["function"]
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise _NotACall("a call object needs a name")
    name = value["name"].strip()
    _schema_for(name, tools)
    raw = value.get("arguments", value.get("parameters", {}))
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except ValueError:
            raise _NotACall("arguments are text that is not JSON") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise _NotACall("arguments are not an object")
    return TextToolCall(name, _dump(raw))


def _schema_for(name: str, tools: Mapping[str, dict]) -> dict:
    if name not in tools:
        raise _NotACall(f"{name!r} is not an offered tool")
    return tools[name]


def _whole_json(text: str) -> Any:
    value, end = _json_at(text, 0)
    if text[end:].strip():
        raise _NotACall("text after the JSON")
    return value


def _json_at(text: str, start: int) -> tuple[Any, int]:
    try:
        return json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        raise _NotACall("not whole JSON") from None


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _dump(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False)


# ---------------------------------------------------------------- streaming


class HeldBackText:
    """Decides which streamed text may be shown at once and which may be a tool call.

    Text from a marker on (and a message that opens like bare JSON) is held
    back until the answer is complete; then `finish` releases what turned out
    to be prose, so the raw tool-call syntax is never shown as the answer.
    Work per delta is bounded by the delta and a marker's length, so a long
    answer streams in linear time.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []  # everything received
        self._shown: list[str] = []  # what went out
        self._pending = ""  # received, not shown yet, not yet held for good
        self._visible = False  # something other than whitespace went out
        self._holding = False

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def feed(self, piece: str) -> str:
        """Append a delta; return the part of the text that may be shown now."""
        self._parts.append(piece)
        if self._holding:
            return ""
        pending = self._pending + piece
        end = self._safe_end(pending)
        out, self._pending = pending[:end], pending[end:]
        if out:
            self._shown.append(out)
            self._visible = self._visible or bool(out.strip())
        return out

    def finish(self, recognised: Recognised | None) -> str:
        """The rest to show once the answer is complete."""
        text = self.text
        shown_text = "".join(self._shown)
        if recognised is None:
            return text[len(shown_text) :]
        shown = shown_text.strip()
        prose = recognised.content
        if shown:
            if not prose.startswith(shown):
                return ""
            prose = prose[len(shown) :]
        prose = prose.strip()
        if not prose:
            return ""
        return "\n\n" + prose if shown else prose

    def _safe_end(self, pending: str) -> int:
        """How much of `pending` may go out now (setting `_holding` when the rest waits)."""
        if not self._visible:
            opening = pending.lstrip()
            if not opening:
                return 0
            if opening.startswith("{") or (
                opening.startswith("[") and opening[1:].lstrip().startswith("{")
            ):
                self._holding = True
                return 0
            if opening.startswith("[") and not opening[1:].strip():
                return 0
            if opening.startswith(("```", "~~~")) or "```".startswith(opening):
                first_line, newline, _ = opening.partition("\n")
                if not newline:
                    return 0
                if first_line.strip("`~ \t").lower() in _JSON_FENCE_LANGS:
                    self._holding = True
                    return 0
        hits = [i for m in MARKERS if (i := pending.find(m)) >= 0]
        if hits:
            self._holding = True
            return min(hits)
        keep = 0
        tail = pending[-_LONGEST_MARKER:]
        if "<" not in tail and "[" not in tail:
            return len(pending)  # no marker can be starting: the common case, made cheap
        for marker in MARKERS:
            for size in range(min(len(marker) - 1, len(pending)), 0, -1):
                if pending.endswith(marker[:size]):
                    keep = max(keep, size)
                    break
        return len(pending) - keep
