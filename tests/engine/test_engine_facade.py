"""The engine facade: plans as turns, todos per session, model and mode, undo and restore
waiting for another process's write lock, patches committed while another process writes."""

from __future__ import annotations

import asyncio

import pytest

from hello_tui.core.approval import PolicyApprover
from hello_tui.core.display import ChatMessage
from hello_tui.core.events import (
    AssistantDelta,
    Notice,
    PatchResolved,
    TurnFinished,
    Usage,
    WriteLockWait,
)
from hello_tui.engine.types import PatchError
from hello_tui.tools.registry import ToolRegistry
from hello_tui.tools.todo import TodoTool
from hello_tui.tools.writes import ApplyPatchTool
from tests.engine.agent_kit import collect, of, open_engine, saved, transcript
from tests.support.scripted_model import call, text, tool_calls

GUARD = 30
PLAN = (
    "## Plan\n1. Read stats.py\n2. Run the tests\n3. Fix mean\n4. Add a test\n"
    "5. Rerun the tests\n\n## Risks\n- none\n\n## Validation\n- pytest passes\n"
)
PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"


async def test_plan_is_a_turn_streamed_recorded_and_charged(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text(PLAN, usage=(50, 20))])
    settings = model_settings(
        tmp_path, server, environ={"LLM_PRICE_INPUT": "1", "LLM_PRICE_OUTPUT": "1"}
    )
    engine = await open_engine(settings)
    events = [event async for event in engine.plan("fix the mean")]
    assert events[0].kind == "TurnStarted" and events[0].text == ":plan fix the mean"
    assert isinstance(events[-1], TurnFinished) and events[-1].reason == "plan"
    assert events[-1].answer == PLAN.strip()
    assert "".join(e.text for e in of(events, AssistantDelta)).strip() == PLAN.strip()
    assert [(u.prompt_tokens, u.session_prompt_tokens) for u in of(events, Usage)] == [(50, 50)]
    assert engine.usage.prompt_tokens == 50 and engine.usage.cost == pytest.approx(70 / 1e6)
    request = server.chat_requests[-1]
    assert "tools" not in request and "fix the mean" in request["messages"][-1]["content"]
    assert [e["type"] for e in transcript(engine)] == [e.kind for e in events]
    data = saved(engine)
    assert data["history"][-1] == {"role": "assistant", "content": PLAN.strip()}
    assert data["display"][-1]["role"] == "assistant"


async def test_a_plan_of_the_wrong_shape_says_so(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("## Plan\n1. do it\n")])
    engine = await open_engine(model_settings(tmp_path, server))
    events = [event async for event in engine.plan("fix it")]
    assert any("expected shape" in n.text for n in of(events, Notice))
    assert isinstance(events[-1], TurnFinished)


async def test_todos_belong_to_their_session(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [
            tool_calls([call("todo", {"action": "add", "title": "Read stats.py"})]),
            text("added"),
            tool_calls([call("todo", {"action": "list"})]),
            text("listed"),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server), ToolRegistry([TodoTool()]))
    await collect(engine, "keep a todo")
    first = engine.session_id
    assert [t["title"] for t in await engine.todos()] == ["Read stats.py"]
    await engine.new_session()
    assert await engine.todos() == []  # a new session shows an empty board
    await collect(engine, "what is on the list")
    listed = [m for m in server.chat_requests[-1]["messages"] if m["role"] == "tool"][-1]
    assert listed["content"] == "No todos."  # and the tool sees the same empty list
    await engine.load_session(first)
    assert [t["title"] for t in await engine.todos()] == ["Read stats.py"]


async def test_model_and_mode_switching(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("one"), text("two")])
    settings = model_settings(tmp_path, server)
    engine = await open_engine(settings)
    await collect(engine, "first")
    engine.set_model("other-model")
    engine.set_mode("read-only")
    await collect(engine, "second")
    assert [r["model"] for r in server.chat_requests] == ["scripted-model", "other-model"]
    assert settings.model == "scripted-model"  # the caller's settings are not changed
    assert engine.model == "other-model" and engine.mode == "read-only"
    assert saved(engine)["model"] == "other-model" and saved(engine)["mode"] == "read-only"
    with pytest.raises(ValueError, match="mode must be one of"):
        engine.set_mode("yolo")  # type: ignore[arg-type]
    resumed = await open_engine(settings, resume=engine.session_id)
    assert resumed.mode == "read-only"


async def _applied_patch(tmp_path, scripted_server, model_settings):
    (tmp_path / "a.txt").write_text("one\n")
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("done")])
    settings = model_settings(tmp_path, server)
    engine = await open_engine(
        settings, ToolRegistry([ApplyPatchTool()]), approver=PolicyApprover(yes=True)
    )
    await collect(engine, "change a.txt")
    assert (tmp_path / "a.txt").read_text() == "ONE\n"
    return engine, settings


async def test_undo_waits_for_another_writer_and_cancelling_ends_the_wait(
    tmp_path, scripted_server, model_settings, hold_write_lock
):
    engine, settings = await _applied_patch(tmp_path, scripted_server, model_settings)
    holder = hold_write_lock(settings)
    waits: list[str] = []
    undo = asyncio.ensure_future(engine.undo(on_wait=waits.append))
    for _ in range(100):
        if waits:
            break
        await asyncio.sleep(0.05)
    assert waits and "another hello-tui writing this repo" in waits[0]
    undo.cancel()
    with pytest.raises(asyncio.CancelledError):
        await undo
    assert (tmp_path / "a.txt").read_text() == "ONE\n"  # the wait ended; nothing was written
    holder.release()
    reverted = await asyncio.wait_for(engine.undo(), GUARD)
    assert (tmp_path / "a.txt").read_text() == "one\n"
    assert reverted.text == "Undone: M a.txt"
    assert engine.display()[-1] == ChatMessage("result", "Undone: M a.txt", 1)
    assert saved(engine)["display"][-1]["text"] == "Undone: M a.txt"  # a resume shows it


async def test_undo_with_nothing_to_undo_raises_the_patch_error(tmp_path, model_settings):
    from tests.support.scripted_model import ScriptedModelServer

    with ScriptedModelServer([]) as server:
        engine = await open_engine(model_settings(tmp_path, server))
        with pytest.raises(PatchError, match="Nothing to undo"):
            await engine.undo()
        await engine.aclose()


async def test_restore_puts_back_a_backup_and_is_undoable(
    tmp_path, scripted_server, model_settings
):
    engine, _ = await _applied_patch(tmp_path, scripted_server, model_settings)
    backup = (await engine.backups())[0]
    compared = await engine.compare_backup(backup.name, "a.txt")
    assert (compared.old, compared.current) == ("one\n", "ONE\n")
    assert await engine.read_backup(backup.name, "a.txt") == b"one\n"
    reverted = await engine.restore(backup.name, "a.txt")
    assert (tmp_path / "a.txt").read_text() == "one\n"
    assert reverted.text.startswith(f"Restored from {backup.name}: M a.txt")
    await engine.undo()
    assert (tmp_path / "a.txt").read_text() == "ONE\n"
    notes = await engine.notes()
    assert "Patch applied" in [n.title for n in notes]
    assert (await engine.read_note(notes[-1].id)).id == notes[-1].id


async def test_a_patch_waits_for_another_writer_then_applies(
    tmp_path, scripted_server, model_settings, hold_write_lock
):
    (tmp_path / "a.txt").write_text("one\n")
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})]), text("done")])
    settings = model_settings(tmp_path, server)
    engine = await open_engine(
        settings, ToolRegistry([ApplyPatchTool()]), approver=PolicyApprover(yes=True)
    )
    holder = hold_write_lock(settings)
    kinds = []
    async for event in engine.run_turn("change a.txt"):
        kinds.append(event)
        if isinstance(event, WriteLockWait) and event.phase == "waiting":
            assert (tmp_path / "a.txt").read_text() == "one\n"
            holder.release()
    waits = [e.phase for e in of(kinds, WriteLockWait)]
    assert waits == ["waiting", "acquired"]
    assert of(kinds, PatchResolved)[0].applied
    assert (tmp_path / "a.txt").read_text() == "ONE\n"
    notices = [e.text for e in engine.display() if isinstance(e, ChatMessage)]
    assert any("another hello-tui writing this repo" in n for n in notices)


async def test_cancelling_while_a_patch_waits_for_the_lock_writes_nothing(
    tmp_path, scripted_server, model_settings, hold_write_lock
):
    (tmp_path / "a.txt").write_text("one\n")
    server = scripted_server([tool_calls([call("apply_patch", {"patch": PATCH})])])
    settings = model_settings(tmp_path, server)
    engine = await open_engine(
        settings, ToolRegistry([ApplyPatchTool()]), approver=PolicyApprover(yes=True)
    )
    hold_write_lock(settings)
    kinds = []
    async for event in engine.run_turn("change a.txt"):
        kinds.append(event.kind)
        if isinstance(event, WriteLockWait):
            engine.cancel()
    assert kinds[-1] == "TurnCancelled"
    assert (tmp_path / "a.txt").read_text() == "one\n"
    history = saved(engine)["history"]
    assert history[-1]["role"] == "tool" and history[-1]["content"] == "cancelled by the user"


async def test_switching_sessions_is_refused_while_a_turn_runs(
    tmp_path, scripted_server, model_settings
):
    from hello_tui.engine.facade import EngineBusy
    from tests.support.scripted_model import slow

    server = scripted_server([slow("slowly " * 50, delay=0.02)])
    engine = await open_engine(model_settings(tmp_path, server))
    stream = engine.run_turn("go")
    await stream.__anext__()
    with pytest.raises(EngineBusy):
        await engine.new_session()
    with pytest.raises(EngineBusy):
        await engine.undo()
    await stream.aclose()
    assert not engine.running
    await engine.aclose()
    assert engine.llm._client.is_closed()


async def test_opening_tells_the_trust_and_sandbox_notices(
    tmp_path, scripted_server, model_settings
):
    """What config held back (a key kept from the repo's URL) and the sandbox's state are told
    at the first turn, like every other notice from opening."""
    server = scripted_server([text("hi there")])
    settings = model_settings(tmp_path, server, environ={"CODE_AGENT_SANDBOX": "off"})
    held_back = "LLM_API_KEY is not sent to a server the repository chose"
    settings = settings.with_changes(notices=(held_back,))
    engine = await open_engine(settings)
    notices = [n.text for n in of(await collect(engine, "explain this repo"), Notice)]
    assert held_back in notices
    assert any("sandbox" in n.lower() and "off" in n.lower() for n in notices), notices
