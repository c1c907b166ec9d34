"""The demo's scripted model: fixes the sample repo's `mean` the way a good model would.

`DemoModel` is a callable script for `ScriptedModelServer`: it looks at each
request (what the tools returned so far in this turn) and answers with the
next step — keep a todo list, read stats.py, ask to run the tests, propose a
two-hunk patch, rerun the tests, answer. If the user rejects the patch or
denies a command, it says so instead of pretending, and a todo is ticked only
when its step worked: "Run the tests" when the tests ran, "Rerun the tests"
when they pass.

The sample's tests use the standard library's unittest, so the demo works on a
plain `pip install` with no test runner installed.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from hello_tui.core.markdown_fence import fence
from hello_tui.demo.model import CompletionReply, call, text, tool_calls

# unittest, not pytest: a plain install has no pytest, and the demo must run there.
TEST_COMMAND = "python -m unittest"
DEMO_TASK = "The test in test_stats.py fails. Find the bug and fix it."

# unittest's summary line: "Ran 2 tests in 0.001s".
UNITTEST_RAN = re.compile(r"^Ran \d+ tests? in ", re.MULTILINE)

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
        first_run = next(out for name, out in results if name == "terminal")
        if not tests_ran(first_run):
            return text(
                "The tests did not run, so `Run the tests` stays open:\n\n"
                + fence(first_run[-600:], "")
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
        tests = next(out for name, out in reversed(results) if name == "terminal")
        passed = tests_passed(tests)
        last_done = "Updated todo [4] Rerun the tests (completed)."
        ticked = any(out.startswith(last_done) for name, out in results if name == "todo")
        if passed and not ticked:
            return tool_calls([_todo("update", id="4", status="completed")])
        if passed:
            return text(
                "Fixed `mean()` in `stats.py`: it divided by `count - 1`, so "
                "`summary([1, 2, 3])['mean']` was 3.0 instead of 2.0. The tests pass now."
            )
        return text(
            "The tests still fail, so `Rerun the tests` stays open. The bug is in `mean()`: "
            "it divides by `count - 1` instead of `count`, and the applied change does not "
            "fix that:\n\n" + fence(tests[-600:], "")
        )


def tests_ran(output: str) -> bool:
    """Whether the terminal result shows unittest running tests (pass or fail), not a
    command that could not start or a missing module."""
    return UNITTEST_RAN.search(output) is not None


def tests_passed(output: str) -> bool:
    """The tests ran and the command exited 0 (unittest's `OK`)."""
    return tests_ran(output) and "exit code: 0" in output
