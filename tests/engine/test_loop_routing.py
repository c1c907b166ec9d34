"""Turns answered without tools, the todo nudge, and AGENTS.md in the system context."""

from __future__ import annotations

import pytest

from hello_tui.agent.routing import is_greeting, is_history_question, route_turn, wants_todo_list
from hello_tui.core.events import TodoChanged, ToolCallStarted
from tests.engine.agent_kit import FakeTodoTool, answer_text, collect, of, open_engine, registry
from tests.support.scripted_model import call, text, tool_calls


@pytest.mark.parametrize(
    "msg", ["hi", "Hello!", "  hey  ", "你好", "您好！", "在吗？", "嗨", "哈喽"]
)
def test_greetings(msg):
    assert is_greeting(msg)
    assert route_turn(msg) == "greeting"


@pytest.mark.parametrize(
    "msg", ["hi, fix the bug in app.py", "hello world program please", "你好，帮我看看"]
)
def test_not_greetings(msg):
    assert not is_greeting(msg)


@pytest.mark.parametrize(
    "msg",
    [
        "what did I say?",
        "What did I say earlier",
        "recap",
        "can you recap please",
        "summarize our conversation",
        "刚才说了什么",
        "我之前说了什么？",
        "我们聊了什么",
    ],
)
def test_history_questions(msg):
    assert is_history_question(msg)
    assert route_turn(msg) == "history"


@pytest.mark.parametrize(
    "msg",
    [
        "add a recap section to README.md",
        "write a recap function in utils.py",
        "what did I say in the commit message of HEAD",
        "查一下日志里说了什么错误",
    ],
)
def test_tasks_mentioning_recap_are_tasks(msg):
    assert route_turn(msg) == "task"


def test_empty_is_routed():
    assert route_turn("   ") == "empty"


@pytest.mark.parametrize(
    "msg,expected",
    [
        ("分步重构这个模块", True),
        ("do it step by step", True),
        ("First add tests, then refactor", True),
        ("按步骤完成", True),
        ("make a plan for the migration", True),
        ("fix the typo", False),
    ],
)
def test_multi_step_words(msg, expected):
    assert wants_todo_list(msg) is expected


async def test_greeting_is_answered_without_tools(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("Hi! I can help with this repository.")])
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "你好")
    assert events[-1].reason == "direct"
    assert answer_text(events) == "Hi! I can help with this repository."
    assert not of(events, ToolCallStarted)
    (req,) = server.chat_requests
    assert "tools" not in req


async def test_history_question_answers_from_the_conversation(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([text("Done."), text("You asked me to rename foo to bar.")])
    engine = await open_engine(model_settings(tmp_path, server))
    await collect(engine, "rename foo to bar in lib.py")
    events = await collect(engine, "what did I say?")
    assert events[-1].reason == "direct"
    req = server.chat_requests[-1]
    assert "tools" not in req
    assert "rename foo to bar in lib.py" in req["messages"][-1]["content"]


async def test_recap_task_uses_tools(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("ok")])
    engine = await open_engine(model_settings(tmp_path, server))
    await collect(engine, "add a recap section to README.md")
    assert "tools" in server.chat_requests[0]


async def test_empty_input_asks_for_an_instruction(tmp_path, scripted_server, model_settings):
    server = scripted_server([])
    engine = await open_engine(model_settings(tmp_path, server))
    events = await collect(engine, "  ")
    assert "concrete instruction" in events[-1].answer
    assert server.chat_requests == []


async def test_multi_step_task_nudges_a_todo_list(tmp_path, scripted_server, model_settings):
    server = scripted_server([text("ok"), text("ok")])
    engine = await open_engine(model_settings(tmp_path, server), registry(FakeTodoTool()))
    await collect(engine, "分步完成：先加测试，再重构")
    assert "keep a todo list" in server.chat_requests[0]["messages"][-1]["content"]
    await collect(engine, "fix the typo in a.py")
    assert "keep a todo list" not in server.chat_requests[1]["messages"][-1]["content"]


async def test_agents_md_is_in_the_system_context(tmp_path, scripted_server, model_settings):
    (tmp_path / "AGENTS.md").write_text("Always run `make check` before answering.\n")
    server = scripted_server([text("ok")])
    engine = await open_engine(model_settings(tmp_path, server))
    await collect(engine, "check the build")
    system = server.chat_requests[0]["messages"][0]
    assert system["role"] == "system"
    assert "Always run `make check` before answering." in system["content"]
    assert "CLI" in system["content"] or "command-line" in system["content"]


async def test_todo_board_rides_along(tmp_path, scripted_server, model_settings):
    from hello_tui.core.tools import Tool, ToolArgs, ToolResult

    class BoardArgs(ToolArgs):
        title: str

    class BoardTool(Tool):
        name = "todo"
        description = "todo"
        Args = BoardArgs

        async def run(self, args, ctx):
            ctx.emit(TodoChanged(items=[{"id": 1, "title": args.title, "status": "in_progress"}]))
            return ToolResult.ok("added")

    server = scripted_server([tool_calls([call("todo", {"title": "write tests"})]), text("ok")])
    engine = await open_engine(model_settings(tmp_path, server), registry(BoardTool()))
    events = await collect(engine, "start")
    assert of(events, TodoChanged)[0].items[0]["title"] == "write tests"
    system = server.chat_requests[1]["messages"][0]["content"]
    assert "# Todo board" in system and "[in_progress] #1 write tests" in system
