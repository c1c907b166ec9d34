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


def judging_environment(world: dict[str, Path]) -> dict[str, str]:
    """The environment a policy world's commands get (a private HOME and TMPDIR, no pager)."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(world["private"] / "home"),
        "TMPDIR": str(world["private"] / "tmp"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "PAGER": "cat",
        "LESSSECURE": "1",
    }


def verdict_in(world: dict[str, Path], command: str):
    """The policy's verdict on `command` run at the top of the world's repo."""
    from hello_tui.tools.shell.policy import PolicyContext, classify

    context = PolicyContext(environment=judging_environment(world), private_dir=world["private"])
    return classify(command, world["repo"], world["repo"], context)


def run_in_copy(world: dict[str, Path], tmp_path: Path, command: str | list[str]) -> str:
    """What the command prints, run (with bash unless an argv) in a copy of the repo: the
    proof that a harm the policy must stop is real."""
    import os
    import shutil
    import subprocess

    copy = tmp_path / "copy"
    shutil.copytree(world["repo"], copy, symlinks=True)
    argv = command if isinstance(command, list) else ["bash", "-c", command]
    done = subprocess.run(
        argv,
        check=False,
        cwd=copy,
        # The programs where this machine has them (rg may be outside /usr/bin).
        env=judging_environment(world) | {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=20,
    )
    return done.stdout + done.stderr
