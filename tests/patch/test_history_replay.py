"""The project's own history, replayed: each commit of a fixed range, its `git diff` and its
`git format-patch` mail, applied by the engine to the files as they were at its parent, gives
the commit's files (bytes and executable bit). The range ends at a fixed commit, so every run
checks the same cases whatever has been committed since; skipped where the checkout does not
hold that commit (not a git checkout, or a shallow one).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.patch import commit_plan, plan_patch_text

CHECKOUT = Path(__file__).resolve().parents[2]
# The last commit of the range and how many first-parent commits it spans, itself included.
RANGE_END = "d49b05cbe1076b4cafd3fdedb728b5235e04a3bb"
COMMITS = 10
ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent", "LC_ALL": "C"}


def git(*args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", "-C", str(CHECKOUT), *args], env=ENV, input=data, capture_output=True, check=True
    ).stdout


def range_commits() -> list[str]:
    if shutil.which("git") is None:
        return []
    try:
        revs = git("rev-list", "--no-merges", "--first-parent", f"--max-count={COMMITS}", RANGE_END)
    except (subprocess.CalledProcessError, OSError):
        return []
    out = []
    for rev in revs.decode().split():
        parents = git("rev-list", "--parents", "-n1", rev).split()
        if len(parents) == 2:
            out.append(rev)
    return out


def touched(parent: str, commit: str) -> set[bytes]:
    fields = git("diff", "--name-only", "-z", "--no-renames", parent, commit).split(b"\0")
    return {f for f in fields if f}


def export(rev: str, paths: set[bytes], dest: Path) -> dict[str, tuple[bytes, bool]]:
    """Write `paths` as they are at `rev` under dest; return {path: (bytes, executable)}."""
    dest.mkdir(parents=True, exist_ok=True)
    entries = []
    for item in git("ls-tree", "-r", "-z", rev).split(b"\0"):
        if not item:
            continue
        meta, path = item.split(b"\t", 1)
        mode, kind, oid = meta.split()
        if path in paths and kind == b"blob" and mode in (b"100644", b"100755"):
            entries.append((mode, oid, path))
    blobs = git("cat-file", "--batch", data=b"".join(e[1] + b"\n" for e in entries))
    files: dict[str, tuple[bytes, bool]] = {}
    pos = 0
    for mode, _oid, path in entries:
        nl = blobs.index(b"\n", pos)
        size = int(blobs[pos:nl].split()[2])
        data = blobs[nl + 1 : nl + 1 + size]
        pos = nl + 1 + size + 1
        target = dest / os.fsdecode(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o755 if mode == b"100755" else 0o644)
        files[os.fsdecode(path)] = (data, mode == b"100755")
    return files


def tree(root: Path) -> dict[str, tuple[bytes, bool]]:
    out = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] == ".helloagents" or not path.is_file():
            continue
        out[rel.as_posix()] = (path.read_bytes(), bool(path.stat().st_mode & 0o100))
    return out


@pytest.mark.parametrize("variant", ["diff", "format-patch"])
@pytest.mark.parametrize("commit", range_commits() or ["none"], ids=lambda c: c[:10])
def test_commit_replays_exactly(commit: str, variant: str, tmp_path: Path):
    if commit == "none":
        pytest.skip(f"the checkout does not hold the commits up to {RANGE_END[:10]}")
    parent = commit + "^"
    paths = touched(parent, commit)
    if variant == "diff":
        patch = git("diff", "--binary", parent, commit)
    else:
        patch = git("format-patch", "-1", "--stdout", commit)
    if not patch.strip():
        pytest.skip("empty commit")
    work = tmp_path / "work"
    export(parent, paths, work)
    want = export(commit, paths, tmp_path / "expected")
    settings = load_settings(work, environ={})
    plan = plan_patch_text(patch.decode("utf-8", "surrogateescape"), settings, limits=False)
    commit_plan(plan, settings)
    assert tree(work) == want
