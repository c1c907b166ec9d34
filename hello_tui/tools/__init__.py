"""The tools the model can call, and the registry that holds them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hello_tui.config import Settings
    from hello_tui.tools.registry import ToolRegistry


def build_registry(settings: Settings) -> ToolRegistry:
    """Every tool of the model contract, in the order the prompt lists them."""
    # Imported here so that `hello_tui.store.notes` (used by `hello-tui apply`)
    # does not pull pydantic and the whole registry in at start-up.
    from hello_tui.tools.context_fetch import ContextFetchTool
    from hello_tui.tools.files import GlobTool, LsTool, ReadTool
    from hello_tui.tools.grep import GrepTool
    from hello_tui.tools.memory import MemoryTool
    from hello_tui.tools.notes import NoteTool
    from hello_tui.tools.planner import PlanTool
    from hello_tui.tools.registry import ToolRegistry
    from hello_tui.tools.terminal import TerminalTool
    from hello_tui.tools.todo import TodoTool
    from hello_tui.tools.writes import ApplyPatchTool, EditTool, WriteTool

    return ToolRegistry(
        [
            LsTool(),
            GlobTool(),
            GrepTool(),
            ReadTool(),
            TerminalTool(),
            ApplyPatchTool(),
            EditTool(),
            WriteTool(),
            ContextFetchTool(),
            NoteTool(),
            TodoTool(),
            PlanTool(),
            MemoryTool(),
        ]
    )
