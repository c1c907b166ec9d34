"""The terminal tool running real commands in a temporary repo, checked on disk afterwards."""

from __future__ import annotations

import asyncio
import os
import secrets
from pathlib import Path

import pytest
from pydantic import ValidationError

from hello_tui.config import load_settings
from hello_tui.core.approval import PolicyApprover
from hello_tui.core.events import CommandApprovalNeeded, CommandApprovalResolved, ToolOutputDelta
from hello_tui.core.tools import ToolContext
from hello_tui.tools.registry import ToolRegistry
from hello_tui.tools.shell.sandbox import support as sandbox_found
from hello_tui.tools.terminal import MODEL_OUTPUT_LIMIT, TerminalArgs, TerminalTool


class RecordingApprover:
    """Answers every command request with `answer` and remembers what it was asked."""

    def __init__(self, answer: str = "once") -> None:
        self.answer = answer
        self.asked: list[tuple[str, str]] = []

    async def review_patch(self, plan):  # the terminal never proposes patches
        raise AssertionError("review_patch must not be called by the terminal")

    async def approve_command(self, command: str, reason: str) -> str:
        self.asked.append((command, reason))
        return self.answer


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "a.txt").write_text("hello\nworld\n")
    (root / "my file.txt").write_text("with spaces\n")
    (root / "中文.txt").write_text("你好\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    os.symlink(outside / "keep.txt", root / "leak.txt")
    return root.resolve()


def make_ctx(repo: Path, approver=None, events: list | None = None) -> ToolContext:
    settings = load_settings(repo, environ={})
    sink = events.append if events is not None else (lambda e: None)
    return ToolContext(
        settings=settings,
        approver=approver or RecordingApprover("deny"),
        emit=sink,
        call_id="call-1",
    )


async def run(ctx: ToolContext, command: str, timeout: float | None = None):
    return await TerminalTool().run(TerminalArgs(command=command, timeout=timeout), ctx)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


# ------------------------------------------------------------------- run


async def test_read_only_commands_run_without_asking(repo):
    approver = RecordingApprover("deny")
    ctx = make_ctx(repo, approver)
    before = snapshot(repo)
    result = await run(ctx, "cat a.txt | grep world")
    assert result.status == "success", result.text
    assert "world" in result.data["stdout"] and "hello" not in result.data["stdout"]
    assert approver.asked == []
    assert snapshot(repo) == before


async def test_paths_with_spaces_and_chinese_characters(repo):
    ctx = make_ctx(repo)
    assert "with spaces" in (await run(ctx, 'cat "my file.txt"')).data["stdout"]
    assert "你好" in (await run(ctx, "cat 中文.txt")).text


async def test_output_streams_live_as_events(repo):
    events: list = []
    ctx = make_ctx(repo, events=events)
    await run(ctx, "ls; ls missing-file")
    deltas = [e for e in events if isinstance(e, ToolOutputDelta)]
    assert all(e.call_id == "call-1" for e in deltas)
    assert "a.txt" in "".join(e.text for e in deltas if e.stream == "stdout")
    assert "missing-file" in "".join(e.text for e in deltas if e.stream == "stderr")


async def test_stdout_and_stderr_are_kept_apart(repo):
    ctx = make_ctx(repo)
    result = await run(ctx, "ls a.txt missing-file")
    assert result.status == "error"
    assert "a.txt" in result.data["stdout"] and "missing-file" not in result.data["stdout"]
    assert "missing-file" in result.data["stderr"]
    assert result.text.index("--- stdout ---") < result.text.index("--- stderr ---")
    assert "exit code: 2" in result.text


async def test_a_failing_stage_is_not_swallowed_by_the_pipe(repo):
    ctx = make_ctx(repo)
    result = await run(ctx, "cat missing.txt | wc -l")
    assert result.status == "error"
    assert "cat=1 | wc=0" in result.text
    assert "missing.txt" in result.data["stderr"]
    assert result.data["pipelines"] == [[{"name": "cat", "code": 1}, {"name": "wc", "code": 0}]]


async def test_every_pipeline_of_a_list_reports_its_stages(repo):
    ctx = make_ctx(repo)
    result = await run(ctx, "cat a.txt | grep nothing-here | wc -l; ls | wc -l")
    assert "cat=0 | grep=1 | wc=0" in result.text
    assert "ls=0 | wc=0" in result.text
    assert result.status == "error"


async def test_a_stage_stopped_by_head_is_not_a_failure(repo):
    (repo / "big.txt").write_text("line\n" * 200_000)
    ctx = make_ctx(repo)
    result = await run(ctx, "cat big.txt | head -n 2")
    assert result.status == "success", result.text
    assert result.data["stdout"] == "line\nline\n"


async def test_model_sees_at_most_64_kb_and_the_ui_keeps_everything(repo):
    lines = "".join(f"line {i:06d} " + "x" * 40 + "\n" for i in range(5000))
    (repo / "big.txt").write_text(lines)
    ctx = make_ctx(repo)
    result = await run(ctx, "cat big.txt")
    assert result.status == "partial"
    assert len(result.text.encode()) <= MODEL_OUTPUT_LIMIT
    assert "bytes omitted" in result.text
    assert "line 000000" in result.text and "line 004999" in result.text
    assert result.data["stdout"] == lines
    assert result.data["omitted_bytes"] > 0


async def test_commands_get_an_allow_listed_environment(repo, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ant-test-secret-value")
    monkeypatch.setenv("GITHUB_TOKEN", "gh-test-secret-value")
    monkeypatch.setenv("SOME_OTHER_SETTING", "not-passed-on")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("LC_TIME", "C")
    ctx = make_ctx(repo, RecordingApprover("once"))
    result = await run(ctx, "printenv")
    env = dict(line.split("=", 1) for line in result.data["stdout"].splitlines())
    assert "secret-value" not in result.data["stdout"]
    assert "SOME_OTHER_SETTING" not in env
    assert env["LANG"] == "C.UTF-8" and env["LC_TIME"] == "C"
    assert env["PATH"] == os.environ["PATH"]
    # A private HOME and TMPDIR of its own, emptied once the command is over.
    assert env["HOME"] != os.environ.get("HOME") and env["TMPDIR"].startswith(
        str(Path(env["HOME"]).parent)
    )
    assert list(Path(env["HOME"]).iterdir()) == []
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_CONFIG_GLOBAL"] == "/dev/null"


async def test_command_without_a_shell_cannot_be_tricked_by_quotes(repo):
    ctx = make_ctx(repo)
    result = await run(ctx, "echo '$(touch pwned)' ';' '&& touch pwned2'")
    assert result.data["stdout"] == "$(touch pwned) ; && touch pwned2\n"
    assert not (repo / "pwned").exists() and not (repo / "pwned2").exists()


# ------------------------------------------------------------------- ask


async def test_ask_once_runs_after_the_user_approves(repo):
    events: list = []
    approver = RecordingApprover("once")
    ctx = make_ctx(repo, approver, events)
    result = await run(ctx, "touch made.txt")
    assert result.status == "success", result.text
    assert (repo / "made.txt").exists()
    assert approver.asked and approver.asked[0][0] == "touch made.txt"
    needed = [e for e in events if isinstance(e, CommandApprovalNeeded)]
    resolved = [e for e in events if isinstance(e, CommandApprovalResolved)]
    assert needed[0].call_id == "call-1" and "touch" in needed[0].reason
    assert resolved[0].verdict == "once"
    assert "touch made.txt" not in ctx.allowed_commands


async def test_denied_command_changes_nothing(repo):
    approver = RecordingApprover("deny")
    ctx = make_ctx(repo, approver)
    before = snapshot(repo)
    result = await run(ctx, "rm a.txt && touch gone.txt")
    assert result.status == "error"
    assert "declined" in result.text and "Nothing was run" in result.text
    assert snapshot(repo) == before
    assert len(approver.asked) == 1


async def test_session_approval_is_remembered_for_the_exact_command(repo):
    approver = RecordingApprover("session")
    ctx = make_ctx(repo, approver)
    await run(ctx, "touch one.txt")
    (repo / "one.txt").unlink()
    approver.answer = "deny"
    again = await run(ctx, "touch one.txt")
    assert again.status == "success"
    assert (repo / "one.txt").exists()
    assert len(approver.asked) == 1
    other = await run(ctx, "touch two.txt")
    assert other.status == "error" and not (repo / "two.txt").exists()
    assert len(approver.asked) == 2


async def test_headless_without_yes_declines_and_with_yes_runs(repo):
    ctx = make_ctx(repo, PolicyApprover(yes=False))
    assert (await run(ctx, "touch x.txt")).status == "error"
    assert not (repo / "x.txt").exists()
    ctx = make_ctx(repo, PolicyApprover(yes=True))
    assert (await run(ctx, "touch x.txt")).status == "success"
    assert (repo / "x.txt").exists()


async def test_redirect_after_a_list_applies_to_the_last_command_only(repo):
    ctx = make_ctx(repo, RecordingApprover("once"))
    result = await run(ctx, "echo first && echo second > out.txt")
    assert result.data["stdout"] == "first\n"
    assert (repo / "out.txt").read_text() == "second\n"


async def test_a_script_of_the_repo_runs_from_the_current_directory(repo):
    script = repo / "src" / "hello.sh"
    script.write_text("#!/bin/sh\necho from-script\n")
    script.chmod(0o755)
    ctx = make_ctx(repo, RecordingApprover("once"))
    await run(ctx, "cd src")
    result = await run(ctx, "./hello.sh")
    assert result.status == "success", result.text
    assert result.data["stdout"] == "from-script\n"


async def test_unknown_program_reports_exit_127(repo):
    ctx = make_ctx(repo, RecordingApprover("once"))
    result = await run(ctx, "definitely-not-a-program-4242")
    assert result.status == "error"
    assert "exit code: 127" in result.text


# ------------------------------------------------------------------- refuse


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf ../outside",
        "cat ../outside/keep.txt",
        "echo x > .git/config",
        "sudo touch a.txt",
        "cat leak.txt",
        "echo gone > leak.txt",
        "cat ~/.ssh/id_rsa",
        "vim a.txt",
    ],
)
async def test_refused_commands_never_run_even_if_the_user_would_approve(repo, command):
    approver = RecordingApprover("once")
    ctx = make_ctx(repo, approver)
    before_repo, before_outside = snapshot(repo), snapshot(repo.parent / "outside")
    result = await run(ctx, command)
    assert result.status == "error"
    assert result.text.startswith("Refused:")
    assert approver.asked == []
    assert snapshot(repo) == before_repo
    assert snapshot(repo.parent / "outside") == before_outside
    assert (repo / ".git" / "config").read_text() == "[core]\n"


async def test_the_model_cannot_approve_itself(repo):
    with pytest.raises(ValidationError):
        TerminalArgs.model_validate({"command": "rm a.txt", "allow_dangerous": True})
    registry = ToolRegistry([TerminalTool()])
    ctx = make_ctx(repo, RecordingApprover("deny"))
    result = await registry.run("terminal", {"command": "rm a.txt", "allow_dangerous": True}, ctx)
    assert result.status == "error" and "allow_dangerous" in result.text
    assert (repo / "a.txt").exists()


# ------------------------------------------------------------------- cd


async def test_cd_persists_for_the_session_and_cannot_leave_the_repo(repo):
    ctx = make_ctx(repo)
    result = await run(ctx, "cd src")
    assert result.status == "success" and ctx.cwd == repo / "src"
    assert (await run(ctx, "pwd")).data["stdout"].strip() == str(repo / "src")
    assert (await run(ctx, "cat ../a.txt")).status == "success"
    refused = await run(ctx, "cd ../..")
    assert refused.status == "error" and ctx.cwd == repo / "src"
    back = await run(ctx, "cd .. && ls")
    assert back.status == "success" and ctx.cwd == repo
    assert "src" in back.data["stdout"]


async def test_cd_to_a_missing_directory_is_an_error(repo):
    ctx = make_ctx(repo)
    result = await run(ctx, "cd nowhere")
    assert result.status == "error" and ctx.cwd is None


# ------------------------------------------------------------------- processes


def _marked(marker: str) -> list[int]:
    """Live processes whose command line holds `marker` (pids in a command's PID namespace
    mean nothing out here, so the command's children are found by what they run)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path("/proc", entry, "cmdline").read_bytes()
            state = Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state not in ("Z", "X"):
            found.append(int(entry))
    return found


async def _wait_until_gone(marker: str) -> bool:
    for _ in range(200):
        if not _marked(marker):
            return True
        await asyncio.sleep(0.05)
    return False


def spawn_script(repo: Path) -> str:
    """A script that leaves a `sleep` running in the background; returns the sleep's marker."""
    marker = f"300.{secrets.randbelow(10**9):09d}"  # seconds, and no one else's
    (repo / "spawn.sh").write_text(f"sleep {marker} &\necho started > child.started\nwait\n")
    return marker


async def test_timeout_kills_the_whole_process_group(repo):
    marker = spawn_script(repo)
    ctx = make_ctx(repo, RecordingApprover("once"))
    result = await run(ctx, "bash spawn.sh", timeout=1)
    assert result.status == "error"
    assert "timed out" in result.text and result.data["timed_out"]
    assert (repo / "child.started").exists()
    assert await _wait_until_gone(marker)


async def test_cancellation_kills_the_whole_process_group(repo):
    marker = spawn_script(repo)
    ctx = make_ctx(repo, RecordingApprover("once"))
    task = asyncio.create_task(run(ctx, "bash spawn.sh", timeout=600))
    for _ in range(400):
        if (repo / "child.started").exists() and _marked(marker):
            break
        await asyncio.sleep(0.05)
    assert _marked(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _wait_until_gone(marker)


async def test_default_timeout_comes_from_settings(repo):
    ctx = make_ctx(repo, RecordingApprover("once"))
    ctx.settings = ctx.settings.with_changes(terminal_timeout=1)
    result = await run(ctx, "sleep 30")
    assert result.data["timed_out"] and "timed out after 1 s" in result.text


@pytest.mark.parametrize("command", ["sleep 300 &", "tail -f a.txt &"])
async def test_a_background_job_does_not_hold_the_tool_until_its_timeout(repo, command):
    ctx = make_ctx(repo, RecordingApprover("once"))
    # The guard only catches a hang; the tool itself must come back long before it.
    result = await asyncio.wait_for(run(ctx, command, timeout=600), 120)
    assert not result.data["timed_out"], result.text
    assert result.data["exit_code"] == 0


async def test_policy_refusals_and_failed_commands_do_not_trip_the_circuit_breaker(repo):
    registry = ToolRegistry([TerminalTool()])
    ctx = make_ctx(repo, RecordingApprover("deny"))
    for command in ("cat ../outside/keep.txt", "sudo ls", "cat leak.txt", "rm a.txt"):
        refused = await registry.run("terminal", {"command": command}, ctx)
        assert refused.status == "error" and "circuit breaker" not in refused.text
    for _ in range(4):
        failed = await registry.run("terminal", {"command": "cat missing.txt"}, ctx)
        assert "exit code: 1" in failed.text
    works = await registry.run("terminal", {"command": "cat a.txt"}, ctx)
    assert works.status == "success" and "hello" in works.data["stdout"]


async def test_read_only_commands_run_in_the_read_only_sandbox(repo):
    ctx = make_ctx(repo)
    result = await run(ctx, "cat a.txt")
    assert result.data["mode"] == "read-only" and result.data["network"] is False
    if sandbox_found().available:
        assert result.data["sandbox"].startswith("landlock v")
    approved = await run(make_ctx(repo, RecordingApprover("network")), "touch made.txt")
    assert approved.data["mode"] == "approved" and approved.data["network"] is True
    assert (repo / "made.txt").exists()


async def test_require_refuses_to_run_without_a_sandbox(repo, monkeypatch):
    from hello_tui.tools.shell import sandbox

    monkeypatch.setattr(sandbox, "support", lambda: sandbox.Support(0, False, False))
    ctx = make_ctx(repo)
    ctx.settings = ctx.settings.with_changes(sandbox="require")
    result = await run(ctx, "cat a.txt")
    assert result.status == "error" and "CODE_AGENT_SANDBOX=require" in result.text
    assert result.declined  # an answer, not a broken tool


async def test_a_command_cancelled_while_it_starts_is_stopped_once_it_has(repo):
    """Cancel at once: the process may already be starting; it must not be left behind."""
    marker = spawn_script(repo)
    ctx = make_ctx(repo, RecordingApprover("once"))
    for _ in range(5):
        task = asyncio.create_task(run(ctx, "bash spawn.sh", timeout=600))
        await asyncio.sleep(0)  # let it reach the start of the process
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    await asyncio.sleep(0.5)
    assert await _wait_until_gone(marker)


async def test_headless_approvals_run_offline_unless_network_was_allowed():
    assert await PolicyApprover(yes=True).approve_command("pip install x", "why") == "once"
    online = PolicyApprover(yes=True, network=True)
    assert await online.approve_command("pip install x", "why") == "network"
    assert await PolicyApprover(yes=False, network=True).approve_command("x", "why") == "deny"
