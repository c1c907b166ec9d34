"""The two dialects of a step: native tool calls ("tools") and ReAct text ("react").

Each takes the model's completion for one step, runs what it asks for through
`ToolCalls`, records the messages in the turn, and returns how the step ended.
"""

from __future__ import annotations

from collections.abc import Callable

from hello_tui.agent.messages import decode_tool_arguments
from hello_tui.agent.react import parse_react
from hello_tui.agent.tool_calls import ToolCalls
from hello_tui.agent.turn import CONTINUE, REPEATED, StepOutcome, Turn, answer, repeat_message
from hello_tui.core.events import Event, Notice
from hello_tui.llm import Completion

EMPTY_REPLY_NOTE = (
    "Your last message was empty. Call a tool to make progress, or give your final answer."
)
EMPTY_REPLY_NOTICE = "The model sent an empty message; asking it again."


def _empty_reply(turn: Turn, emit: Callable[[Event], None]) -> StepOutcome:
    turn.messages.append({"role": "user", "content": EMPTY_REPLY_NOTE})
    emit(Notice(text=EMPTY_REPLY_NOTICE))
    return CONTINUE


async def tools_step(
    turn: Turn, step: int, completion: Completion, calls: ToolCalls, emit: Callable[[Event], None]
) -> StepOutcome:
    if not completion.tool_calls:
        text = completion.content.strip()
        return answer(text, stream=False) if text else _empty_reply(turn, emit)
    decoded = [decode_tool_arguments(c.name, c.arguments) for c in completion.tool_calls]
    turn.messages.append(
        {
            "role": "assistant",
            "content": completion.content or None,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    # Unreadable arguments are stored as {} (the error is in the result),
                    # so they are never replayed to the model, or to a strict server.
                    "function": {
                        "name": c.name,
                        "arguments": c.arguments if arguments is not None else "{}",
                    },
                }
                for c, (arguments, _) in zip(completion.tool_calls, decoded, strict=True)
            ],
        }
    )
    turn.open_calls = [c.id for c in completion.tool_calls]
    repeated = False
    for call, (arguments, error) in zip(completion.tool_calls, decoded, strict=True):
        if arguments is None:
            model_text = error or "The arguments could not be read."
            calls.not_run(step, call.id, call.name, {"raw": call.arguments}, model_text)
        elif turn.is_repeat(call.name, arguments):
            repeated = True
            model_text = repeat_message(call.name)
            calls.not_run(step, call.id, call.name, arguments, model_text)
        else:
            model_text = await calls.run(turn, step, call.id, call.name, arguments)
        turn.messages.append({"role": "tool", "tool_call_id": call.id, "content": model_text})
        turn.open_calls.remove(call.id)
    return REPEATED if repeated else CONTINUE


async def react_step(
    turn: Turn, step: int, completion: Completion, calls: ToolCalls, emit: Callable[[Event], None]
) -> StepOutcome:
    parsed = parse_react(completion.content)
    if parsed.kind == "finish":
        text = parsed.answer.strip() or parsed.thought.strip()
        if text:
            return answer(text, stream=True)
    if parsed.kind == "none" and parsed.error is None and parsed.text.strip():
        # A reply with no markers at all is taken as the answer itself.
        return answer(parsed.text.strip(), stream=True)
    if not parsed.text.strip():
        return _empty_reply(turn, emit)
    turn.messages.append({"role": "assistant", "content": parsed.text})
    call_id = f"react-{turn.number}-{step}"
    if parsed.kind != "tool" or parsed.error is not None:
        problem = parsed.error or "Finish[...] was empty: put your answer inside the brackets."
        if parsed.kind == "tool":
            calls.not_run(step, call_id, parsed.tool, {"raw": parsed.raw_input}, problem)
        turn.messages.append({"role": "user", "content": f"Observation: {problem}"})
        return CONTINUE
    shown = parsed.arguments if isinstance(parsed.arguments, dict) else {"input": parsed.arguments}
    if turn.is_repeat(parsed.tool, parsed.arguments):
        message = repeat_message(parsed.tool)
        calls.not_run(step, call_id, parsed.tool, shown, message)
        turn.messages.append({"role": "user", "content": f"Observation: {message}"})
        return REPEATED
    turn.react_pending = True
    model_text = await calls.run(turn, step, call_id, parsed.tool, parsed.arguments, shown=shown)
    turn.messages.append({"role": "user", "content": f"Observation: {model_text}"})
    turn.react_pending = False
    return CONTINUE
