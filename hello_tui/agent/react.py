"""The ReAct text dialect: parse `Thought:` / `Action: tool[{json}]` / `Action: Finish[answer]`.

Models write this loosely, so the parser is tolerant: Chinese markers
(思考 / 行动), full-width colons, Markdown bold around markers, code fences,
JSON wrapped in extra brackets or followed by a stray `]`, the first balanced
`{…}` anywhere in the input, `Final Answer:` for Finish, and a hallucinated
`Observation:` after the action (cut off: only the real tool may observe).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

_MARK = r"^[ \t>*_`#-]*"
_COLON = r"[ \t*_]*[:：][ \t*_]*"
THOUGHT_RE = re.compile(_MARK + r"(?:thought|thinking|思考)" + _COLON, re.IGNORECASE | re.MULTILINE)
ACTION_RE = re.compile(_MARK + r"(?:action|行动|动作)" + _COLON, re.IGNORECASE | re.MULTILINE)
FINAL_RE = re.compile(_MARK + r"(?:final answer|最终答案)" + _COLON, re.IGNORECASE | re.MULTILINE)
OBSERVATION_RE = re.compile(_MARK + r"(?:observation|观察)" + _COLON, re.IGNORECASE | re.MULTILINE)
TOOL_NAME_RE = re.compile(r"\s*`?([A-Za-z_][\w.\-]*)`?\s*")
FINISH_NAMES = {"finish", "final", "final_answer", "answer", "完成"}


@dataclass
class ReactStep:
    kind: Literal["tool", "finish", "none"]
    thought: str = ""
    tool: str = ""
    raw_input: str = ""
    arguments: Any = None
    answer: str = ""
    error: str | None = None  # what to tell the model when the action cannot be used
    # The reply up to the end of the action (a hallucinated Observation removed).
    text: str = ""


def _strip_fences(text: str) -> str:
    return re.sub(r"^[ \t]*```[\w-]*[ \t]*$", "", text, flags=re.MULTILINE)


def first_balanced_object(text: str) -> str | None:
    """The first `{…}` with balanced braces, honouring JSON strings."""
    start = text.find("{")
    while start != -1:
        depth = 0
        in_str = False
        escape = False
        for i in range(start, len(text)):
            ch = text[i]
            if in_str:
                if escape:
                    escape = False
                elif ch == "\\":
                    escape = True
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start : i + 1]
        start = text.find("{", start + 1)
    return None


def parse_action_input(raw: str) -> tuple[Any, str | None]:
    """Turn the text inside `tool[...]` into arguments; (value, error message)."""
    text = raw.strip()
    if not text:
        return None, None
    candidates = [text]
    trimmed = text
    while trimmed.endswith("]") and not trimmed.startswith("["):
        trimmed = trimmed[:-1].rstrip()
        candidates.append(trimmed)
    if text.startswith("[") and text.endswith("]"):
        candidates.append(text[1:-1].strip())
    for cand in candidates:
        try:
            value = json.loads(cand)
        except ValueError:
            continue
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
            value = value[0]
        return value, None
    obj = first_balanced_object(text)
    if obj is not None:
        try:
            return json.loads(obj), None
        except ValueError as exc:
            return None, f"The action input is not valid JSON ({exc}): {obj[:300]}"
    if text.lstrip("[").startswith("{"):
        return None, f"The action input is not valid JSON (unbalanced braces): {text[:300]}"
    # A plain string: the registry maps it onto the tool's single required argument.
    return text.strip('"').strip("'"), None


def _bracket_body(rest: str) -> str:
    """`[body]` or `(body)` → body (up to the last closing bracket); anything else as is."""
    stripped = rest.strip()
    if stripped[:1] in "[(":
        closer = "]" if stripped[0] == "[" else ")"
        end = stripped.rfind(closer)
        return stripped[1:end] if end > 0 else stripped[1:]
    if stripped[:1] in ":：":
        return stripped[1:]
    return stripped


def parse_react(reply: str) -> ReactStep:
    text = _strip_fences(reply or "")
    action_m = ACTION_RE.search(text)
    final_m = FINAL_RE.search(text)
    # Cut a hallucinated observation (and whatever follows it) after the action.
    anchor = action_m or final_m
    if anchor:
        obs = OBSERVATION_RE.search(text, anchor.end())
        if obs:
            text = text[: obs.start()].rstrip()
    thought_m = THOUGHT_RE.search(text)
    thought = ""
    if thought_m:
        end = anchor.start() if anchor and anchor.start() > thought_m.end() else len(text)
        thought = text[thought_m.end() : end].strip()
    elif anchor:
        thought = text[: anchor.start()].strip()

    if final_m and (not action_m or final_m.start() < action_m.start()):
        answer = text[final_m.end() :].strip()
        return ReactStep("finish", thought=thought, answer=answer, text=text)
    if not action_m:
        if thought_m:
            return ReactStep(
                "none",
                thought=thought,
                text=text,
                error="Your reply has a Thought but no Action. Reply with "
                "`Action: tool_name[{json arguments}]` or `Action: Finish[your answer]`.",
            )
        return ReactStep("none", text=text)

    body = text[action_m.end() :]
    name_m = TOOL_NAME_RE.match(body)
    if not name_m:
        return ReactStep(
            "none",
            thought=thought,
            text=text,
            error="The Action line has no tool name. Write `Action: tool_name[{json}]` "
            "or `Action: Finish[answer]`.",
        )
    name = name_m.group(1)
    rest = body[name_m.end() :]
    if name.lower() in FINISH_NAMES:
        return ReactStep("finish", thought=thought, answer=_bracket_body(rest).strip(), text=text)
    raw_input = _bracket_body(rest)
    arguments, error = parse_action_input(raw_input)
    return ReactStep(
        "tool",
        thought=thought,
        tool=name,
        raw_input=raw_input.strip(),
        arguments=arguments,
        error=error,
        text=text,
    )
