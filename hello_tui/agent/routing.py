"""Recognising turns that need no tools, and tasks that deserve a todo list.

Greetings must match exactly (after trimming punctuation); a history question
must be the whole message, so "add a recap section to the README" stays a task.
"""

from __future__ import annotations

import re
from typing import Literal

GREETINGS = {
    "hi",
    "hello",
    "hey",
    "hi there",
    "hello there",
    "hey there",
    "yo",
    "howdy",
    "good morning",
    "good afternoon",
    "good evening",
    "你好",
    "您好",
    "在吗",
    "在么",
    "嗨",
    "哈喽",
    "哈啰",
    "早上好",
    "晚上好",
    "你好呀",
    "嗨喽",
}

_PUNCT = " \t\r\n!.?,;~～！。？，；…、:：)）(（'\"“”"

_HISTORY_PATTERNS = [
    re.compile(p)
    for p in (
        (
            r"(can you |could you |please |pls )?(give me |do )?(a |quick )?recap"
            r"( please| so far| for me| of (our|the|this) (conversation|chat|session))?( please)?"
        ),
        (
            r"(can you |could you |please )?summari[sz]e (our|the|this) (conversation|chat|session)"
            r"( so far)?( please)?"
        ),
        (
            r"what (did|have) i (say|said|ask|asked|tell you|told you)"
            r"( you)?( before| earlier| so far| just now| previously)?"
        ),
        r"what (were|are) we (talking about|doing|working on)( before| earlier| so far)?",
        r"(我|我们|你)?(刚才|刚刚|之前|前面|上面|先前)?(都)?(说了|说过|聊了|问了|讲了)(些)?(什么|啥)(呢|吗|来着)?",
        r"(回顾|总结)(一下)?(我们的)?(对话|聊天)(内容)?",
    )
]

_MULTI_STEP_ZH = (
    "分步",
    "步骤",
    "三步",
    "两步",
    "多步",
    "计划",
    "改造",
    "完成后",
    "逐步",
    "一步一步",
)
_MULTI_STEP_EN = re.compile(
    r"\b(step[- ]by[- ]step|multi[- ]?step|steps|plan|first\b.*\bthen|afterwards|todo list)\b",
    re.IGNORECASE,
)

TurnRoute = Literal["empty", "greeting", "history", "task"]


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().strip(_PUNCT).lower())


def is_greeting(text: str) -> bool:
    return _normalise(text) in GREETINGS


def is_history_question(text: str) -> bool:
    norm = _normalise(text)
    return bool(norm) and any(p.fullmatch(norm) for p in _HISTORY_PATTERNS)


def route_turn(text: str) -> TurnRoute:
    if not text.strip():
        return "empty"
    if is_greeting(text):
        return "greeting"
    if is_history_question(text):
        return "history"
    return "task"


def wants_todo_list(text: str) -> bool:
    return any(w in text for w in _MULTI_STEP_ZH) or bool(_MULTI_STEP_EN.search(text))


TODO_NUDGE = (
    "[hint] This task has several steps: keep a todo list with the `todo` tool "
    "(one item in progress at a time) and update it as each step is done."
)
