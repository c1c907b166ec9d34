"""The demo's scripted model: fixes the sample repo's `mean` the way a good model would.

`DemoModel` is a callable script for `ScriptedModelServer`: it looks at each
request (what the tools returned so far in this turn) and answers with the
next step — keep a todo list, read stats.py, ask to run the tests, propose a
two-hunk patch, rerun the tests, answer. If the user rejects the patch or
denies a command, it says so instead of pretending.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from hello_tui.demo.model import CompletionReply, call, text, tool_calls

TEST_COMMAND = "python -m pytest -q"
DEMO_TASK = "The test in test_stats.py fails. Find the bug and fix it."

TODOS = ("Read stats.py", "Run the tests", "Fix mean()", "Rerun the tests")

# Two hunks: the fix (mean divides by count) and a guard for empty input in spread().
DEMO_PATCH = """\
*** Begin Patch
*** Update File: stats.py
@@ def mean(values: list[float]) -> float:
     \"\"\"Arithmetic mean of the values.\"\"\"
     count = len(values)
-    return total(values) / (count - 1)
+    return total(values) / count
@@ def spread(values: list[float]) -> float:
     \"\"\"Largest minus smallest value.\"\"\"
+    if not values:
+        return 0.0
     return max(values) - min(values)
*** End Patch
"""


def _todo(action: str, **fields: Any):
    return call("todo", {"action": action, **fields})


def _turn_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of the current turn: everything after the user's last own message."""
    start = 0
    for i, message in enumerate(messages):
        content = message.get("content")
        if (
            message.get("role") == "user"
            and isinstance(content, str)
            and not content.startswith("Observation")
        ):
            start = i
    return messages[start:]


def _tool_results(turn: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(tool name, result text) for each tool result of the turn, in order."""
    names: dict[str, str] = {}
    results = []
    for message in turn:
        for tc in message.get("tool_calls") or []:
            names[tc.get("id", "")] = tc.get("function", {}).get("name", "")
        if message.get("role") == "tool":
            name = names.get(message.get("tool_call_id", ""), "")
            results.append((name, str(message.get("content") or "")))
    return results


class DemoModel:
    """Callable script: `(request body) -> reply`; `delay` slows streaming so people can watch."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay

    def __call__(self, body: dict[str, Any]) -> CompletionReply:
        return dataclasses.replace(self._reply(body), delay=self.delay)

    def _reply(self, body: dict[str, Any]) -> CompletionReply:
        if not body.get("tools"):
            # Summaries, plans and convergence requests are answered in prose.
            return text("Summary: stats.mean divided by count - 1; the fix divides by count.")
        turn = _turn_messages(body.get("messages", []))
        results = _tool_results(turn)
        done = [name for name, _ in results]
        if "read" not in done:
            return tool_calls(
                [
                    _todo("clear"),
                    *[_todo("add", title=t) for t in TODOS],
                    _todo("update", id="1", status="in_progress"),
                    call("read", {"path": "stats.py"}),
                ],
                content="Let me keep a short todo list and read the module first.",
            )
        if "terminal" not in done:
            return tool_calls(
                [
                    _todo("update", id="1", status="completed"),
                    _todo("update", id="2", status="in_progress"),
                    call("terminal", {"command": TEST_COMMAND}),
                ],
                content="`mean` divides by `count - 1`. Let me confirm with the tests.",
            )
        if "apply_patch" not in done:
            return tool_calls(
                [
                    _todo("update", id="2", status="completed"),
                    _todo("update", id="3", status="in_progress"),
                    call("apply_patch", {"patch": DEMO_PATCH}),
                ],
                content="The failing test expects 2.0 for [1, 2, 3]. Here is the fix "
                "(plus an optional guard for empty input).",
            )
        patch_result = next(text for name, text in reversed(results) if name == "apply_patch")
        if "Nothing was written" in patch_result or "rejected" in patch_result.lower():
            return text(
                "Understood: I left `stats.py` unchanged. The bug is in `mean()`: it divides "
                "by `count - 1` instead of `count`."
            )
        if done.count("terminal") < 2:
            return tool_calls(
                [
                    _todo("update", id="3", status="completed"),
                    _todo("update", id="4", status="in_progress"),
                    call("terminal", {"command": TEST_COMMAND}),
                ],
                content="Patch applied. Rerunning the tests.",
            )
        last_done = "Updated todo [4] Rerun the tests (completed)."
        if not any(out.startswith(last_done) for name, out in results if name == "todo"):
            return tool_calls([_todo("update", id="4", status="completed")])
        tests = next(text for name, text in reversed(results) if name == "terminal")
        passed = "passed" in tests and "failed" not in tests
        verdict = "The tests pass now." if passed else "The tests still report a problem:"
        return text(
            f"Fixed `mean()` in `stats.py`: it divided by `count - 1`, so "
            f"`summary([1, 2, 3])['mean']` was 3.0 instead of 2.0. {verdict}\n\n"
            + ("" if passed else f"```\n{tests[-600:]}\n```")
        )
