"""Permission modes through the engine: ask, auto-edit and read-only, with real tools."""

from __future__ import annotations

import pytest

from hello_tui.config import ConfigError, load_settings
from hello_tui.core.approval import CommandVerdict, PatchDecision
from hello_tui.core.events import NoteWritten, Notice, PatchResolved, ToolCallFinished
from hello_tui.core.modes import next_mode
from hello_tui.engine.types import parse_mode
from hello_tui.tools.registry import ToolRegistry
from hello_tui.tools.terminal import TerminalTool
from hello_tui.tools.writes import ApplyPatchTool
from tests.engine.agent_kit import collect, of, open_engine
from tests.support.scripted_model import call, text, tool_calls

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
DELETE = "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n"


class RecordingApprover:
    """Says yes to everything and remembers what it was asked."""

    def __init__(self) -> None:
        self.patches: list[object] = []
        self.commands: list[str] = []

    async def review_patch(self, plan: object) -> PatchDecision:
        self.patches.append(plan)
        return PatchDecision(accepted=True, high_risk_confirmed=True)

    async def approve_command(self, command: str, reason: str) -> CommandVerdict:
        self.commands.append(command)
        return "once"


def _tools() -> ToolRegistry:
    return ToolRegistry([ApplyPatchTool(), TerminalTool()])


async def _patch_turn(tmp_path, scripted_server, model_settings, mode: str, patch: str = PATCH):
    (tmp_path / "a.txt").write_text("one\n")
    server = scripted_server([tool_calls([call("apply_patch", {"patch": patch})]), text("done")])
    approver = RecordingApprover()
    engine = await open_engine(model_settings(tmp_path, server), _tools(), approver=approver)
    engine.set_mode(mode)
    events = await collect(engine, "change a.txt")
    return engine, approver, events, server


async def test_ask_mode_reviews_every_patch(tmp_path, scripted_server, model_settings):
    _engine, approver, _events, _ = await _patch_turn(
        tmp_path, scripted_server, model_settings, "ask"
    )
    assert len(approver.patches) == 1
    assert (tmp_path / "a.txt").read_text() == "ONE\n"


async def test_auto_edit_applies_without_asking_and_can_be_undone(
    tmp_path, scripted_server, model_settings
):
    engine, approver, events, _ = await _patch_turn(
        tmp_path, scripted_server, model_settings, "auto-edit"
    )
    assert approver.patches == []  # nobody was asked
    assert (tmp_path / "a.txt").read_text() == "ONE\n"
    resolved = of(events, PatchResolved)[-1]
    assert resolved.applied and resolved.backup_dir  # backed up like a reviewed patch
    shown = [n.text for n in of(events, Notice) if "auto-edit" in n.text]
    assert shown and "-one" in shown[0] and "+ONE" in shown[0] and "```diff" in shown[0]
    assert [n.title for n in of(events, NoteWritten)] == ["Patch applied"]  # noted
    await engine.undo()
    assert (tmp_path / "a.txt").read_text() == "one\n"


async def test_auto_edit_still_asks_for_a_high_risk_patch(
    tmp_path, scripted_server, model_settings
):
    _engine, approver, _events, _ = await _patch_turn(
        tmp_path, scripted_server, model_settings, "auto-edit", DELETE
    )
    assert len(approver.patches) == 1  # deleting a file is high-risk: the user decides
    assert not (tmp_path / "a.txt").exists()


async def test_auto_edit_still_asks_before_a_command(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [tool_calls([call("terminal", {"command": "touch made.txt"})]), text("done")]
    )
    approver = RecordingApprover()
    engine = await open_engine(model_settings(tmp_path, server), _tools(), approver=approver)
    engine.set_mode("auto-edit")
    await collect(engine, "make a file")
    assert approver.commands == ["touch made.txt"]


async def test_read_only_writes_nothing_and_asks_nothing(tmp_path, scripted_server, model_settings):
    _engine, approver, events, server = await _patch_turn(
        tmp_path, scripted_server, model_settings, "read-only"
    )
    assert approver.patches == []
    assert (tmp_path / "a.txt").read_text() == "one\n"
    result = next(e for e in of(events, ToolCallFinished) if e.tool == "apply_patch")
    assert "read-only" in result.model_text and "Nothing was written" in result.model_text
    # The model is told it is planning, in the system prompt of every request.
    system = server.chat_requests[0]["messages"][0]["content"]
    assert "read-only (plan) mode" in system


async def test_read_only_runs_read_commands_but_not_the_others(
    tmp_path, scripted_server, model_settings
):
    (tmp_path / "seen.txt").write_text("x\n")
    server = scripted_server(
        [
            tool_calls([call("terminal", {"command": "ls"})]),
            tool_calls([call("terminal", {"command": "touch made.txt"})]),
            text("done"),
        ]
    )
    approver = RecordingApprover()
    engine = await open_engine(model_settings(tmp_path, server), _tools(), approver=approver)
    engine.set_mode("plan")
    assert engine.mode == "read-only"
    events = await collect(engine, "look around")
    finished = [e for e in of(events, ToolCallFinished) if e.tool == "terminal"]
    assert "seen.txt" in finished[0].text
    assert finished[1].status != "success" and not (tmp_path / "made.txt").exists()
    assert approver.commands == []


async def test_the_plan_can_be_run_afterwards_in_another_mode(
    tmp_path, scripted_server, model_settings
):
    (tmp_path / "a.txt").write_text("one\n")
    server = scripted_server(
        [
            text("Plan: change one to ONE in a.txt."),
            tool_calls([call("apply_patch", {"patch": PATCH})]),
            text("done"),
        ]
    )
    approver = RecordingApprover()
    engine = await open_engine(model_settings(tmp_path, server), _tools(), approver=approver)
    engine.set_mode("read-only")
    await collect(engine, "plan the change")
    engine.set_mode("ask")
    await collect(engine, "carry out the plan")
    assert (tmp_path / "a.txt").read_text() == "ONE\n"
    second = server.chat_requests[-1]["messages"]
    assert "read-only (plan) mode" not in second[0]["content"]
    assert any("Plan: change one" in str(m.get("content")) for m in second)


async def test_mode_from_settings_and_its_precedence(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("hi")])
    settings = model_settings(tmp_path, server, environ={"CODE_AGENT_MODE": "auto-edit"})
    assert settings.mode == "auto-edit" and settings.sources["mode"] == "env CODE_AGENT_MODE"
    engine = await open_engine(settings)
    assert engine.mode == "auto-edit"
    flagged = load_settings(tmp_path, mode="plan", environ={"CODE_AGENT_MODE": "auto-edit"})
    assert flagged.mode == "read-only" and flagged.sources["mode"] == "flag"
    with pytest.raises(ConfigError, match="CODE_AGENT_MODE"):
        load_settings(tmp_path, environ={"CODE_AGENT_MODE": "yolo"})


def test_the_repository_cannot_choose_the_mode(tmp_path):
    (tmp_path / ".env").write_text("CODE_AGENT_MODE=auto-edit\n")
    settings = load_settings(tmp_path, environ={})
    assert settings.mode == "ask"
    assert any("CODE_AGENT_MODE" in n for n in settings.notices)


def test_mode_cycle_and_names():
    assert [next_mode(m) for m in ("ask", "auto-edit", "read-only")] == [
        "auto-edit",
        "read-only",
        "ask",
    ]
    assert parse_mode(" Plan ") == "read-only"
    with pytest.raises(ValueError):
        parse_mode("yolo")
