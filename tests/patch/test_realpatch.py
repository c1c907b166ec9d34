"""The public realpatch corpus (real commits of psf/requests) through the engine, when present.

Each case: before/ is copied, patch.txt applied as `hello-tui apply --yes` applies it
(read as bytes, no size limits), and the tree compared with expected/ (file set, bytes,
executable bit). A refusal must leave the tree as it was; cases marked `refuse` must be
refused. One test also runs the corpus's own runner on the format-patch cases, through
the real command line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.patch import PatchError, commit_plan, plan_patch_text

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "realpatch"
IGNORED = {".git", ".helloagents"}


def cases() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if (p / "meta.json").is_file())


def tree(root: Path) -> dict[str, tuple[bool, bytes]]:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in IGNORED or not path.is_file():
            continue
        out[rel.as_posix()] = (bool(path.stat().st_mode & 0o100), path.read_bytes())
    return out


def copy_writable(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, copy_function=shutil.copy2)
    for path in [dst, *dst.rglob("*")]:
        if path.is_dir():
            path.chmod(path.stat().st_mode | 0o700)
        else:
            path.chmod(path.stat().st_mode | 0o600)


@pytest.mark.skipif(not CORPUS.is_dir(), reason="realpatch corpus not present beside the checkout")
@pytest.mark.parametrize("case", cases(), ids=lambda p: p.name)
def test_case(case: Path, tmp_path: Path):
    meta = json.loads((case / "meta.json").read_text(encoding="utf-8"))
    work = tmp_path / "work"
    if (case / "before").is_dir():
        copy_writable(case / "before", work)
    else:
        work.mkdir()
    before = tree(work)
    settings = load_settings(work, environ=dict(meta.get("env") or {}))
    text = (case / "patch.txt").read_bytes().decode("utf-8", "surrogateescape")
    try:
        commit_plan(plan_patch_text(text, settings, limits=False), settings)
        error = None
    except PatchError as exc:
        error = str(exc)
    after = tree(work)
    if error is not None:
        assert after == before, f"refused but the tree changed: {error}"
        assert meta["expect"] in ("refuse", "either"), f"refused: {error}"
        return
    assert meta["expect"] != "refuse", "applied a patch that must be refused"
    expected = tree(case / "expected") if (case / "expected").is_dir() else {}
    assert sorted(after) == sorted(expected)
    for rel, (executable, data) in expected.items():
        assert after[rel][1] == data, f"content of {rel}"
        assert after[rel][0] == executable, f"executable bit of {rel}"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="realpatch corpus not present beside the checkout")
def test_corpus_runner_on_the_mail_cases_through_the_command_line():
    runner = CORPUS / "run.py"
    if not runner.is_file():
        pytest.skip("the corpus has no runner")
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(
        [sys.executable, str(runner), str(CORPUS), "--filter=-fp"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    summary = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " 0 refused, 0 WRONG, 0 PARTIAL" in summary, summary
