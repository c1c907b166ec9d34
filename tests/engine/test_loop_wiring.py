"""The client's signals wired into the loop: a restarted stream, the model's window, the protocol."""

from __future__ import annotations

from hello_tui.config import DEFAULT_CONTEXT_BUDGET
from hello_tui.core.display import ChatMessage
from hello_tui.core.events import (
    AnswerRestarted,
    AssistantDelta,
    ContextUsage,
    Notice,
    TurnFailed,
    TurnFinished,
)
from tests.engine.agent_kit import collect, of, open_engine, saved
from tests.engine.test_exec_model_faults import exec_cli
from tests.support.scripted_model import (
    ScriptedOllama,
    drop,
    error,
    ollama_model,
    text,
)

MODEL = "qwen2.5-coder:7b"


async def test_a_restarted_stream_voids_the_partial_answer(
    tmp_path, scripted_server, model_settings
):
    cut = text("Partial words that never end", chunk_size=4)
    server = scripted_server([drop(5, cut, framing="close"), text("The whole answer.")])
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "describe it")
    (restart,) = of(events, AnswerRestarted)
    assert restart.attempt == 2
    kinds = [type(e).__name__ for e in events]
    first_delta = kinds.index("AssistantDelta")
    assert first_delta < kinds.index("AnswerRestarted")  # something was shown, then voided
    after = events[kinds.index("AnswerRestarted") :]
    assert "".join(e.text for e in of(after, AssistantDelta)) == "The whole answer."
    assert isinstance(events[-1], TurnFinished)
    answers = [e for e in engine.display() if isinstance(e, ChatMessage) and e.role == "assistant"]
    assert [a.text for a in answers] == ["The whole answer."]
    history = saved(engine)["history"]
    assert history[-1] == {"role": "assistant", "content": "The whole answer."}
    await engine.aclose()


def test_exec_says_the_cut_off_text_is_void(tmp_path, scripted_server):
    cut = text("Partial words that never end", chunk_size=4)
    server = scripted_server([drop(5, cut, framing="close"), text("The whole answer.")])
    proc = exec_cli(tmp_path, server, "describe it")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("The whole answer.\n")
    (note,) = [line for line in proc.stderr.splitlines() if "is void" in line]
    assert note.startswith("note: the answer above was cut off")
    assert "Traceback" not in proc.stderr


async def test_ollamas_window_is_the_budget_from_the_first_turn(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server(
        [text("one"), text("two")],
        ollama=ScriptedOllama(models={MODEL: ollama_model(32768)}, running={MODEL: 4096}),
    )
    engine = await open_engine(model_settings(tmp_path, server, model=MODEL))
    first = await collect(engine, "first question")
    (usage,) = of(first, ContextUsage)
    assert usage.budget == 4096 and usage.source.startswith("Ollama: /api/ps")
    assert engine.context_budget == (4096, usage.source)
    await collect(engine, "second question")
    assert server.native_requests.count("/api/show") == 1  # asked once, not every turn
    await engine.aclose()


async def test_an_override_past_ollamas_window_is_said_once(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server(
        [text("one"), text("two")],
        ollama=ScriptedOllama(models={MODEL: ollama_model(32768)}, running={MODEL: 4096}),
    )
    settings = model_settings(
        tmp_path, server, model=MODEL, environ={"CODE_AGENT_CONTEXT_BUDGET": "8000"}
    )
    engine = await open_engine(settings)
    first = await collect(engine, "first question")
    warnings = [n.text for n in of(first, Notice) if "window of 4096" in n.text]
    assert len(warnings) == 1 and "CODE_AGENT_CONTEXT_BUDGET=8000" in warnings[0]
    assert of(first, ContextUsage)[0].budget == 8000
    second = await collect(engine, "second question")
    assert not [n for n in of(second, Notice) if "window of" in n.text]
    await engine.aclose()


async def test_a_plain_server_is_not_asked_ollamas_questions(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("one")])
    engine = await open_engine(model_settings(tmp_path, server))
    await collect(engine, "first question")
    assert server.native_requests == []
    await engine.aclose()


async def test_auto_protocol_stays_with_tools_on_other_errors(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([error(400, "context_length_exceeded: too long")])
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "do something")
    assert isinstance(events[-1], TurnFailed)
    assert engine.protocol == "tools"
    assert not [n for n in of(events, Notice) if "ReAct" in n.text]
    assert all("tools" in r for r in server.chat_requests)
    await engine.aclose()


async def test_every_step_reports_the_context_used_against_the_budget(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("done")])
    settings = model_settings(tmp_path, server, environ={"CODE_AGENT_CONTEXT_BUDGET": "6000"})
    engine = await open_engine(settings)
    events = await collect(engine, "hello there, look at the code")
    (usage,) = of(events, ContextUsage)
    assert usage.budget == 6000
    assert 0 < usage.used <= 6000
    assert engine.context_usage == (usage.used, 6000)
    await engine.aclose()


async def test_a_window_named_in_an_overflow_error_becomes_the_budget(
    tmp_path, scripted_server, model_settings
):
    """llama-cpp-python says its window nowhere but in the error of a request past it."""
    overflow = error(
        400,
        "This model's maximum context length is 2048 tokens. However, you requested 9000 "
        "tokens (9000 in the messages, 0 in the completion).",
        code="context_length_exceeded",
    )
    server = scripted_server([overflow, text("fits now")])
    engine = await open_engine(model_settings(tmp_path, server, model="local-model"))
    events = await collect(engine, "explain the code " + "in detail " * 800)
    assert isinstance(events[-1], TurnFinished) and events[-1].answer == "fits now"
    (notice,) = [n.text for n in of(events, Notice) if "window is 2048" in n.text]
    assert "from 8192 to 2048" in notice
    assert engine.context_budget == (2048, "the endpoint's error: maximum context length 2048")
    assert of(events, ContextUsage)[-1].budget == 2048
    retried = server.chat_requests[-1]
    assert len(retried["messages"][-1]["content"]) < len(
        server.chat_requests[0]["messages"][-1]["content"]
    )
    await engine.aclose()


async def test_the_learnt_budget_and_a_switched_model_live_in_the_engine_not_the_settings(
    tmp_path, scripted_server, model_settings
):
    """The settings stay as loaded: the window learnt at the first turn is the requests',
    a model picked with /model the client's copy, and both take effect."""
    other = "llama3.2:3b"
    server = scripted_server(
        [text("one"), text("two"), text("three")],
        ollama=ScriptedOllama(
            models={MODEL: ollama_model(32768), other: ollama_model(32768)},
            running={MODEL: 4096, other: 2048},
        ),
    )
    settings = model_settings(tmp_path, server, model=MODEL)
    engine = await open_engine(settings)
    first = await collect(engine, "first question")
    assert of(first, ContextUsage)[0].budget == 4096
    assert engine.settings.context_budget == DEFAULT_CONTEXT_BUDGET
    await engine.new_session()
    assert engine.agent.context_tokens == 4096  # the next session starts from what was learnt
    second = await collect(engine, "second question")
    assert of(second, ContextUsage)[0].budget == 4096
    engine.set_model(other)
    third = await collect(engine, "third question")
    assert of(third, ContextUsage)[0].budget == 2048  # the window of the model switched to
    assert [r["model"] for r in server.chat_requests] == [MODEL, MODEL, other]
    assert engine.settings.model == engine.llm.settings.model == other
    assert settings.model == MODEL and settings.context_budget == DEFAULT_CONTEXT_BUDGET
    await engine.aclose()
