"""The `terminal` tool: the policy's verdict, the user's approval, the run, the report.

Read-only commands run at once; anything else that stays inside the repo runs
only after the user approves it (once or for the session); refused commands
never run. The model cannot approve itself: the arguments admit no extra
field such as `allow_dangerous`. The model reads at most 64 KB of output
(head and tail); `data` keeps the full output for the UI.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from hello_tui.core.events import CommandApprovalNeeded, CommandApprovalResolved, ToolOutputDelta
from hello_tui.core.tools import Tool, ToolArgs, ToolContext, ToolResult
from hello_tui.tools.shell.policy import PolicyVerdict, classify
from hello_tui.tools.shell.runner import ProcessOutcome, command_env, execute

MODEL_OUTPUT_LIMIT = 64 * 1024
SIGPIPE_STATUS = 141  # a stage stopped because the next one quit reading (`| head`)


class TerminalArgs(ToolArgs):
    command: str = Field(
        min_length=1,
        description="One shell command line, run from the current directory inside the repo.",
    )
    timeout: float | None = Field(
        None, gt=0, le=3600, description="Seconds before the command is stopped (default 60)."
    )


class TerminalTool(Tool):
    name = "terminal"
    description = (
        "Run a shell command in the repository. Read-only commands (ls, cat, grep, rg, find, "
        "git status/diff/log/show, ...) run at once; anything else (tests, builds, scripts, "
        "git commits, deletions) waits for the user's approval; sudo, paths outside the repo, "
        "writes into .git/ and interactive programs are refused. `cd DIR` persists. stdout, "
        "stderr and the exit status of every pipeline stage are reported separately."
    )
    Args = TerminalArgs
    read_only = False

    async def run(self, args: TerminalArgs, ctx: ToolContext) -> ToolResult:
        command = args.command.strip()
        repo = ctx.repo.resolve()
        cwd = session_cwd(ctx)
        verdict = classify(command, repo, cwd)
        if verdict.action == "refuse":
            return ToolResult.error(
                f"Refused: {verdict.reason}. This command cannot run here, even with the "
                "user's approval; find another way that stays inside the repository.",
                data=_verdict_data(command, cwd, repo, verdict),
            )
        approval = "policy"
        if verdict.action == "ask":
            if command in ctx.allowed_commands:
                approval = "session"
            else:
                ctx.emit(CommandApprovalNeeded(ctx.call_id, command, verdict.reason))
                answer = await ctx.approver.approve_command(command, verdict.reason)
                ctx.emit(CommandApprovalResolved(ctx.call_id, command, answer))
                if answer not in ("once", "session"):
                    return ToolResult.refused_by_user(
                        f"The user declined to run `{command}` (it needs approval because "
                        f"{verdict.reason}). Nothing was run. Do not retry it unchanged; "
                        "ask the user or take another approach.",
                        data=_verdict_data(command, cwd, repo, verdict) | {"approval": "deny"},
                    )
                if answer == "session":
                    ctx.allowed_commands.add(command)
                approval = answer
        if verdict.cd_only:
            return _change_directory(verdict, ctx, repo)
        timeout = args.timeout or ctx.settings.terminal_timeout

        def sink(text: str, stream: str) -> None:
            ctx.emit(
                ToolOutputDelta(ctx.call_id, text, "stderr" if stream == "stderr" else "stdout")
            )

        outcome = await execute(
            command, verdict.argv, cwd, command_env(ctx.settings), timeout, sink
        )
        moved = ""
        if verdict.cd_target is not None and verdict.cd_target.is_dir():
            ctx.cwd = verdict.cd_target
            moved = f"(working directory is now {_rel(verdict.cd_target, repo)})"
        data = _verdict_data(command, cwd, repo, verdict) | {"approval": approval}
        return report(command, outcome, timeout, data, moved)


def session_cwd(ctx: ToolContext) -> Path:
    """The terminal's directory: the session's `cd` target while it still exists in the repo."""
    repo = ctx.repo.resolve()
    if ctx.cwd is not None:
        cwd = ctx.cwd.resolve()
        if cwd.is_dir() and cwd.is_relative_to(repo):
            return cwd
    return repo


def _rel(path: Path, repo: Path) -> str:
    rel = path.relative_to(repo).as_posix()
    return "." if rel in ("", ".") else rel


def _verdict_data(command: str, cwd: Path, repo: Path, verdict: PolicyVerdict) -> dict:
    return {
        "command": command,
        "cwd": _rel(cwd, repo),
        "verdict": verdict.action,
        "reason": verdict.reason,
        "parts": [{"text": p.text, "action": p.action, "reason": p.reason} for p in verdict.parts],
    }


def _change_directory(verdict: PolicyVerdict, ctx: ToolContext, repo: Path) -> ToolResult:
    target = verdict.cd_target
    if target is None or not target.is_dir():
        return ToolResult.error("cd: no such directory inside the repository.")
    ctx.cwd = target
    rel = _rel(target, repo)
    return ToolResult.ok(f"Working directory is now {rel}.", data={"cwd": rel})


def _head_tail(text: str, budget: int) -> tuple[str, int]:
    """At most `budget` bytes of `text`: its head and tail, and how many bytes were left out."""
    raw = text.encode("utf-8")
    if len(raw) <= budget:
        return text, 0
    half = budget // 2
    omitted = len(raw) - 2 * half
    head = raw[:half].decode("utf-8", errors="ignore")
    tail = raw[-half:].decode("utf-8", errors="ignore")
    return f"{head}\n[… {omitted} bytes omitted …]\n{tail}", omitted


def _shares(a: int, b: int, budget: int) -> tuple[int, int]:
    if a + b <= budget:
        return a, b
    half = budget // 2
    if a <= half:
        return a, budget - a
    if b <= half:
        return budget - b, b
    return half, budget - half


def _stage_failed(code: int, is_last: bool) -> bool:
    return code != 0 and not (code == SIGPIPE_STATUS and not is_last)


def report(
    command: str, outcome: ProcessOutcome, timeout: float, data: dict, note: str = ""
) -> ToolResult:
    """The envelope: exit statuses first, then stdout and stderr, each clearly marked."""
    if outcome.start_error:
        return ToolResult.error(f"Could not start the command: {outcome.start_error}", data=data)
    stdout, stderr = outcome.stdout.text(), outcome.stderr.text()
    lines = [f"$ {command}"]
    failed = outcome.timed_out or outcome.exit_code != 0
    if outcome.timed_out:
        lines.append(
            f"timed out after {timeout:g} s: the command and everything it started were stopped"
        )
    else:
        lines.append(f"exit code: {outcome.exit_code}")
    for stages in outcome.pipelines:
        if len(stages) < 2:
            continue
        shown = []
        for index, stage in enumerate(stages):
            is_last = index == len(stages) - 1
            if _stage_failed(stage.code, is_last):
                failed = True
            label = f"{stage.name}={stage.code}"
            if stage.code == SIGPIPE_STATUS and not is_last:
                label += " (stopped early: the next stage quit reading)"
            shown.append(label)
        lines.append("pipeline exit codes: " + " | ".join(shown))
    if note:
        lines.append(note)
    header = "\n".join(lines)
    budget = max(MODEL_OUTPUT_LIMIT - len(header.encode()) - 200, 1024)
    out_share, err_share = _shares(len(stdout.encode()), len(stderr.encode()), budget)
    out_text, out_cut = _head_tail(stdout, out_share)
    err_text, err_cut = _head_tail(stderr, err_share)
    sections = [header]
    if stdout:
        sections.append("--- stdout ---\n" + out_text.rstrip("\n"))
    if stderr:
        sections.append("--- stderr ---\n" + err_text.rstrip("\n"))
    if not stdout and not stderr:
        sections.append("(no output)")
    text = "\n".join(sections)
    cut = out_cut + err_cut
    data = data | {
        "stdout": stdout,
        "stderr": stderr,
        "exit_code": outcome.exit_code,
        "timed_out": outcome.timed_out,
        "pipelines": [[{"name": s.name, "code": s.code} for s in p] for p in outcome.pipelines],
        "omitted_bytes": cut,
        "dropped_bytes": outcome.stdout.dropped + outcome.stderr.dropped,
    }
    if failed:
        return ToolResult.error(text, data=data)
    if cut or outcome.stdout.dropped or outcome.stderr.dropped:
        return ToolResult.partial(text, data=data)
    return ToolResult.ok(text, data=data)
