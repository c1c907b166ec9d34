"""The `terminal` tool: the policy's verdict, the user's approval, the run, the report.

Read-only commands run at once, in the read-only sandbox; anything else that
stays inside the repo runs only after the user approves it (once, for the
session, or once with network access), in the approved sandbox; refused
commands never run. The model cannot approve itself: the arguments admit no
extra field such as `allow_dangerous`. The model reads at most 64 KB of
output (head and tail); `data` keeps the full output for the UI.

A refusal, a user's "no" and a command that ran and failed are answers, not
failures of the tool: they do not count towards the circuit breaker.

Judging a command walks folders and reads git's config, and opening its
scope probes the kernel and makes folders: both run in one trip to a worker
thread, as the other tools' file work does, so the event loop stays free.
A command the policy lets run starts in that same trip, as soon as it is
judged; the loop then only follows it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from hello_tui.core.events import CommandApprovalNeeded, CommandApprovalResolved, ToolOutputDelta
from hello_tui.core.tools import Tool, ToolArgs, ToolContext, ToolResult
from hello_tui.tools.shell import sandbox
from hello_tui.tools.shell.environment import read_only_git_environment
from hello_tui.tools.shell.git_guard import with_drivers_off
from hello_tui.tools.shell.policy import PolicyContext, PolicyVerdict, classify
from hello_tui.tools.shell.runner import (
    Begun,
    CommandScope,
    ProcessOutcome,
    RunConfig,
    begin_command,
    follow_command,
    run_command,
    runnable_without_shell,
)
from hello_tui.tools.shell.spawner import wake_recent

MODEL_OUTPUT_LIMIT = 64 * 1024
SIGPIPE_STATUS = 141  # a stage stopped because the next one quit reading (`| head`)


class TerminalArgs(ToolArgs):
    command: str = Field(min_length=1)
    timeout: float | None = Field(None, gt=0, le=3600, description="Seconds (default 60).")


class TerminalTool(Tool):
    name = "terminal"
    description = (
        "Run a shell command in the repository (sandboxed; anything that is not read-only "
        "waits for the user's approval). `cd` persists."
    )
    Args = TerminalArgs
    read_only = False

    # The policy's entry point; a seam so tests can watch the loop while a command is judged.
    classify: Callable[..., PolicyVerdict] = staticmethod(classify)

    async def run(self, args: TerminalArgs, ctx: ToolContext) -> ToolResult:
        if ctx.settings.sandbox != "off":
            wake_recent()  # its child forked ahead takes the command at once if it runs
        command = args.command.strip()
        config = RunConfig.from_settings(ctx.settings)
        repo = config.repo  # resolved once per settings
        cwd = session_cwd(ctx, repo)  # the `cd` target is checked anew for every command
        setting = ctx.settings.sandbox
        state = ctx.settings.state.root

        def judge() -> _Judged:
            judged = _judge(setting, config, lambda c: self.classify(command, repo, cwd, c), state)
            verdict = judged.verdict
            if verdict.action == "run" and not verdict.cd_only:
                # It runs as it is: start it here, before the loop hears of the verdict.
                try:
                    target = _read_only_target(command, verdict, cwd, judged)
                    judged.begun = begin_command(target, cwd=cwd, config=config, scope=judged.scope)
                except BaseException:
                    judged.scope.close()
                    raise
            return judged

        try:
            # One trip to a worker thread for all three: each trip costs the loop a wake-up.
            judged = await _owned_off_loop(judge)
        except sandbox.SandboxUnavailable as exc:
            return _answer(ToolResult.error(str(exc), data={"command": command}))
        scope, verdict = judged.scope, judged.verdict
        with scope:
            if verdict.action == "refuse":
                return _answer(
                    ToolResult.error(
                        f"Refused: {verdict.reason}. This command cannot run here, even with the "
                        "user's approval; find another way that stays inside the repository.",
                        data=_verdict_data(command, cwd, repo, verdict),
                    )
                )
            approval = "policy"
            if verdict.action == "ask":
                if command in ctx.allowed_commands:
                    approval = "session"
                else:
                    ctx.emit(CommandApprovalNeeded(ctx.call_id, command, verdict.reason))
                    answer = await ctx.approver.approve_command(command, verdict.reason)
                    ctx.emit(CommandApprovalResolved(ctx.call_id, command, answer))
                    if answer not in ("once", "session", "network"):
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

            mode: sandbox.Mode = "read-only" if approval == "policy" else "approved"
            if judged.begun is not None:
                outcome = await follow_command(judged.begun, timeout=timeout, on_output=sink)
            else:
                outcome = await run_command(
                    _target(command, verdict, cwd, scope.env),
                    cwd=cwd,
                    config=config,
                    mode=mode,
                    network=approval == "network",
                    timeout=timeout,
                    on_output=sink,
                    scope=scope,
                )
        notes = []
        if verdict.display_as:
            notes.append(f"(no terminal to page on: shown as `{verdict.display_as}`)")
        if verdict.cd_target is not None and verdict.cd_target.is_dir():
            ctx.cwd = verdict.cd_target
            notes.append(f"(working directory is now {_rel(verdict.cd_target, repo)})")
        if outcome.exit_code not in (0, None) and outcome.sandbox != "none":
            hint = _sandbox_hint(outcome, mode)
            if hint:
                notes.append(hint)
        data = _verdict_data(command, cwd, repo, verdict) | {
            "approval": approval,
            "mode": mode,
            "network": approval == "network",
            "sandbox": outcome.sandbox,
        }
        return report(command, outcome, timeout, data, "\n".join(notes))


@dataclass
class _Judged:
    """A command's scope and the policy's verdict on it, with the read-only environment,
    and the command itself when the verdict let it start at once."""

    scope: CommandScope
    read_only_env: dict[str, str]
    verdict: PolicyVerdict
    begun: Begun | None = None


def _target(
    command: str, verdict: PolicyVerdict, cwd: Path, env: dict[str, str]
) -> str | list[str]:
    """What runs: the verdict's argv when it needs no shell, else the command for bash."""
    argv = verdict.argv
    if argv and runnable_without_shell(argv, cwd, env.get("PATH")):
        return argv
    return command


def _read_only_target(
    command: str, verdict: PolicyVerdict, cwd: Path, judged: _Judged
) -> str | list[str]:
    """The target of a read-only run, in the environment with git's programs off."""
    judged.scope.env = judged.read_only_env
    target = _target(command, verdict, cwd, judged.scope.env)
    if isinstance(target, list) and target[:1] == ["git"]:
        return with_drivers_off(target)
    return target


def _judge(
    setting: sandbox.SandboxSetting,
    config: RunConfig,
    classify_in: Callable[[PolicyContext], PolicyVerdict],
    state: Path,
) -> _Judged:
    """Open the command's scope and judge it (blocking); raises SandboxUnavailable."""
    sandbox.check_available(setting)
    confined = setting != "off" and sandbox.support().available
    scope = CommandScope(config)
    try:
        # What a read-only run gets; approved runs keep git's transports and helpers.
        read_only_env = read_only_git_environment(scope.env, config.repo)
        context = PolicyContext(
            environment=read_only_env if confined else None,
            private_dir=scope.private_dir,
            state_dir=state.resolve(),
        )
        return _Judged(scope, read_only_env, classify_in(context))
    except BaseException:
        scope.close()
        raise


async def _owned_off_loop(make: Callable[[], _Judged]) -> _Judged:
    """`make()` in a worker thread; a scope made after the caller was cancelled is closed."""
    future = asyncio.ensure_future(asyncio.to_thread(make))
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        future.add_done_callback(_close_orphan)
        raise


def _close_orphan(future: asyncio.Future[_Judged]) -> None:
    if not future.cancelled() and future.exception() is None:
        judged = future.result()
        if judged.begun is not None:
            judged.begun.abandon()
        judged.scope.close()


_DENIALS = ("Permission denied", "Read-only file system", "Operation not permitted")


def _sandbox_hint(outcome: ProcessOutcome, mode: sandbox.Mode) -> str:
    """When the sandbox is the likely reason a command failed, say what it allows."""
    stderr = outcome.stderr.text()
    if not any(word in stderr for word in _DENIALS) and "Network is unreachable" not in stderr:
        return ""
    if mode == "read-only":
        return (
            "(sandbox: read-only commands may read the repo and system folders, write only to "
            "$TMPDIR, and have no network; anything else needs the user's approval)"
        )
    return (
        "(sandbox: approved commands may write inside the repo except .git/ and the state "
        "folder, and in $TMPDIR; network only if the user allowed it)"
    )


def _answer(result: ToolResult) -> ToolResult:
    """A verdict on the command (refused, ran and failed): an answer, not a broken tool."""
    return result.model_copy(update={"declined": True})


def session_cwd(ctx: ToolContext, repo: Path | None = None) -> Path:
    """The terminal's directory: the session's `cd` target while it still exists in the repo.

    `repo` is the repo's resolved path when the caller has it; the `cd` target
    is resolved and checked here every time.
    """
    repo = repo or ctx.repo.resolve()
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


def _head_tail(text: str, budget: int, raw: bytes | None = None) -> tuple[str, int]:
    """At most `budget` bytes of `text`: its head and tail, and how many bytes were left out.

    `raw` is `text` encoded, when the caller has it already.
    """
    if raw is None:
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
    # Each stream is encoded once, and the text joined once: output of a hundred KB or more
    # is copied a few times less, each copy into memory the allocator must fault in afresh.
    out_raw, err_raw = stdout.encode(), stderr.encode()
    out_share, err_share = _shares(len(out_raw), len(err_raw), budget)
    out_text, out_cut = _head_tail(stdout, out_share, out_raw)
    err_text, err_cut = _head_tail(stderr, err_share, err_raw)
    del out_raw, err_raw
    sections = [header]
    if stdout:
        sections += ("--- stdout ---", out_text.rstrip("\n"))
    if stderr:
        sections += ("--- stderr ---", err_text.rstrip("\n"))
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
        # The command ran: its exit status answers the model; the tool did its job.
        return _answer(ToolResult.error(text, data=data))
    if cut or outcome.stdout.dropped or outcome.stderr.dropped:
        return ToolResult.partial(text, data=data)
    return ToolResult.ok(text, data=data)
