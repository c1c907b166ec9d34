"""Benchmark: opening the review modal on a 10,000-line file, headless.

Measures the time from pushing PatchReviewScreen to the first frame that
draws diff rows (App.run_test, medians of several runs), for three shapes of
change: scattered edits, a block of new code, and every line changed. The
peer is a plain difflib.SequenceMatcher(None, old, new).get_opcodes() on the
same lines -- the least any difflib-based viewer must do. Prints the ratio
against the peer and the absolute milliseconds (target: 150 ms at most).

    python bench/review_open.py [--lines 10000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual.app import App

from hello_tui.engine.types import text_hunks
from hello_tui.patch.types import FilePlan, PatchPlan, Risk
from hello_tui.screens.review import PatchReviewScreen
from hello_tui.widgets.diff_view import DiffView


def python_source(lines: int) -> list[str]:
    out = []
    for i in range(lines // 4):
        out += [
            f"def handler_{i}(request, limit={i}):\n",
            f"    value = request.get('k{i}', {i})\n",
            f"    return value * {i % 7} + limit\n",
            "\n",
        ]
    return out[:lines]


def shapes(lines: int) -> dict[str, tuple[str, str]]:
    old = python_source(lines)
    scattered = [
        line.replace("+ limit", "- limit  # fixed") if i % 97 == 2 else line
        for i, line in enumerate(old)
    ]
    block = old[: lines // 2] + [f"    extra_{i} = {i}\n" for i in range(500)] + old[lines // 2 :]
    everything = [line.replace("value", "result") if line.strip() else line for line in old]
    old_text = "".join(old)
    return {
        "scattered edits (~25 hunks)": (old_text, "".join(scattered)),
        "500-line insertion": (old_text, "".join(block)),
        "every line changed": (old_text, "".join(everything)),
    }


# What "opens fast" means here: the first diff rows on screen within this.
TARGET_SECONDS = 0.150


class BenchApp(App[Any]):
    pass


async def open_once(plan: PatchPlan) -> float:
    """Seconds from push_screen to the first render_line that draws diff rows."""
    first_paint: list[float] = []
    painted = asyncio.Event()  # no polling: a polling loop would steal time from the app
    original = DiffView.render_line

    def timed(self: DiffView, y: int):
        strip = original(self, y)
        if self.diff is not None and not first_paint:
            first_paint.append(time.perf_counter())
            painted.set()
        return strip

    DiffView.render_line = timed  # type: ignore[method-assign]
    try:
        app = BenchApp()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            start = time.perf_counter()
            app.push_screen(PatchReviewScreen(plan))
            await painted.wait()
            elapsed = first_paint[0] - start
            await app.workers.wait_for_complete()
        return elapsed
    finally:
        DiffView.render_line = original  # type: ignore[method-assign]


def peer_once(old_text: str, new_text: str) -> float:
    start = time.perf_counter()
    difflib.SequenceMatcher(
        None, old_text.splitlines(True), new_text.splitlines(True)
    ).get_opcodes()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(
        f"review open, {args.lines}-line Python file, median of {args.runs} runs, 120x40 headless"
    )
    for name, (old_text, new_text) in shapes(args.lines).items():
        # Planning belongs to the patch engine, before the review opens: not timed.
        plan = PatchPlan(
            [
                FilePlan(
                    "big.py",
                    "update",
                    old_text=old_text,
                    new_text=new_text,
                    hunks=text_hunks(old_text, new_text),
                    git_lines=True,
                )
            ],
            Risk(False),
        )
        ours = statistics.median(asyncio.run(open_once(plan)) for _ in range(args.runs))
        peer = statistics.median(peer_once(old_text, new_text) for _ in range(args.runs))
        print(
            f"  {name:30s} hunks={len(plan.files[0].hunks):4d}  open {ours * 1000:7.1f} ms"
            f"  peer get_opcodes {peer * 1000:7.1f} ms  ratio {ours / peer:5.2f}x"
            f"  {'OK' if ours <= TARGET_SECONDS else 'OVER 150 ms'}"
        )


if __name__ == "__main__":
    main()
