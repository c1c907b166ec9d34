"""The tolerant ReAct parser, table-driven."""

from __future__ import annotations

import pytest

from hello_tui.agent.react import first_balanced_object, parse_action_input, parse_react

TOOL_CASES = [
    ('Thought: look\nAction: read[{"path": "a.py"}]', "read", {"path": "a.py"}),
    ('思考：先看看\n行动：read[{"path": "a.py"}]', "read", {"path": "a.py"}),
    ('Thought： full width\nAction： grep[{"pattern": "x"}]', "grep", {"pattern": "x"}),
    ('**Thought:** bold\n**Action:** ls[{"path": "."}]', "ls", {"path": "."}),
    ('**Thought**: bold2\n**Action**: ls[{"path": "src"}]', "ls", {"path": "src"}),
    ('Thought: stray\nAction: read[{"path": "a.py"}]]', "read", {"path": "a.py"}),
    ('Thought: wrapped\nAction: read[[{"path": "a.py"}]]', "read", {"path": "a.py"}),
    ('Thought: paren\nAction: read({"path": "a.py"})', "read", {"path": "a.py"}),
    ('Thought: fenced\n```\nAction: read[{"path": "b.py"}]\n```', "read", {"path": "b.py"}),
    ('Action: `read`[{"path": "c.py"}]', "read", {"path": "c.py"}),
    ('Thought: embedded\nAction: read[path is {"path": "d.py"} ok]', "read", {"path": "d.py"}),
    (
        'Thought: multi\nAction: grep[{\n  "pattern": "def main",\n  "path": "src"\n}]',
        "grep",
        {"pattern": "def main", "path": "src"},
    ),
    ("Thought: plain\nAction: read[src/app.py]", "read", "src/app.py"),
    ('Thought: brace in string\nAction: grep[{"pattern": "a}b"}]', "grep", {"pattern": "a}b"}),
]


@pytest.mark.parametrize("reply,tool,arguments", TOOL_CASES)
def test_tool_actions(reply, tool, arguments):
    step = parse_react(reply)
    assert step.kind == "tool", step
    assert step.tool == tool
    assert step.arguments == arguments
    assert step.error is None


FINISH_CASES = [
    ("Thought: done\nAction: Finish[All tests pass.]", "All tests pass."),
    ("思考：完成\n行动：Finish[已经完成]", "已经完成"),
    (
        "**Action:** Finish[See [the docs](README.md) for more]",
        "See [the docs](README.md) for more",
    ),
    ("Thought: ok\nAction: Finish[line one\nline two]", "line one\nline two"),
    ("Thought: ok\nFinal Answer: it is 42", "it is 42"),
    ("Thought: ok\nAction: finish[lower case]", "lower case"),
]


@pytest.mark.parametrize("reply,answer", FINISH_CASES)
def test_finish(reply, answer):
    step = parse_react(reply)
    assert step.kind == "finish"
    assert step.answer == answer


def test_thought_is_captured():
    step = parse_react('Thought: I should read the file\nAction: read[{"path": "a"}]')
    assert step.thought == "I should read the file"


def test_hallucinated_observation_is_cut():
    step = parse_react(
        'Thought: t\nAction: read[{"path": "a"}]\nObservation: invented\nThought: more\n'
        "Action: Finish[wrong]"
    )
    assert step.kind == "tool" and step.arguments == {"path": "a"}
    assert "invented" not in step.text


def test_thought_without_action_is_an_error_for_the_model():
    step = parse_react("Thought: I wonder what to do")
    assert step.kind == "none"
    assert "no Action" in step.error


def test_no_markers_at_all_is_plain_text():
    step = parse_react("The repository has three modules.")
    assert step.kind == "none" and step.error is None
    assert step.text == "The repository has three modules."


def test_invalid_json_input_is_reported():
    step = parse_react('Thought: t\nAction: read[{"path": "a.py"]')
    assert step.kind == "tool"
    assert step.error and "not valid JSON" in step.error


@pytest.mark.parametrize(
    "raw,value",
    [
        ('{"a": 1}', {"a": 1}),
        ('{"a": 1}]', {"a": 1}),
        ('{"a": 1}]]', {"a": 1}),
        ('[{"a": 1}]', {"a": 1}),
        ("", None),
        ("just text", "just text"),
        ('"quoted"', "quoted"),
    ],
)
def test_action_input_forms(raw, value):
    assert parse_action_input(raw) == (value, None)


def test_first_balanced_object_honours_strings():
    assert first_balanced_object('x {"a": "}{"} y') == '{"a": "}{"}'
    assert first_balanced_object("no braces") is None
