"""Turns that are not the tool loop: a greeting or a question about the conversation (one
call without tools), and `:plan` (one planning call whose plan is the answer)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from hello_tui.agent.turn import Turn
from hello_tui.core.display import ChatMessage
from hello_tui.core.events import Notice, TurnFailed
from hello_tui.tools.planner import make_plan

if TYPE_CHECKING:
    from hello_tui.agent.loop import Agent

HISTORY_FOR_RECAP = 12


async def direct_answer(agent: Agent, turn: Turn, route: str) -> None:
    """Greetings and history questions: one model call without tools."""
    system = await asyncio.to_thread(agent.prompts.system_prompt, "tools")
    if route == "history":
        shown = agent.session.display[:-1]  # what the user saw, before this question
        recent = [e for e in shown if isinstance(e, ChatMessage)]
        lines = [f"{e.role}: {e.text}" for e in recent if e.role in ("user", "assistant")]
        transcript = "\n".join(lines[-HISTORY_FOR_RECAP:])
        user = (
            "Answer from the conversation below only, without tools.\n\n"
            f"Conversation so far:\n{transcript or '(nothing yet in this session)'}\n\n"
            f"Question: {turn.task}"
        )
    else:
        user = (
            f"{turn.task}\n\n(The user greeted you. Reply in one or two short sentences, "
            "in the user's language, and say what you can help with in this repository.)"
        )
    turn.messages.append({"role": "user", "content": turn.task})
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    completion = await agent.model.stream(turn, messages, None, "answer")
    text = completion.content.strip()
    await agent.finish(turn, text or "Hello! What should I work on?", "direct", stream=not text)


async def plan_turn(agent: Agent, turn: Turn, goal: str) -> None:
    """`:plan GOAL`: one planning call, its plan shown as the answer."""

    async def complete(messages: list[dict[str, Any]], max_tokens: int) -> str:
        return (await agent.model.stream(turn, messages, None, "answer")).content

    turn.messages.append({"role": "user", "content": f"Make a plan for: {goal}"})
    result = await make_plan(goal, None, agent.settings, complete)
    data = result.data if isinstance(result.data, dict) else {}
    if result.status == "error" or not data.get("plan"):
        await agent.end_turn(turn, TurnFailed(error=result.text))
        return
    problems = data.get("problems") or []
    if problems:
        note = "This plan does not have the expected shape: " + "; ".join(problems) + "."
        agent.emit(Notice(text=note, level="warning"))
    await agent.finish(turn, str(data["plan"]), "plan", stream=False)
