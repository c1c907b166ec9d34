"""Long tool output: cut for the model or summarised by a model call; the UI keeps it whole."""

from __future__ import annotations

from hello_tui.agent.observation import observation_for_model
from hello_tui.core.events import ToolCallFinished
from tests.engine.agent_kit import collect, of, open_engine
from tests.support.scripted_model import call, error, text, tool_calls


async def test_long_output_is_summarised(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [
            tool_calls([call("big", {"size": 20000}, id="b1")]),
            text("## Summary\nMany numbered lines."),
            text("ok"),
        ]
    )
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "print a lot")
    finished = of(events, ToolCallFinished)[0]
    assert len(finished.text) == 20000
    assert "Many numbered lines." in finished.model_text
    assert "summary of 20000 characters" in finished.model_text
    summary_req = server.chat_requests[1]
    assert not summary_req.get("stream")
    assert summary_req["max_tokens"] == 400
    prompt = summary_req["messages"][1]["content"]
    assert len(prompt) < 8000 + 300  # capped input plus the short header
    assert "characters omitted" in prompt
    assert "## Key Details" in summary_req["messages"][0]["content"]
    tool_msg = server.chat_requests[2]["messages"][-1]
    assert tool_msg["tool_call_id"] == "b1" and "Many numbered lines." in tool_msg["content"]


async def test_failed_summary_falls_back_to_cut_text(tmp_path, scripted_server, model_settings):
    server = scripted_server(
        [tool_calls([call("big", {"size": 9000})]), error(400, "no summaries today"), text("ok")]
    )
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "print a lot")
    model_text = of(events, ToolCallFinished)[0].model_text
    assert "characters omitted" in model_text
    assert model_text.startswith("line 00000")
    assert len(model_text) < 4200


async def test_short_output_is_untouched():
    async def never(tool, output):
        raise AssertionError("no summary for short output")

    assert await observation_for_model("grep", "success", "x" * 1800, never) == "x" * 1800


async def test_errors_and_exact_tools_are_not_summarised():
    async def never(tool, output):
        raise AssertionError("must not summarise")

    long_error = "E" * 3000
    assert await observation_for_model("grep", "error", long_error, never) == long_error
    source = "\n".join(f"line {i}" for i in range(600))
    assert await observation_for_model("read", "success", source, never) == source
    huge = "y" * 50000
    cut = await observation_for_model("read", "success", huge, never)
    assert "characters omitted" in cut and len(cut) < 12100
