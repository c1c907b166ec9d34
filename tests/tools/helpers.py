"""Small helpers shared by the tool tests: a context on a repo, and file writing."""

from __future__ import annotations

from pathlib import Path

from hello_tui.config import load_settings
from hello_tui.core.tools import ToolContext


def make_ctx(repo: Path) -> ToolContext:
    """A tool context on `repo` with an empty environment (no stray keys or settings)."""
    return ToolContext(settings=load_settings(repo, environ={}))


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def policy_world(base: Path) -> dict[str, Path]:
    """A repository to judge commands in: `a.txt`, `src/main.py`, a `.env` with a key, and
    beside it an outside folder with a canary and the command's private HOME and TMPDIR."""
    import subprocess

    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside-secret\n")
    repo = base / "repo"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("hello\n")
    (repo / "src" / "main.py").write_text("print('hi')\n")
    (repo / ".env").write_text("LLM_API_KEY=sk-repo-key\n")
    private = base / "private"
    (private / "home").mkdir(parents=True)
    (private / "tmp").mkdir()
    return {"repo": repo, "outside": outside.resolve(), "private": private.resolve()}
