"""Benchmark: commands through the terminal tool (policy + sandbox + runner) against running them directly.

Builds a git repository of a few thousand files in a temporary folder and
times `git status`, `rg <pattern>` and `ls -R` two ways, alternating: through
`TerminalTool` (the policy's verdict, an allow-listed environment, a private
HOME/TMPDIR, started from the confined spawner process under a keeper,
output captured and reported) and with `subprocess.run` on the same argv. Prints the median of the
per-round ratios (target: at most 1.3x, sandbox set-up included). Ratios
only; absolute seconds depend on the machine, and the load averages printed
before and after say how busy it was.

    python bench/terminal_overhead.py [--files 10000] [--runs 21] [--pause 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hello_tui.config import load_settings
from hello_tui.core.tools import ToolContext
from hello_tui.tools.grep import find_rg
from hello_tui.tools.shell.sandbox import sandbox_status
from hello_tui.tools.terminal import TerminalArgs, TerminalTool

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "sigma"]


def build_repo(root: Path, count: int, seed: int = 11) -> None:
    rng = random.Random(seed)
    for i in range(count):
        folder = root / f"pkg{i % 30:02}" / f"mod{i % 6}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [" ".join(rng.choice(WORDS) for _ in range(10)) for _ in range(30)]
        if i % 101 == 0:
            lines.insert(12, "raise NeedleError('rare')")
        (folder / f"file{i}.py").write_text("\n".join(lines) + "\n")
    # No `gc --auto` left running in the background after the commit.
    git = ["git", "-c", "user.email=b@example.org", "-c", "user.name=bench", "-c", "gc.auto=0"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "bench"], cwd=root, check=True)
    # A few changes, so git status has something to say.
    for i in range(0, count, 500):
        path = root / f"pkg{i % 30:02}" / f"mod{i % 6}" / f"file{i}.py"
        path.write_text(path.read_text() + "changed\n")


def median_ratio(candidate, peer, runs: int, pause: float) -> tuple[float, float, float]:
    """(median ratio, median candidate s, median peer s); rounds alternate.

    Each timed call starts after `pause` seconds, so that neither side pays
    for work the other left running (the terminal forks the next command's
    keeper after a command ends, as a user's next command would find it).
    """
    ratios, ours, theirs = [], [], []
    for _ in range(runs):
        time.sleep(pause)
        start = time.perf_counter()
        peer()
        base = time.perf_counter() - start
        time.sleep(pause)
        start = time.perf_counter()
        candidate()
        mine = time.perf_counter() - start
        ratios.append(mine / base)
        ours.append(mine)
        theirs.append(base)
    return statistics.median(ratios), statistics.median(ours), statistics.median(theirs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--pause", type=float, default=0.05, help="seconds before each timed call")
    opts = parser.parse_args()
    rg = find_rg()
    if rg is None:
        print("rg not found; install the pinned ripgrep wheel")
        return 1
    # rg by name, as the model would type it: put its folder on PATH for both sides.
    os.environ["PATH"] = f"{Path(rg).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        build_repo(root, opts.files)
        ctx = ToolContext(settings=load_settings(root, environ={}))
        tool = TerminalTool()
        print(
            f"repo: {opts.files} files, runs: {opts.runs}, pause: {opts.pause:g} s, "
            f"{sandbox_status()}, {_load()}"
        )
        print("median of per-round ratios, tool / direct (target <= 1.3x)")
        for command in ("git status", "rg NeedleError", "ls -R"):
            argv = command.split()

            def through_tool(command: str = command) -> None:
                result = loop.run_until_complete(tool.run(TerminalArgs(command=command), ctx))
                assert result.data["verdict"] == "run", result.text
                assert result.data.get("exit_code") == 0, result.text

            def direct(argv: list[str] = argv) -> None:
                subprocess.run(argv, cwd=root, capture_output=True, check=True)

            direct()  # warm the page cache for both
            through_tool()
            ratio, mine, theirs = median_ratio(through_tool, direct, opts.runs, opts.pause)
            print(
                f"  {command:<16} {ratio:.2f}x   (tool {mine * 1000:.1f} ms, "
                f"direct {theirs * 1000:.1f} ms)"
            )
        print(f"after: {_load()}")
    loop.close()
    return 0


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f} (1 min) {five:.1f} (5 min) on {os.cpu_count()} CPUs"


if __name__ == "__main__":
    sys.exit(main())
