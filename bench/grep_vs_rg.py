"""Benchmark: the grep tool (rg back end and Python fallback) against rg run directly.

Generates a tree of at least 10,000 files in a temporary folder, runs each
search several times, and prints median time ratios against plain `rg`
(target: the tool at most 1.5x). Ratios only; absolute seconds depend on the
machine.

    python bench/grep_vs_rg.py [--files 10000] [--runs 9]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hello_tui.config import load_settings
from hello_tui.core.tools import ToolContext
from hello_tui.tools.grep import GrepTool, find_rg

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "theta",
    "kappa",
    "lambda",
    "sigma",
    "omega",
]


def build_tree(root: Path, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    for i in range(count):
        folder = root / f"pkg{i % 40:02}" / f"mod{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        for j in range(40):
            words = " ".join(rng.choice(WORDS) for _ in range(8))
            lines.append(f"def f_{i}_{j}(): return '{words}'")
        if i % 97 == 0:
            lines.insert(20, "    raise NeedleError('rare failure')")
        (folder / f"file{i}.py").write_text("\n".join(lines) + "\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("NeedleError in build\n")


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_ratio(candidate, peer, runs: int) -> float:
    """Median of per-round ratios; rounds alternate so machine load hits both alike."""
    ratios = []
    for _ in range(runs):
        base = timed(peer)
        ratios.append(timed(candidate) / base)
    return statistics.median(ratios)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=9)
    opts = parser.parse_args()
    rg = find_rg()
    if rg is None:
        print("rg not found; install the pinned ripgrep wheel")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build_tree(root, opts.files)
        ctx = ToolContext(settings=load_settings(root, environ={}))
        fast, slow = GrepTool(force_python=False), GrepTool(force_python=True)
        args = fast.Args.model_validate({"pattern": r"Needle\w+", "max_results": 200})

        def run_tool(tool: GrepTool) -> None:
            result = asyncio.run(tool.run(args, ctx))
            assert result.status in ("success", "partial"), result.text

        def run_rg() -> None:
            subprocess.run(
                [rg, "-n", "-e", r"Needle\w+", "."], cwd=root, capture_output=True, check=True
            )

        run_rg()  # warm the page cache for everyone
        tool_rg = median_ratio(lambda: run_tool(fast), run_rg, opts.runs)
        tool_py = median_ratio(lambda: run_tool(slow), run_rg, max(3, opts.runs // 3))
        print(f"tree: {opts.files} files, runs: {opts.runs} (median of per-round ratios)")
        print(f"grep tool (rg back end) / rg : {tool_rg:.2f}x  (target <= 1.5x)")
        print(f"grep tool (Python fallback) / rg : {tool_py:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
