"""Benchmark: `hello-tui apply` against `git apply` on a 200,000-line file with a 2,000-hunk change.

Both tools run as subprocesses on fresh copies of the same tree; each is timed
over several runs and the medians are compared. hello-tui's time includes its
whole transaction (lock, stale guard, backups, journal, fsyncs, note).
Printed: the ratios hello-tui / git (lower is better; 1.0x = as fast as git).

    python bench/patch_vs_git.py [--runs N] [--lines N] [--hunks N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_file(n_lines: int) -> list[str]:
    return [
        f"    value_{i} = compute({i % 97}, {i * 7919 % 10007})  # step {i}" for i in range(n_lines)
    ]


def make_patches(lines: list[str], hunks: int) -> tuple[str, str]:
    """The same change as a Codex patch and as a unified diff (3 context lines)."""
    step = len(lines) // hunks
    targets = [k * step + step // 2 for k in range(hunks)]
    codex = ["*** Begin Patch", "*** Update File: big.py"]
    unified = ["--- a/big.py", "+++ b/big.py"]
    for t in targets:
        codex.append("@@")
        codex += [" " + lines[j] for j in range(t - 3, t)]
        codex += [
            "-" + lines[t],
            "+" + lines[t].replace("compute", "compute_fast"),
            "+    # changed",
        ]
        codex += [" " + lines[j] for j in range(t + 1, t + 4)]
        unified.append(f"@@ -{t - 2},7 +{t - 2},8 @@")
        unified += [" " + lines[j] for j in range(t - 3, t)]
        unified += [
            "-" + lines[t],
            "+" + lines[t].replace("compute", "compute_fast"),
            "+    # changed",
        ]
        unified += [" " + lines[j] for j in range(t + 1, t + 4)]
    codex.append("*** End Patch")
    return "\n".join(codex) + "\n", "\n".join(unified) + "\n"


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--hunks", type=int, default=2_000)
    args = parser.parse_args()
    if shutil.which("git") is None:
        print("git not found: nothing to compare against")
        return 1
    lines = make_file(args.lines)
    original = "\n".join(lines) + "\n"
    codex, unified = make_patches(lines, args.hunks)
    env = dict(os.environ)
    env["CODE_AGENT_PATCH_MAX_LINES"] = str(10 * args.hunks + 1000)
    hello = [sys.executable, "-m", "hello_tui", "apply", "--yes", "--repo", "."]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "change.codex").write_text(codex)
        (root / "change.diff").write_text(unified)
        results: dict[str, list[float]] = {
            "git apply": [],
            "hello-tui (codex)": [],
            "hello-tui (unified)": [],
        }
        expected = None
        for run in range(args.runs):
            for name, times in results.items():
                work = root / f"w{run}_{name.split()[-1].strip('()')}"
                work.mkdir()
                (work / "big.py").write_text(original)
                if name == "git apply":
                    cmd = ["git", "apply", str(root / "change.diff")]
                else:
                    patch = "change.codex" if "codex" in name else "change.diff"
                    cmd = hello + [str(root / patch)]
                times.append(timed(cmd, work, env))
                data = (work / "big.py").read_bytes()
                if expected is None:
                    expected = data
                elif data != expected:
                    raise SystemExit(f"{name} produced a different file than the others")
                shutil.rmtree(work)
    git = statistics.median(results["git apply"])
    print(f"{args.lines:,}-line file, {args.hunks:,} hunks, {args.runs} runs each (medians)")
    for name, times in results.items():
        print(f"  {name:<22} {statistics.median(times) * 1000:8.1f} ms")
    for name in ("hello-tui (codex)", "hello-tui (unified)"):
        print(f"ratio {name} / git apply: {statistics.median(results[name]) / git:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
