"""`hello-tui exec`: one turn with no UI, for scripts and CI.

Prints the streamed answer to stdout (or one JSON object per event with
--json); progress, notices and errors go to stderr. Everything printed is
text from the model, commands and servers: it goes through
`core.terminal_text` on its way out, so no escape sequence in it reaches the
user's terminal. Never reads stdin:
everything that needs approval is declined unless --yes is given. `--mode`
applies as in the app: auto-edit applies patches within the limits without
--yes, read-only declines every write and approval-needing command even with it.

Exit codes: 0 the turn finished; 1 it failed (e.g. the model was unreachable
after retries); 2 usage, configuration or preflight errors; 130 interrupted
by Ctrl-C, 143 by SIGTERM, 129 by SIGHUP (in each case the running turn is
cancelled as Esc would, its open tool calls closed, and the session saved, so
`--continue` picks it up).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from typing import Any, TextIO

from hello_tui.core.terminal_text import SafeTextStream, safe_json

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
# Ended by a signal: 128 + its number, as shells report it.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
INTERRUPTED_LINE = "interrupted{by}: the session was saved; continue it with --continue"
EARLY_STOP_LINE = "interrupted{by} before the turn started: nothing was sent or changed"


class _SignalStop:
    """SIGTERM / SIGHUP end the run the way Ctrl-C does: the turn is cancelled and saved."""

    def __init__(self) -> None:
        self.received: signal.Signals | None = None
        self.engine: Any = None
        self.turn_started = False
        self._task: asyncio.Task[Any] | None = None
        self._installed: list[signal.Signals] = []

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        for sig in STOP_SIGNALS:
            try:
                loop.add_signal_handler(sig, self._on_signal, sig)
            except (NotImplementedError, RuntimeError, ValueError):
                continue  # no such signal here (Windows): the default action stands
            self._installed.append(sig)

    def remove(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in self._installed:
            loop.remove_signal_handler(sig)
        self._installed.clear()

    def _on_signal(self, sig: signal.Signals) -> None:
        if self.received is not None:
            return  # already stopping: the save must not be cut short by a second signal
        self.received = sig
        if self.engine is not None and self.engine.running:
            self.engine.cancel()  # the turn ends with TurnCancelled after saving
        elif self._task is not None:
            self._task.cancel()

    @property
    def exit_code(self) -> int:
        return 128 + int(self.received) if self.received is not None else EXIT_INTERRUPTED


class _SafeWriter:
    """A terminal stream that prints text, never control: every write is made safe."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._text = SafeTextStream()

    def write(self, text: str) -> None:
        self.stream.write(self._text.feed(text))

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        """What the last write held back (a CR whose LF never came)."""
        self.stream.write(self._text.flush())
        self.stream.flush()


class _TextPrinter:
    def __init__(self, out: TextIO, err: TextIO, debug: bool) -> None:
        self.out, self.err, self.debug = _SafeWriter(out), _SafeWriter(err), debug
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
        elif kind == "McpStartup":
            self.err.write(f"mcp: {event.text}\n")
        elif kind == "ToolProgress":
            self._end_line()
            self.err.write(f"  {event.tool}: {event.text}\n")
        elif kind == "AnswerRestarted":
            self._end_line()  # stdout cannot be taken back: say plainly the text is void
            self.err.write(
                f"note: the answer above was cut off ({event.reason}) and is void; "
                "asking the model again\n"
            )
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

    def interrupted(self, line: str) -> None:
        self._end_line()
        _interrupted(self, line)


def _interrupted(printer: Any, line: str) -> None:
    printer.err.write("\n" + line + "\n")
    printer.err.flush()


class _JsonPrinter:
    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err = out, _SafeWriter(err)

    def _line(self, data: dict[str, Any]) -> None:
        self.out.write(safe_json(json.dumps(data, ensure_ascii=False, default=str)) + "\n")
        self.out.flush()

    def event(self, event: Any) -> None:
        self._line(event.to_dict())

    def error(self, message: str, hint: str = "") -> None:
        self.err.write(f"hello-tui: {message}" + (f"\n  hint: {hint}" if hint else "") + "\n")
        self.err.flush()
        self._line({"type": "Error", "error": message, "hint": hint})

    def interrupted(self, line: str) -> None:
        _interrupted(self, line)


async def _exec_turn(settings: Any, args: argparse.Namespace, task: str, printer: Any) -> int:
    stop = _SignalStop()
    stop.install()
    try:
        code = await _exec_turn_body(settings, args, task, printer, stop)
    except asyncio.CancelledError:
        if stop.received is None:
            raise
        code = EXIT_FAILED
    finally:
        stop.remove()
    if stop.received is not None:
        line = INTERRUPTED_LINE if stop.turn_started else EARLY_STOP_LINE
        printer.interrupted(line.format(by=f" by {stop.received.name}"))
        return stop.exit_code
    return code


async def _exec_turn_body(
    settings: Any, args: argparse.Namespace, task: str, printer: Any, stop: _SignalStop
) -> int:
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
    stop.engine = engine
    try:
        preflight = await engine.preflight()
        if not preflight.ok:
            printer.error(preflight.message, preflight.hint)
            return EXIT_USAGE
        code = EXIT_FAILED
        async with aclosing(engine.run_turn(task)) as events:
            async for event in events:
                stop.turn_started = True
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
        printer.interrupted(INTERRUPTED_LINE.format(by=""))
        return EXIT_INTERRUPTED
    finally:
        for stream in (printer.out, printer.err):
            if isinstance(stream, _SafeWriter):
                stream.close()
