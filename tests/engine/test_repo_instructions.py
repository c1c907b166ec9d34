"""What a repository puts in the system prompt (AGENTS.md, a prompt override) is read as
the file tools would read it: never through a link out of the repo, never a FIFO or a
device, never an env file. A cloned repository chooses those names, and the system prompt
goes to the model: `AGENTS.md -> /proc/self/environ` would send it the app's environment."""

from __future__ import annotations

import os

import pytest

from hello_tui.config import ConfigError
from tests.engine.agent_kit import collect, open_engine
from tests.support.scripted_model import text


def outside_canary(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    canary = outside / "notes.md"
    canary.write_text("OUTSIDE-CANARY never for the model\n")
    return canary


async def system_prompt(repo, scripted_server, model_settings) -> str:
    server = scripted_server([text("ok")])
    engine = await open_engine(model_settings(repo, server))
    await collect(engine, "check the build")
    return server.chat_requests[0]["messages"][0]["content"]


@pytest.mark.parametrize(
    "target",
    ["/proc/self/environ", "OUTSIDE", ".env", ".git/config", "/dev/zero"],
)
async def test_agents_md_through_a_link_that_leaves_the_repo_is_left_out(
    tmp_path, scripted_server, model_settings, target
):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text("[remote]\n\turl = https://u:GIT-TOKEN@host/r\n")
    (repo / ".env").write_text("LLM_API_KEY=sk-from-dotenv-file\n")
    canary = outside_canary(tmp_path)
    os.symlink(canary if target == "OUTSIDE" else target, repo / "AGENTS.md")
    shown = await system_prompt(repo, scripted_server, model_settings)
    for secret in ("OUTSIDE-CANARY", "PATH=", "GIT-TOKEN", "sk-from-dotenv-file"):
        assert secret not in shown, (target, secret)
    assert "Project instructions" not in shown


async def test_a_fifo_named_agents_md_does_not_hold_the_turn(
    tmp_path, scripted_server, model_settings
):
    repo = tmp_path / "repo"
    repo.mkdir()
    os.mkfifo(repo / "AGENTS.md")
    assert "Project instructions" not in await system_prompt(repo, scripted_server, model_settings)


async def test_agents_md_linked_inside_the_repo_is_read(tmp_path, scripted_server, model_settings):
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "agents.md").write_text("Always run `make check` first.\n")
    os.symlink("docs/agents.md", repo / "AGENTS.md")
    assert "Always run `make check` first." in await system_prompt(
        repo, scripted_server, model_settings
    )


async def test_a_prompt_override_is_used_and_no_link_may_stand_for_it(
    tmp_path, scripted_server, model_settings
):
    repo = tmp_path / "repo"
    prompts = repo / ".helloagents" / "prompts"
    prompts.mkdir(parents=True)
    os.symlink(outside_canary(tmp_path), prompts / "system.md")
    # The state folder holds real files only: the session does not start at all.
    with pytest.raises(ConfigError, match="is a symbolic link"):
        await system_prompt(repo, scripted_server, model_settings)
    os.unlink(prompts / "system.md")
    (prompts / "system.md").write_text("You are the repository's own agent. {{project}}\n")
    assert "repository's own agent" in await system_prompt(repo, scripted_server, model_settings)


def test_a_state_folder_link_named_with_escapes_is_refused_in_plain_text(tmp_path):
    import subprocess
    import sys

    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink("x\x1b]52;c;SGVsbG8=\x07\x1b[2J", repo / ".helloagents")
    for command in (["doctor"], ["mcp", "list", "--no-start"], ["apply", "--dry-run", "-"]):
        done = subprocess.run(
            [sys.executable, "-m", "hello_tui", *command, "--repo", str(repo)],
            input=b"",
            capture_output=True,
            timeout=60,
            check=False,
        )
        shown = done.stdout + done.stderr
        assert b"symbolic link" in shown, (command, shown)
        assert b"\x1b" not in shown and b"\x07" not in shown, (command, shown)
