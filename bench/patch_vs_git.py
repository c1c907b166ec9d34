"""Benchmark: `hello-tui apply` against `git apply`, on big changes and on a typical small one.

Big: a 200,000-line file with a 2,000-hunk change, shaped like code (a top-level
`def` every 100 lines, its body indented). Indented: the same size, every line
indented (a class body, YAML, JSON, a lock file), so no line above a hunk is a
function line for git's rule and the function context of each hunk must not
cost a scan to the top of the file. Small: 20 files of 300 lines, 5 hunks each
(what one commit usually is). Both tools run as subprocesses on
fresh copies of the same tree; each is timed over several runs and the medians
are compared. hello-tui's time includes its whole transaction (lock, stale
guard, backups, journal, fsyncs, note) and the Python interpreter's start.
Printed: the ratios hello-tui / git (lower is better; 1.0x = as fast as git), and
beside them the bare interpreter's start-up, the floor of any Python command, and
the interpreter with `re`, `json` and `hashlib` loaded, the floor of any apply
written in Python. Run it
with the interpreter users have: a fresh venv's, with `pip install .` in it (a
machine-wide Python's `.pth` files can cost more than the whole apply).

    python bench/patch_vs_git.py [--only code|indented|small] [--runs N] [--lines N] [--hunks N]
                                 [--files N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import hello_tui


def make_file(n_lines: int, *, code: bool) -> list[str]:
    """`code`: a top-level function line every 100 lines; else every line indented."""
    return [
        f"def step_{i}(value):"
        if code and i % 100 == 0
        else f"    value_{i} = compute({i % 97}, {i * 7919 % 10007})  # step {i}"
        for i in range(n_lines)
    ]


def make_patches(lines: list[str], hunks: int) -> tuple[str, str]:
    """The same change as a Codex patch and as a unified diff (3 context lines)."""
    step = len(lines) // hunks
    targets = [k * step + step // 2 for k in range(hunks)]
    codex = ["*** Begin Patch", "*** Update File: big.py"]
    unified = ["--- a/big.py", "+++ b/big.py"]  # the callers rename these for other files
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


def make_small_change(files: int, lines: int, hunks: int) -> tuple[dict[str, str], str, str]:
    """`files` files of `lines` lines, and one change of `hunks` hunks in each (Codex, unified)."""
    tree: dict[str, str] = {}
    codex = ["*** Begin Patch"]
    unified: list[str] = []
    for f in range(files):
        name = f"pkg/mod_{f}.py"
        body = [f"    item_{f}_{i} = work({i}, {i * 31 % 101})" for i in range(lines)]
        tree[name] = "\n".join(body) + "\n"
        sub_codex, sub_unified = make_patches(body, hunks)
        codex += sub_codex.splitlines()[1:-1]
        unified += sub_unified.splitlines()
        codex[-(len(sub_codex.splitlines()) - 2)] = f"*** Update File: {name}"
        unified[-len(sub_unified.splitlines())] = f"--- a/{name}"
        unified[-len(sub_unified.splitlines()) + 1] = f"+++ b/{name}"
    codex.append("*** End Patch")
    return tree, "\n".join(codex) + "\n", "\n".join(unified) + "\n"


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return elapsed


def compare(
    label: str, tree: dict[str, str], codex: str, unified: str, runs: int, env: dict[str, str]
) -> None:
    """Time git apply and hello-tui (both patch forms) on fresh copies; print medians, ratios."""
    hello = [sys.executable, "-m", "hello_tui", "apply", "--yes", "--repo", "."]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "change.codex").write_text(codex)
        (root / "change.diff").write_text(unified)
        results: dict[str, list[float]] = {
            "git apply": [],
            "python -c pass": [],  # the interpreter's own start: the floor for hello-tui
            # ...plus the standard modules no Python apply does without (parsing,
            # records, checksums): the floor for any engine written in Python
            "python + re json hashlib": [],
            "hello-tui (codex)": [],
            "hello-tui (unified)": [],
        }
        expected = None
        for run in range(runs):
            for name, times in results.items():
                work = root / f"w{run}_{name.split()[-1].strip('()')}"
                for rel, text in tree.items():
                    (work / rel).parent.mkdir(parents=True, exist_ok=True)
                    (work / rel).write_text(text)
                if name == "git apply":
                    cmd = ["git", "apply", str(root / "change.diff")]
                elif name.startswith("python"):
                    code = "pass" if name == "python -c pass" else "import re, json, hashlib"
                    times.append(timed([sys.executable, "-c", code], work, env))
                    shutil.rmtree(work)
                    continue
                else:
                    patch = "change.codex" if "codex" in name else "change.diff"
                    cmd = hello + [str(root / patch)]
                times.append(timed(cmd, work, env))
                data = {rel: (work / rel).read_bytes() for rel in tree}
                if expected is None:
                    expected = data
                elif data != expected:
                    raise SystemExit(f"{name} produced a different tree than the others")
                shutil.rmtree(work)
    git = statistics.median(results["git apply"])
    print(f"{label}, {runs} runs each (medians)")
    for name, times in results.items():
        print(f"  {name:<26} {statistics.median(times) * 1000:8.1f} ms")
    floor = statistics.median(results["python -c pass"])
    for name, times in results.items():
        if name == "git apply":
            continue
        mine = statistics.median(times)
        peers = f"{mine * 1000:.1f} ms / git apply {git * 1000:.1f} ms"
        if name.startswith("hello-tui"):
            peers += f"; python -c pass {floor * 1000:.1f} ms"
        print(f"ratio {name} / git apply: {mine / git:.2f}x ({peers})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--hunks", type=int, default=2_000)
    parser.add_argument("--files", type=int, default=20, help="files of the small change")
    parser.add_argument(
        "--only", choices=("code", "indented", "small"), help="run one shape (default: all three)"
    )
    args = parser.parse_args()
    if shutil.which("git") is None:
        print("git not found: nothing to compare against")
        return 1
    env = dict(os.environ)
    # An installed hello-tui has its bytecode compiled (pip does it); without this a
    # PYTHONDONTWRITEBYTECODE environment would time the compiler on every run.
    compileall.compile_dir(Path(hello_tui.__file__).parent, quiet=1)
    env["CODE_AGENT_PATCH_MAX_LINES"] = str(10 * args.hunks + 1000)
    for shape, code in (("code", True), ("indented", False)):
        if args.only not in (None, shape):
            continue
        lines = make_file(args.lines, code=code)
        codex, unified = make_patches(lines, args.hunks)
        big = {"big.py": "\n".join(lines) + "\n"}
        label = f"{args.lines:,}-line file ({shape}), {args.hunks:,} hunks"
        compare(label, big, codex, unified, args.runs, env)
    if args.only not in (None, "small"):
        return 0
    tree, codex, unified = make_small_change(args.files, 300, 5)
    compare(f"small change: {args.files} files, 5 hunks each", tree, codex, unified, args.runs, env)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
