"""A hard link to a `.env` is the `.env`: every reader judges it as the file it is.

`ln .env notes.txt` (or an archive's link member extracted beside a `.env`) gives
the file a second name that says nothing; only the inode tells. Each reader that
asks before it reads a `.env` must ask before it reads the link, and a folder
search must leave it out, while files whose two names are both ordinary stay free.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hello_tui.tools.env_files import linked_env_files, reaches_env_file
from hello_tui.tools.file_index import read_attachment
from hello_tui.tools.files import ReadTool
from hello_tui.tools.grep import GrepTool, find_rg
from hello_tui.tools.shell.policy import classify
from tests.tools.helpers import make_ctx, policy_world, write

KEY = "sk-linked-key"


@pytest.fixture
def world(tmp_path: Path) -> Path:
    repo = policy_world(tmp_path)["repo"]
    write(repo / "secrets" / ".env", f"LLM_API_KEY={KEY}\n")
    write(repo / ".gitignore", ".env\n")
    os.link(repo / "secrets" / ".env", repo / "src" / "notes.txt")  # another folder, too
    write(repo / "src" / "plain.txt", "nothing to hide\n")
    os.link(repo / "src" / "plain.txt", repo / "plain-copy.txt")  # two ordinary names
    return repo


class _Approver:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def review_patch(self, plan):
        raise AssertionError("no patch here")

    async def approve_command(self, command: str, reason: str) -> str:
        self.asked.append(command)
        return "deny"


def test_the_link_holds_the_key_for_real(world: Path):
    shown = subprocess.run(
        ["cat", "src/notes.txt"], cwd=world, capture_output=True, text=True, check=True
    )
    assert KEY in shown.stdout  # what an unasked `cat` would print


def test_the_rule_finds_the_inode_and_nothing_else(world: Path):
    assert reaches_env_file(world / "src" / "notes.txt", world)
    assert not reaches_env_file(world / "src" / "notes.txt")  # no repo: a name says nothing
    assert not reaches_env_file(world / "plain-copy.txt", world)
    assert not reaches_env_file(world / "a.txt", world)
    st = os.stat(world / "secrets" / ".env")
    assert linked_env_files(world) == frozenset({(st.st_dev, st.st_ino)})
    os.unlink(world / "src" / "notes.txt")  # its only other name is gone
    assert linked_env_files(world) == frozenset()


@pytest.mark.parametrize(
    "command",
    [
        "cat src/notes.txt",
        "cd src && head -n 1 notes.txt",
        "grep -r LLM_API_KEY .",
        "grep -r LLM src",
        "grep -R LLM src",
        "rg LLM",
        "sed -n 1p src/notes.txt",
    ],
)
def test_the_terminal_asks_before_a_command_reads_the_link(world: Path, command: str):
    decision = classify(command, world, world)
    assert decision.action == "ask", (command, decision.reason)
    assert KEY not in decision.reason


@pytest.mark.parametrize(
    "command",
    [
        "cat plain-copy.txt",
        "cat src/plain.txt",
        "grep -rn hide src/plain.txt",
        "ls -R",
        "cat a.txt",
    ],
)
def test_files_with_two_ordinary_names_still_run_unasked(world: Path, command: str):
    assert classify(command, world, world).action == "run", command


def test_without_a_linked_env_file_a_folder_walk_stays_unasked(world: Path):
    assert classify("grep -r hide src", world, world).action == "ask"
    os.unlink(world / "src" / "notes.txt")
    assert classify("grep -r hide src", world, world).action == "run"
    assert classify("grep -R hide src", world, world).action == "run"


async def test_read_asks_before_it_opens_the_link(world: Path):
    ctx = make_ctx(world)
    ctx.approver = _Approver()
    denied = await ReadTool().run(ReadTool.Args.model_validate({"path": "src/notes.txt"}), ctx)
    assert denied.declined and KEY not in denied.text
    assert ctx.approver.asked == ["read src/notes.txt"]
    plain = await ReadTool().run(ReadTool.Args.model_validate({"path": "plain-copy.txt"}), ctx)
    assert plain.status == "success" and "nothing to hide" in plain.text
    assert ctx.approver.asked == ["read src/notes.txt"]


@pytest.mark.skipif(find_rg() is None, reason="rg binary not installed")
@pytest.mark.parametrize("backend", ["rg", "python"])
async def test_grep_asks_for_the_named_link_and_a_folder_search_leaves_it_out(
    world: Path, backend: str
):
    tool = GrepTool(force_python=(backend == "python"))
    ctx = make_ctx(world)
    ctx.approver = _Approver()
    named = await tool.run(
        tool.Args.model_validate({"pattern": "LLM", "path": "src/notes.txt"}), ctx
    )
    assert named.declined and KEY not in named.text
    for path in (".", "src"):
        found = await tool.run(tool.Args.model_validate({"pattern": "LLM_API", "path": path}), ctx)
        assert KEY not in found.text, (backend, path)
    free = await tool.run(tool.Args.model_validate({"pattern": "hide", "path": "src"}), ctx)
    assert free.status == "success" and "nothing to hide" in free.text
    assert ctx.approver.asked == ["grep src/notes.txt"]


def test_the_link_is_never_attached_to_a_message(world: Path):
    with pytest.raises(ValueError, match="may hold secrets"):
        read_attachment(world, "src/notes.txt")
    assert "nothing to hide" in read_attachment(world, "plain-copy.txt")[0]


def test_an_approved_command_cannot_link_a_file_from_outside_the_repo(tmp_path: Path):
    """Why the rule looks for the repo's own env files only: inside the sandbox a new name
    for a file outside the repo cannot be made, so a second name leading out of the repo
    can only be the user's own work; a second name for the repo's `.env` can, and is judged."""
    import asyncio

    from hello_tui.config import load_settings
    from hello_tui.tools.shell import sandbox
    from hello_tui.tools.shell.runner import RunConfig, run_command

    if not sandbox.support().available:
        pytest.skip("no sandbox on this machine")
    paths = policy_world(tmp_path)
    repo, canary = paths["repo"], paths["outside"] / "secret.txt"
    config = RunConfig.from_settings(load_settings(repo, environ={}))

    def run(command: str) -> int | None:
        outcome = run_command(command, cwd=repo, config=config, mode="approved", timeout=20)
        return asyncio.run(outcome).exit_code

    assert run(f"ln {canary} canary.txt") != 0
    assert not (repo / "canary.txt").exists() and os.stat(canary).st_nlink == 1
    assert run("ln .env notes.txt") == 0  # inside the repo it can: and that name asks
    assert classify("cat notes.txt", repo, repo).action == "ask"


def test_git_reading_a_tracked_file_that_became_a_second_name_of_env_asks(tmp_path: Path):
    repo = policy_world(tmp_path)["repo"]
    git = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t"]
    write(repo / ".gitignore", ".env\n")
    write(repo / "notes.txt", "plain notes\n")
    subprocess.run([*git, "add", "notes.txt", ".gitignore"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "notes"], cwd=repo, check=True)
    assert classify("git diff", repo, repo).action == "run"
    os.unlink(repo / "notes.txt")
    os.link(repo / ".env", repo / "notes.txt")
    shown = subprocess.run(["git", "diff"], cwd=repo, capture_output=True, text=True, check=True)
    assert "sk-repo-key" in shown.stdout  # git shows the work tree's notes.txt: the key
    for command in ("git diff", "git grep LLM_API_KEY", "git blame notes.txt", "cat notes.txt"):
        assert classify(command, repo, repo).action == "ask", command
    for command in ("git status", "git log --oneline", "git diff --stat"):
        assert classify(command, repo, repo).action == "run", command


# ------------------------------------------------------------- folders named like env files


@pytest.fixture
def env_folders(tmp_path: Path) -> Path:
    repo = policy_world(tmp_path)["repo"]
    write(repo / ".envs" / ".production" / ".django", f"DJANGO_SECRET={KEY}\n")  # cookiecutter
    write(repo / "deploy" / "prod.env.d" / "keys", f"TOKEN={KEY}\n")
    write(repo / "deploy" / "readme.md", "how to deploy: TOKEN goes in prod.env.d\n")
    return repo


async def test_the_file_tools_ask_for_what_an_env_folder_holds(env_folders: Path):
    ctx = make_ctx(env_folders)
    ctx.approver = _Approver()
    for rel in (".envs/.production/.django", "deploy/prod.env.d/keys"):
        denied = await ReadTool().run(ReadTool.Args.model_validate({"path": rel}), ctx)
        assert denied.declined and KEY not in denied.text, rel
    assert ctx.approver.asked == ["read .envs/.production/.django", "read deploy/prod.env.d/keys"]
    for command in ("cat .envs/.production/.django", "cat deploy/prod.env.d/keys"):
        assert classify(command, env_folders, env_folders).action == "ask", command
    assert classify("cat deploy/readme.md", env_folders, env_folders).action == "run"


@pytest.mark.skipif(find_rg() is None, reason="rg binary not installed")
@pytest.mark.parametrize("backend", ["rg", "python"])
async def test_a_folder_search_leaves_out_what_an_env_folder_holds(env_folders: Path, backend):
    tool = GrepTool(force_python=(backend == "python"))
    ctx = make_ctx(env_folders)
    ctx.approver = _Approver()
    found = await tool.run(tool.Args.model_validate({"pattern": "TOKEN", "path": "deploy"}), ctx)
    assert found.status == "success" and KEY not in found.text
    assert "how to deploy" in found.text  # the folder's other files are searched
