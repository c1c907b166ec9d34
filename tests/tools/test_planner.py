"""The `plan` tool: the request it sends, the shape check of the reply, failures, a real server."""

from __future__ import annotations

from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.core.tools import ToolContext
from hello_tui.tools.planner import PlanTool, check_plan, load_plan_prompt
from hello_tui.tools.registry import ToolRegistry

GOOD_PLAN = """## Plan
1. Read `src/parser.py` to confirm how tokens are split.
2. Add a failing test in `tests/test_parser.py` for the empty-input case.
3. Guard the empty input in `parse()`.
4. Run `pytest tests/test_parser.py`.
5. Update the changelog.

## Risks
- Callers may rely on the exception; grep for `ParseError` first.

## Validation
- `pytest -q` passes.
- `parse("")` returns an empty list.
"""


class FakeModel:
    """Stands in for the agent's completion callback and records what it was asked."""

    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.calls: list[tuple[list[dict], int]] = []

    async def __call__(self, messages: list[dict], max_tokens: int) -> str:
        self.calls.append((messages, max_tokens))
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "parser.py").write_text("x = 1\n", encoding="utf-8")
    (root / "README.md").write_text("hi\n", encoding="utf-8")
    (root / ".hidden").write_text("", encoding="utf-8")
    return root


def make_ctx(repo: Path, complete) -> ToolContext:
    return ToolContext(settings=load_settings(repo, environ={}), complete=complete)


async def run_plan(ctx: ToolContext, **kwargs):
    return await ToolRegistry([PlanTool()]).run("plan", kwargs, ctx)


def test_prompt_file_ships_the_three_sections(repo: Path):
    prompt = load_plan_prompt(load_settings(repo, environ={}))
    for heading in ("## Plan", "## Risks", "## Validation"):
        assert heading in prompt
    assert "5 and 12" in prompt


async def test_good_plan_is_success_with_structured_data(repo: Path):
    model = FakeModel(GOOD_PLAN)
    result = await run_plan(make_ctx(repo, model), goal="Handle empty input", constraints="no deps")
    assert result.status == "success"
    assert result.text == GOOD_PLAN.strip()
    assert len(result.data["steps"]) == 5
    assert result.data["steps"][0].startswith("Read `src/parser.py`")
    assert result.data["risks"] == [
        "Callers may rely on the exception; grep for `ParseError` first."
    ]
    assert len(result.data["validation"]) == 2
    assert result.data["problems"] == []


async def test_request_is_one_call_with_prompt_goal_constraints_and_files(repo: Path):
    model = FakeModel(GOOD_PLAN)
    ctx = make_ctx(repo, model)
    await run_plan(ctx, goal="Handle empty input", constraints=["no deps", "py3.11"])
    assert len(model.calls) == 1
    messages, max_tokens = model.calls[0]
    assert max_tokens > 0
    assert messages[0]["role"] == "system" and "## Validation" in messages[0]["content"]
    user = messages[1]["content"]
    assert "Goal: Handle empty input" in user
    assert "Constraints: no deps; py3.11" in user
    assert "src/" in user and "README.md" in user and ".hidden" not in user


async def test_missing_sections_make_a_partial_result_with_a_note(repo: Path):
    reply = "## Plan\n1. a\n2. b\n3. c\n4. d\n5. e\n"
    result = await run_plan(make_ctx(repo, FakeModel(reply)), goal="g")
    assert result.status == "partial"
    assert "missing '## Risks' section" in result.text
    assert "missing '## Validation' section" in result.text
    assert result.data["steps"] == ["a", "b", "c", "d", "e"]


@pytest.mark.parametrize("count,ok", [(4, False), (5, True), (12, True), (13, False)])
def test_step_count_bounds(count: int, ok: bool):
    steps = "\n".join(f"{i}. step {i}" for i in range(1, count + 1))
    text = f"## Plan\n{steps}\n## Risks\n- r\n## Validation\n- v\n"
    problems = check_plan(text)["problems"]
    assert (problems == []) is ok
    if not ok:
        assert f"{count} numbered step(s)" in problems[0]


def test_headings_tolerate_colons_case_and_level_three():
    text = (
        "### plan:\n"
        + "\n".join(f"{i}) s{i}" for i in range(1, 6))
        + ("\n## RISKS\n* r\n## Validation ##\n- v\n")
    )
    checked = check_plan(text)
    assert checked["problems"] == []
    assert checked["risks"] == ["r"] and checked["validation"] == ["v"]


async def test_without_a_model_is_an_error(repo: Path):
    result = await run_plan(make_ctx(repo, None), goal="anything")
    assert result.status == "error" and "planning needs a model" in result.text


async def test_model_failure_and_empty_reply_are_errors(repo: Path):
    failed = await run_plan(make_ctx(repo, FakeModel(RuntimeError("rate limited"))), goal="g")
    assert failed.status == "error" and "rate limited" in failed.text
    empty = await run_plan(make_ctx(repo, FakeModel("   ")), goal="g")
    assert empty.status == "error" and "empty answer" in empty.text
    blank_goal = await run_plan(make_ctx(repo, FakeModel(GOOD_PLAN)), goal="")
    assert blank_goal.status == "error"


async def test_with_the_scripted_model_server(repo: Path):
    from hello_tui.llm import LLMClient
    from tests.support.scripted_model import ScriptedModelServer, text

    with ScriptedModelServer([text(GOOD_PLAN, chunk_size=7)]) as server:
        settings = load_settings(repo, base_url=server.base_url, model="scripted-model", environ={})
        client = LLMClient(settings, max_attempts=1)

        async def complete(messages: list[dict], max_tokens: int) -> str:
            return (await client.complete(messages, max_tokens=max_tokens)).content

        try:
            result = await run_plan(
                ToolContext(settings=settings, complete=complete), goal="Handle empty input"
            )
        finally:
            await client.aclose()
        sent = [r for r in server.requests if r.get("max_tokens") != 1]
    assert result.status == "success" and len(result.data["steps"]) == 5
    assert len(sent) == 1
    assert sent[0]["messages"][1]["content"].startswith("Goal: Handle empty input")
