"""The display record: which entries a turn's events make, and how they are saved."""

from __future__ import annotations

import dataclasses

import pytest

from hello_tui.core import events as ev
from hello_tui.core.display import (
    ChatMessage,
    DisplayRecorder,
    ToolStep,
    entry_from_dict,
    entry_to_dict,
)


def feed(events: list[ev.Event]) -> list:
    recorder = DisplayRecorder()
    out = []
    for event in events:
        out += recorder.feed(event)
    return out


def test_a_turn_with_a_tool_a_patch_an_approval_and_an_answer():
    entries = feed(
        [
            ev.TurnStarted(turn=3, text="fix it"),
            ev.StepStarted(step=1, max_steps=5),
            ev.ThoughtDelta(text="read first", step=1),
            ev.AssistantDelta(text="Let me "),
            ev.AssistantDelta(text="look."),
            ev.ToolCallStarted(step=1, call_id="c1", tool="read", arguments={"path": "a"}),
            ev.ToolOutputDelta(call_id="c1", text="partial"),
            ev.ToolCallFinished(
                step=1,
                call_id="c1",
                tool="read",
                status="success",
                text="x = 1",
                model_text="x = 1",
                duration=0.1234,
            ),
            ev.CommandApprovalResolved(call_id="c2", command="make", verdict="session"),
            ev.PatchResolved(
                call_id="c3",
                applied=True,
                summary="M a",
                backup_dir=".helloagents/backups/1",
                hunks_applied=1,
            ),
            ev.Notice(text="slow down", level="warning"),
            ev.Notice(text="broken", level="error"),
            ev.WriteLockWait(phase="waiting", text="waiting for another"),
            ev.WriteLockWait(phase="acquired"),
            ev.Usage(
                prompt_tokens=1,
                completion_tokens=1,
                session_prompt_tokens=1,
                session_completion_tokens=1,
            ),
            ev.AssistantDelta(text="Done."),
            ev.TurnFinished(answer="Done.", steps=2, reason="max_steps"),
        ]
    )
    assert entries == [
        ChatMessage("user", "fix it", 3),
        ChatMessage("assistant", "Let me look.", 3, streamed=True),
        ToolStep(3, 1, "c1", "read", {"path": "a"}, "success", "x = 1", 0.123, "read first"),
        ChatMessage("notice", "`make`: allowed for this session", 3),
        ChatMessage(
            "result", "M a\n\n1 hunk applied, 0 declined.\n\nBackup: `.helloagents/backups/1`", 3
        ),
        ChatMessage("notice", "slow down", 3),
        ChatMessage("error", "broken", 3),
        ChatMessage("notice", "waiting for another", 3),
        ChatMessage("assistant", "Done.", 3, streamed=True),
        ChatMessage("notice", "Stopped after 2 steps (the step limit).", 3),
    ]


def test_an_answer_that_was_not_streamed_comes_from_the_closing_event():
    entries = feed([ev.TurnStarted(turn=1, text="hi"), ev.TurnFinished(answer="Hello!", steps=0)])
    assert entries[-1] == ChatMessage("assistant", "Hello!", 1, streamed=False)


def test_failure_and_cancel_close_what_streamed_and_every_open_call():
    failed = feed(
        [
            ev.TurnStarted(turn=1, text="go"),
            ev.AssistantDelta(text="half"),
            ev.TurnFailed(error="401", hint="set LLM_API_KEY"),
        ]
    )
    assert failed[1:] == [
        ChatMessage("assistant", "half", 1, streamed=True),
        ChatMessage("error", "401\nHint: set LLM_API_KEY", 1),
    ]
    cancelled = feed(
        [
            ev.TurnStarted(turn=2, text="go"),
            ev.ToolCallStarted(step=1, call_id="t", tool="terminal", arguments={"command": "x"}),
            ev.TurnCancelled(),
        ]
    )
    assert cancelled[1].status == "cancelled" and cancelled[1].tool == "terminal"
    assert cancelled[-1] == ChatMessage("notice", "Turn cancelled.", 2)


@pytest.mark.parametrize(
    "entry",
    [
        ChatMessage("result", "Undone: M a", 4, False),
        ToolStep(2, 3, "c9", "grep", {"pattern": "x"}, "partial", "a:1", 1.5, "look"),
    ],
)
def test_entries_round_trip_through_their_saved_form(entry):
    assert entry_from_dict(entry_to_dict(entry)) == entry


def test_long_tool_output_is_cut_in_the_record():
    step = feed(
        [
            ev.ToolCallStarted(step=1, call_id="c", tool="big", arguments={}),
            ev.ToolCallFinished(
                step=1,
                call_id="c",
                tool="big",
                status="success",
                text="y" * 10_000,
                model_text="",
                duration=0,
            ),
        ]
    )[0]
    assert len(step.output) < 2100 and step.output.endswith("8000 more characters]")


def test_events_are_frozen():
    event = ev.Notice(text="x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.text = "y"  # type: ignore[misc]
    assert event.to_dict()["type"] == "Notice" and event.to_dict()["level"] == "info"


def test_counts_read_as_english():
    from hello_tui.core.display import counted

    assert [counted(n, "hunk") for n in (0, 1, 2)] == ["0 hunks", "1 hunk", "2 hunks"]
    assert counted(1, "more line") == "1 more line"
