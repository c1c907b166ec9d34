"""prompts/tools.md stays consistent with the registered tools and their argument models."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.core.tools import Tool
from hello_tui.tools.context_fetch import ContextFetchTool
from hello_tui.tools.memory import MemoryTool
from hello_tui.tools.notes import NoteTool
from hello_tui.tools.planner import PlanTool
from hello_tui.tools.todo import TodoTool

CONTRACT = (
    "ls",
    "glob",
    "grep",
    "read",
    "terminal",
    "apply_patch",
    "edit",
    "write",
    "context_fetch",
    "note",
    "todo",
    "plan",
    "memory",
)
ARG_LINE = re.compile(r"^- `([a-z_]+)` \(([^)]*)\)")


def tools_md() -> str:
    # Read the file itself, not a repository override, so the shipped text is what is tested.
    from hello_tui.prompts_loader import packaged_prompt

    return packaged_prompt("tools")


def sections(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        heading = re.match(r"^## (\S+)\s*$", line)
        if heading:
            name = heading.group(1)
            assert name not in found, f"tools.md has two sections for {name}"
            found[name] = ""
        elif name is not None:
            found[name] += line + "\n"
    return found


def documented_args(section: str) -> dict[str, str]:
    """`- \\`name\\` (type, required|optional ...)` lines of a section."""
    return {m.group(1): m.group(2) for line in section.splitlines() if (m := ARG_LINE.match(line))}


def check_tool(tool: Tool, docs: dict[str, str]) -> list[str]:
    problems = []
    if tool.name not in docs:
        return [f"tools.md has no '## {tool.name}' section"]
    args = documented_args(docs[tool.name])
    for field_name, info in tool.Args.model_fields.items():
        if field_name not in args:
            problems.append(f"{tool.name}: argument '{field_name}' is not documented")
            continue
        said_required = "required" in args[field_name].split(", ")
        if said_required != info.is_required():
            problems.append(
                f"{tool.name}: '{field_name}' is {'required' if info.is_required() else 'optional'}"
                f" but tools.md says {args[field_name]!r}"
            )
    for name in args:
        if name not in tool.Args.model_fields:
            problems.append(f"{tool.name}: tools.md documents '{name}', which the tool lacks")
    return problems


def test_tools_md_has_exactly_the_contract_sections():
    assert tuple(sections(tools_md())) == CONTRACT


@pytest.mark.parametrize("tool_cls", [ContextFetchTool, NoteTool, TodoTool, PlanTool, MemoryTool])
def test_state_tools_match_their_argument_models(tool_cls):
    assert check_tool(tool_cls(), sections(tools_md())) == []


def test_the_check_catches_drift():
    docs = sections(tools_md())
    docs["todo"] = docs["todo"].replace("- `desc`", "- `description`")
    docs["plan"] = docs["plan"].replace("`goal` (string, required)", "`goal` (string, optional)")
    problems = check_tool(TodoTool(), docs) + check_tool(PlanTool(), docs)
    assert "todo: argument 'desc' is not documented" in problems
    assert "todo: tools.md documents 'description', which the tool lacks" in problems
    assert any(p.startswith("plan: 'goal' is required") for p in problems)
    del docs["memory"]
    assert check_tool(MemoryTool(), docs) == ["tools.md has no '## memory' section"]


def test_every_registered_tool_is_documented_and_nothing_else(tmp_path: Path):
    from hello_tui.tools import build_registry

    registry = build_registry(load_settings(tmp_path, environ={}))
    docs = sections(tools_md())
    assert sorted(registry.names) == sorted(docs), "tools.md and the registry name other tools"
    problems = [p for name in registry.names for p in check_tool(registry.get(name), docs)]
    assert problems == []
