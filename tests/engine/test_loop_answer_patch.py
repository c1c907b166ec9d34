"""A patch written in the final answer goes through review; the answer is always shown."""

from __future__ import annotations

from hello_tui.core.approval import PolicyApprover
from hello_tui.core.events import ToolCallFinished, TurnFinished
from tests.engine.agent_kit import answer_text, collect, of, open_engine, saved
from tests.support.scripted_model import text

PATCH_ANSWER = (
    "Action: Finish[Here is the fix:\n"
    "*** Begin Patch\n"
    "*** Add File: hello.txt\n"
    "+hello from the answer\n"
    "*** End Patch\n"
    "Review it please.]"
)


async def test_patch_in_answer_applied_with_approval(tmp_path, scripted_server, model_settings):
    server = scripted_server([text(PATCH_ANSWER)])
    engine = await open_engine(
        model_settings(tmp_path, server, protocol="react"), approver=PolicyApprover(yes=True)
    )
    events = await collect(engine, "add hello.txt")
    assert isinstance(events[-1], TurnFinished)
    assert "Review it please." in answer_text(events)
    assert (tmp_path / "hello.txt").read_text() == "hello from the answer\n"
    result = of(events, ToolCallFinished)[-1]
    assert result.tool == "apply_patch" and result.status == "success"
    # The model learns what became of its patch on the next turn.
    assert saved(engine)["history"][-1]["content"].startswith("[patch from your answer]")


async def test_patch_in_answer_declined_headless(tmp_path, scripted_server, model_settings):
    server = scripted_server([text(PATCH_ANSWER)])
    engine = await open_engine(model_settings(tmp_path, server, protocol="react"), yes=False)
    events = await collect(engine, "add hello.txt")
    assert not (tmp_path / "hello.txt").exists()
    assert "Here is the fix:" in answer_text(events)
    result = of(events, ToolCallFinished)[-1]
    assert result.tool == "apply_patch" and "declined" in result.text
