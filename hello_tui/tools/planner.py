"""The `plan` tool: one model call that turns a goal into Plan / Risks / Validation.

Owns the planning request (system prompt `prompts/plan.md`, the goal, the
constraints and a glance at the repository's top level) and the check of the
reply's shape. The same `make_plan` serves the tool and the UI's `:plan <goal>`.
"""

from __future__ import annotations

import importlib
import importlib.resources
import logging
import os
import re
from pathlib import Path
from typing import Any

from pydantic import Field

from hello_tui.config import Settings
from hello_tui.core.tools import CompleteFn, Tool, ToolArgs, ToolContext, ToolResult

log = logging.getLogger(__name__)

PLAN_MAX_TOKENS = 1500
MIN_STEPS, MAX_STEPS = 5, 12
TOP_LEVEL_LIMIT = 60
SECTIONS = ("Plan", "Risks", "Validation")
_HEADING = re.compile(r"^\s{0,3}#{2,3}\s*(.+?)\s*#*\s*$")
_STEP = re.compile(r"^\s*(\d+)[.)]\s+(\S.*)$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(\S.*)$")


def load_plan_prompt(settings: Settings) -> str:
    """The planning system prompt: the project's prompt loader, else the shipped file."""
    try:
        loader = importlib.import_module("hello_tui.prompts_loader")
    except ImportError:
        loader = None
    if loader is not None and hasattr(loader, "load_prompt"):
        return loader.load_prompt("plan", settings)
    try:
        return (importlib.resources.files("hello_tui.prompts") / "plan.md").read_text("utf-8")
    except (ImportError, FileNotFoundError, OSError):
        import hello_tui

        source_tree = Path(hello_tui.__file__).resolve().parent.parent / "prompts" / "plan.md"
        return source_tree.read_text(encoding="utf-8")


def _top_level(repo: Path) -> list[str]:
    """Names at the repository's top level, so steps can name real files."""
    try:
        entries = sorted(os.scandir(repo), key=lambda e: e.name)
    except OSError:
        return []
    names = [e.name + ("/" if e.is_dir() else "") for e in entries if not e.name.startswith(".")]
    if len(names) > TOP_LEVEL_LIMIT:
        names = names[:TOP_LEVEL_LIMIT] + [f"… ({len(names) - TOP_LEVEL_LIMIT} more)"]
    return names


def build_messages(goal: str, constraints: str | None, settings: Settings) -> list[dict]:
    parts = [f"Goal: {goal.strip()}"]
    if constraints and constraints.strip():
        parts.append(f"Constraints: {constraints.strip()}")
    files = _top_level(settings.repo)
    parts.append(
        f"Repository: {settings.project}\nTop level: "
        + (", ".join(files) if files else "(empty or unreadable)")
    )
    return [
        {"role": "system", "content": load_plan_prompt(settings)},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def split_sections(text: str) -> dict[str, list[str]]:
    """Lines under each `## Heading`, keyed by the heading's lower-case name."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            current = sections.setdefault(heading.group(1).strip().rstrip(":").lower(), [])
            continue
        if current is not None:
            current.append(line)
    return sections


def check_plan(text: str) -> dict[str, Any]:
    """Parse a plan reply; `problems` lists every way it departs from the expected shape."""
    sections = split_sections(text)
    problems: list[str] = []
    for name in SECTIONS:
        if name.lower() not in sections:
            problems.append(f"missing '## {name}' section")
    steps = [m.group(2).strip() for line in sections.get("plan", []) if (m := _STEP.match(line))]
    if "plan" in sections and not MIN_STEPS <= len(steps) <= MAX_STEPS:
        problems.append(
            f"the plan has {len(steps)} numbered step(s); expected {MIN_STEPS} to {MAX_STEPS}"
        )

    def bullets(name: str) -> list[str]:
        return [m.group(1).strip() for line in sections.get(name, []) if (m := _BULLET.match(line))]

    return {
        "steps": steps,
        "risks": bullets("risks"),
        "validation": bullets("validation"),
        "problems": problems,
    }


async def make_plan(
    goal: str, constraints: str | None, settings: Settings, complete: CompleteFn | None
) -> ToolResult:
    if complete is None:
        return ToolResult.error("planning needs a model, and none is connected.")
    if not goal.strip():
        return ToolResult.error("plan needs a non-empty goal.")
    try:
        messages = build_messages(goal, constraints, settings)
    except OSError as exc:
        return ToolResult.error(f"Could not load the planning prompt: {exc}")
    try:
        reply = await complete(messages, PLAN_MAX_TOKENS)
    except Exception as exc:
        log.warning("planning model call failed", exc_info=True)
        return ToolResult.error(f"planning failed: the model call did not succeed ({exc}).")
    reply = (reply or "").strip()
    if not reply:
        return ToolResult.error("planning failed: the model returned an empty answer.")
    checked = check_plan(reply)
    data = {"goal": goal, "constraints": constraints, "plan": reply, **checked}
    if checked["problems"]:
        note = "; ".join(checked["problems"])
        return ToolResult.partial(
            f"{reply}\n\n[note] This plan does not have the expected shape: {note}. "
            "Use it with care or ask for a new plan.",
            data,
        )
    return ToolResult.ok(reply, data)


class PlanArgs(ToolArgs):
    goal: str = Field(min_length=1)
    constraints: str | list[str] | None = Field(None, description="What the plan must respect.")


class PlanTool(Tool):
    name = "plan"
    description = "Get a step-by-step plan before a multi-file or risky change; writes nothing."
    Args = PlanArgs

    async def run(self, args: PlanArgs, ctx: ToolContext) -> ToolResult:
        constraints = args.constraints
        if isinstance(constraints, list):
            constraints = "; ".join(c.strip() for c in constraints if c.strip())
        return await make_plan(args.goal, constraints, ctx.settings, ctx.complete)
