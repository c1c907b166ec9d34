"""A tool's JSON schema is built once per arguments model (every request carries every
schema), and each caller gets a copy of its own."""

from __future__ import annotations

from typing import Any, ClassVar

from hello_tui.core.tools import Tool, ToolArgs, ToolContext, ToolResult, compact_parameters


class NoteArgs(ToolArgs):
    text: str
    times: int = 1
    tag: str | None = None

    builds: ClassVar[int] = 0

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        NoteArgs.builds += 1
        return super().model_json_schema(*args, **kwargs)


class NoteTool(Tool):
    name = "note"
    description = "Keep a note."
    Args = NoteArgs

    async def run(self, args: NoteArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult.ok(args.text)


def test_the_schema_is_the_compacted_model_schema_built_once():
    first = NoteTool().schema()
    again = NoteTool().schema()
    assert NoteArgs.builds == 1
    assert first == again
    assert first == {
        "type": "function",
        "function": {
            "name": "note",
            "description": "Keep a note.",
            "parameters": compact_parameters(NoteArgs.model_json_schema()),
        },
    }


def test_a_caller_changing_its_schema_changes_no_other():
    first = NoteTool().schema()
    first["function"]["parameters"]["properties"]["text"]["description"] = "changed"
    first["function"]["parameters"]["required"].append("tag")
    again = NoteTool().schema()
    assert "description" not in again["function"]["parameters"]["properties"]["text"]
    assert again["function"]["parameters"]["required"] == ["text"]
