"""`hello-tui exec`: one turn with no UI, for scripts and CI.

Prints the streamed answer to stdout (or one JSON object per event with
--json); progress, notices and errors go to stderr. Never reads stdin:
everything that needs approval is declined unless --yes is given. `--mode`
applies as in the app: auto-edit applies patches within the limits without
--yes, read-only declines every write and approval-needing command even with it.

Exit codes: 0 the turn finished; 1 it failed (e.g. the model was unreachable
after retries); 2 usage, configuration or preflight errors; 130 interrupted
(the session is saved and can be continued).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any, TextIO

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class _TextPrinter:
    def __init__(self, out: TextIO, err: TextIO, debug: bool) -> None:
        self.out, self.err, self.debug = out, err, debug
        self.mid_line = False

    def _end_line(self) -> None:
        if self.mid_line:
            self.out.write("\n")
            self.out.flush()
            self.mid_line = False

    def event(self, event: Any) -> None:
        kind = type(event).__name__
        if kind == "AssistantDelta":
            self.out.write(event.text)
            self.out.flush()
            self.mid_line = not event.text.endswith("\n")
        elif kind == "ToolCallStarted":
            self._end_line()
            args = json.dumps(event.arguments, ensure_ascii=False, default=str)
            self.err.write(f"· {event.tool} {args[:200]}\n")
        elif kind == "ToolCallFinished" and event.status != "success":
            self.err.write(f"  {event.tool}: {event.status}: {event.model_text[:300]}\n")
        elif kind == "Notice":
            self.err.write(f"note: {event.text}\n")
        elif kind == "PatchResolved":
            self.err.write(f"patch: {event.summary}\n")
        elif kind == "WriteLockWait" and event.phase == "waiting":
            self.err.write(f"note: {event.text}\n")
        elif kind == "CommandApprovalResolved":
            self.err.write(f"command {event.command!r}: {event.verdict}\n")
        elif kind == "ThoughtDelta" and self.debug:
            self.err.write(event.text)
        elif kind == "TurnFailed":
            self._end_line()
            hint = f" ({event.hint})" if event.hint else ""
            self.err.write(f"error: {event.error}{hint}\n")
        elif kind == "TurnFinished":
            self._end_line()
        self.err.flush()

    def error(self, message: str, hint: str = "") -> None:
        self._end_line()
        self.err.write(f"hello-tui: {message}" + (f"\n  hint: {hint}" if hint else "") + "\n")
        self.err.flush()


class _JsonPrinter:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err = out, err

    def event(self, event: Any) -> None:
        self.out.write(json.dumps(event.to_dict(), ensure_ascii=False, default=str) + "\n")
        self.out.flush()

    def error(self, message: str, hint: str = "") -> None:
        self.err.write(f"hello-tui: {message}" + (f"\n  hint: {hint}" if hint else "") + "\n")
        self.err.flush()
        self.out.write(json.dumps({"type": "Error", "error": message, "hint": hint}) + "\n")
        self.out.flush()


async def _exec_turn(settings: Any, args: argparse.Namespace, task: str, printer: Any) -> int:
    from contextlib import aclosing

    from hello_tui.core.approval import PolicyApprover
    from hello_tui.core.events import TurnFailed, TurnFinished
    from hello_tui.engine.facade import Engine
    from hello_tui.engine.types import SessionError

    if getattr(args, "resume", None) == "":
        printer.error("--resume needs a session id in exec", "hello-tui --resume picks one")
        return EXIT_USAGE
    try:
        engine = await Engine.open(
            settings,
            PolicyApprover(yes=bool(args.yes)),
            resume=getattr(args, "resume", None),
            continue_latest=bool(getattr(args, "continue_", False)),
        )
    except SessionError as exc:
        printer.error(str(exc), "list .helloagents/sessions/ or drop --resume")
        return EXIT_USAGE
    try:
        preflight = await engine.preflight()
        if not preflight.ok:
            printer.error(preflight.message, preflight.hint)
            return EXIT_USAGE
        code = EXIT_FAILED
        async with aclosing(engine.run_turn(task)) as events:
            async for event in events:
                printer.event(event)
                if isinstance(event, TurnFinished):
                    code = EXIT_OK
                elif isinstance(event, TurnFailed):
                    code = EXIT_FAILED
        return code
    finally:
        await engine.aclose()


def run_exec(args: argparse.Namespace) -> int:
    from hello_tui.config import ConfigError, settings_from_args
    from hello_tui.core import logs

    out, err = sys.stdout, sys.stderr
    printer: Any = (
        _JsonPrinter(out, err)
        if getattr(args, "json", False)
        else _TextPrinter(out, err, bool(getattr(args, "debug", False)))
    )
    task = " ".join(getattr(args, "task", None) or []).strip()
    if not task:
        printer.error("the task is empty", 'usage: hello-tui exec [options] "what to do"')
        return EXIT_USAGE
    try:
        settings = settings_from_args(args)
    except ConfigError as exc:
        printer.error(str(exc))
        return EXIT_USAGE
    logs.configure(settings)
    try:
        return asyncio.run(_exec_turn(settings, args, task, printer))
    except KeyboardInterrupt:
        err.write("\ninterrupted: the session was saved; continue it with --continue\n")
        return EXIT_INTERRUPTED
