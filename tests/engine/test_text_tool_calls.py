"""The recogniser of tool calls written as text: each model family's form, and what must not count."""

from __future__ import annotations

import json

import pytest

from hello_tui.llm.text_tool_calls import HeldBackText, offered_tools, recognise_tool_calls

TOOLS = offered_tools(
    [
        {
            "type": "function",
            "function": {
                "name": "read",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "start": {"type": "integer"},
                        "end": {"type": ["integer", "null"]},
                    },
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": "write",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "content": {"type": "string"},
                        "overwrite": {"type": "boolean"},
                        "ratio": {"type": "number"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "meta": {"anyOf": [{"type": "object"}, {"type": "null"}]},
                    },
                },
            },
        },
        {"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}},
    ]
)


def calls(content: str) -> list[tuple[str, dict]]:
    found = recognise_tool_calls(content, TOOLS)
    assert found is not None, content
    return [(c.name, json.loads(c.arguments)) for c in found.calls]


def prose(content: str) -> str:
    found = recognise_tool_calls(content, TOOLS)
    assert found is not None
    return found.content


def nothing(content: str) -> None:
    assert recognise_tool_calls(content, TOOLS) is None, content


# ---------------------------------------------------------------- Hermes / Qwen


def test_hermes_one_call():
    text = '<tool_call>\n{"name": "read", "arguments": {"path": "a.py"}}\n</tool_call>'
    assert calls(text) == [("read", {"path": "a.py"})]
    assert prose(text) == ""


def test_hermes_several_calls_and_the_prose_around_them():
    text = (
        "Let me look at both files.\n"
        '<tool_call>{"name": "read", "arguments": {"path": "a.py"}}</tool_call>\n'
        '<tool_call>{"name": "read", "arguments": {"path": "b.py", "start": 3}}</tool_call>'
    )
    assert calls(text) == [("read", {"path": "a.py"}), ("read", {"path": "b.py", "start": 3})]
    assert prose(text) == "Let me look at both files."


def test_hermes_arguments_as_a_json_string_and_parameters_key():
    text = '<tool_call>{"name": "read", "arguments": "{\\"path\\": \\"x\\"}"}</tool_call>'
    assert calls(text) == [("read", {"path": "x"})]
    assert calls('<tool_call>{"name": "ls", "parameters": {}}</tool_call>') == [("ls", {})]
    assert calls('<tool_call>{"name": "ls"}</tool_call>') == [("ls", {})]


def test_hermes_last_block_may_miss_its_closing_tag_when_the_json_is_whole():
    assert calls('<tool_call>\n{"name": "read", "arguments": {"path": "a"}}') == [
        ("read", {"path": "a"})
    ]
    nothing('<tool_call>\n{"name": "read", "arguments": {"path": "a')


def test_hermes_list_inside_one_block():
    text = '<tool_call>[{"name": "ls", "arguments": {}}, {"name": "read", "arguments": {"path": "r"}}]</tool_call>'
    assert calls(text) == [("ls", {}), ("read", {"path": "r"})]


# ---------------------------------------------------------------- Qwen3-Coder


QWEN3_CODER = """I will write the file.
<tool_call>
<function=write>
<parameter=path>
src/app.py
</parameter>
<parameter=content>
def main():
    return 1

</parameter>
<parameter=overwrite>
true
</parameter>
<parameter=ratio>
0.5
</parameter>
<parameter=tags>
["a", "b"]
</parameter>
<parameter=meta>
{"k": 1}
</parameter>
</function>
</tool_call>"""


def test_qwen3_coder_parameters_typed_by_the_schema():
    assert calls(QWEN3_CODER) == [
        (
            "write",
            {
                "path": "src/app.py",
                "content": "def main():\n    return 1\n",  # one framing newline each side only
                "overwrite": True,
                "ratio": 0.5,
                "tags": ["a", "b"],
                "meta": {"k": 1},
            },
        )
    ]
    assert prose(QWEN3_CODER) == "I will write the file."


def test_qwen3_coder_outside_tool_call_and_integers_and_null():
    text = (
        "<function=read>\n<parameter=path>\nm.py\n</parameter>\n<parameter=start>\n10\n"
        "</parameter>\n<parameter=end>\nnull\n</parameter>\n</function>"
    )
    assert calls(text) == [("read", {"path": "m.py", "start": 10, "end": None})]


def test_qwen3_coder_strings_stay_strings_and_bad_numbers_stay_text():
    text = "<function=read>\n<parameter=path>\n123\n</parameter>\n<parameter=start>\nten\n</parameter>\n</function>"
    assert calls(text) == [("read", {"path": "123", "start": "ten"})]


def test_qwen3_coder_missing_parameter_close_and_several_functions():
    text = (
        "<tool_call>\n<function=read>\n<parameter=path>\na.py\n</function>\n"
        "<function=ls>\n</function>\n</tool_call>"
    )
    assert calls(text) == [("read", {"path": "a.py"}), ("ls", {})]


def test_qwen3_coder_without_function_close_outside_a_block_is_not_a_call():
    nothing("<function=read>\n<parameter=path>\na.py\n</parameter>\n")


# ---------------------------------------------------------------- bare JSON


def test_bare_json_object_alone_or_fenced():
    assert calls('{"name": "read", "arguments": {"path": "q.py"}}') == [("read", {"path": "q.py"})]
    fenced = '```json\n{"name": "read", "arguments": {"path": "q.py"}}\n```'
    assert calls(fenced) == [("read", {"path": "q.py"})]
    assert calls('```\n{"name": "ls", "arguments": {}}\n```\n') == [("ls", {})]
    assert calls('{"type": "function", "function": {"name": "ls", "arguments": "{}"}}') == [
        ("ls", {})
    ]
    assert calls('[{"name": "ls", "arguments": {}}]') == [("ls", {})]


def test_json_in_prose_is_not_a_call():
    nothing('To read a file, send {"name": "read", "arguments": {"path": "x"}} to the tool.')
    nothing(
        'Here is the call you asked about:\n```json\n{"name": "read", "arguments": {}}\n```\n'
        "It reads a file."
    )
    nothing('```python\n{"name": "read", "arguments": {}}\n```')


def test_bare_json_needs_the_call_shape():
    nothing('{"name": "read"}')  # no arguments key: an ordinary object
    nothing('{"name": "read", "arguments": {}, "extra": 1}')
    nothing('{"path": "a.py"}')
    nothing('{"name": "read", "arguments": [1, 2]}')


# ---------------------------------------------------------------- Mistral


def test_mistral_json_list_form():
    text = '[TOOL_CALLS][{"name": "read", "arguments": {"path": "m"}, "id": "abc123XYZ"}, {"name": "ls", "arguments": {}}]'
    assert calls(text) == [("read", {"path": "m"}), ("ls", {})]


def test_mistral_name_args_form_repeated_and_with_call_id():
    text = 'Sure.[TOOL_CALLS]read[ARGS]{"path": "n"}[TOOL_CALLS]ls[CALL_ID]a1b2c3d4e[ARGS]{}'
    assert calls(text) == [("read", {"path": "n"}), ("ls", {})]
    assert prose(text) == "Sure."


def test_mistral_broken_args_is_not_a_call():
    nothing('[TOOL_CALLS]read[ARGS]{"path": ')
    nothing("[TOOL_CALLS] I would call a tool here")


# ---------------------------------------------------------------- what never counts


def test_only_offered_tools_and_all_or_nothing():
    nothing('<tool_call>{"name": "terminal", "arguments": {"command": "rm -rf /"}}</tool_call>')
    nothing(
        '<tool_call>{"name": "ls", "arguments": {}}</tool_call>'
        '<tool_call>{"name": "terminal", "arguments": {"command": "id"}}</tool_call>'
    )
    nothing("<function=terminal>\n<parameter=command>\nid\n</parameter>\n</function>")
    nothing('[TOOL_CALLS]terminal[ARGS]{"command": "id"}')


def test_no_tools_offered_means_no_calls():
    assert (
        recognise_tool_calls('<tool_call>{"name": "ls", "arguments": {}}</tool_call>', {}) is None
    )


def test_tags_quoted_in_code_are_not_calls():
    fenced = (
        "The docs show this format:\n```\n"
        '<tool_call>{"name": "ls", "arguments": {}}</tool_call>\n```\nThat is all.'
    )
    nothing(fenced)
    nothing('Models write `<tool_call>{"name": "ls", "arguments": {}}</tool_call>` for that.')
    nothing("The `[TOOL_CALLS]` token starts Mistral's calls.")


def test_a_fence_inside_an_argument_does_not_hide_the_next_call():
    text = (
        "<function=write>\n<parameter=path>\nREADME.md\n</parameter>\n<parameter=content>\n"
        "```bash\nmake\n</parameter>\n</function>\n"
        "<function=read>\n<parameter=path>\nREADME.md\n</parameter>\n</function>"
    )
    assert [name for name, _ in calls(text)] == ["write", "read"]


def test_plain_answers_are_untouched():
    for text in ("The answer is 42.", "", "   ", "<b>bold</b> and [link](x)", "{not json"):
        nothing(text)


# ---------------------------------------------------------------- streaming hold-back


def stream(pieces: list[str]) -> tuple[str, HeldBackText]:
    held = HeldBackText()
    shown = "".join(held.feed(p) for p in pieces)
    return shown, held


def test_prose_streams_through_and_a_marker_is_held_back():
    text = 'Reading it now. <tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>'
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    shown, held = stream(pieces)
    assert shown == "Reading it now. "
    found = recognise_tool_calls(held.text, TOOLS)
    assert held.finish(found) == ""


def test_held_text_that_is_no_call_is_released_whole():
    text = "Use <tool_call> tags, like this: <tool_call>nothing</tool_call>."
    shown, held = stream([text[i : i + 2] for i in range(0, len(text), 2)])
    assert shown == "Use "
    assert shown + held.finish(recognise_tool_calls(held.text, TOOLS)) == text


def test_prose_after_the_calls_is_shown_at_the_end():
    text = '<tool_call>{"name": "ls", "arguments": {}}</tool_call>\nThen I will summarise.'
    shown, held = stream([text])
    assert shown == ""
    assert held.finish(recognise_tool_calls(held.text, TOOLS)) == "Then I will summarise."


@pytest.mark.parametrize(
    "text",
    ['{"name": "ls", "arguments": {}}', '```json\n{"name": "ls", "arguments": {}}\n```'],
)
def test_a_message_opening_like_bare_json_is_held(text):
    shown, held = stream(list(text))
    assert shown == ""
    assert held.finish(recognise_tool_calls(held.text, TOOLS)) == ""


def test_a_code_answer_in_another_language_streams_at_once():
    text = "```python\nprint('hi')\n```\n"
    shown, _ = stream(list(text))
    assert shown.startswith("```python\nprint('hi')")


def test_a_partial_marker_is_held_until_it_is_clearly_not_one():
    held = HeldBackText()
    assert held.feed("a <tool") == "a "
    assert held.feed("kit> b") == "<toolkit> b"
