"""Command line: parses arguments and dispatches; imports nothing heavy until a command needs it.

hello-tui [--repo DIR] [model flags]          the full-screen app
hello-tui exec [...] TASK                      one headless turn
hello-tui apply [--yes] [--dry-run] PATCH|-    apply a patch file
hello-tui undo [--force]                       step back one applied patch
hello-tui redo [--force]                       step forward again
hello-tui history                              applied patches, newest first
hello-tui recover                              show and finish an interrupted patch
hello-tui doctor                               resolved configuration + preflight
hello-tui demo                                 the app on a sample repo with a scripted model
hello-tui acp                                  an ACP agent on stdio (Zed, Toad, other clients)
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable

from hello_tui import __version__
from hello_tui.commands import patch_args

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command

if TYPE_CHECKING:
    import argparse

# The patch commands run no model and no command of the agent's, so they hold nothing
# to hide from the user's other processes (the app makes itself undumpable), and none of
# their modules logs (tests/test_layering.py holds it for apply): their log is opened only
# for an uncaught error's traceback. Both spare each run an import (ctypes, logging), and
# their usual command lines are read without argparse (commands/patch_args.py).
PATCH_COMMANDS = patch_args.PATCH_COMMANDS


def _repo_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repo", default=".", help="repository to work in (default: .)")


def _model_flags(p: argparse.ArgumentParser) -> None:
    _repo_flag(p)
    p.add_argument("--project", help="project name used in notes (default: the repo folder name)")
    p.add_argument("--model", help="model id (LLM_MODEL_ID)")
    p.add_argument("--base-url", help="OpenAI-compatible base URL (LLM_BASE_URL)")
    p.add_argument("--api-key", help="API key (LLM_API_KEY)")
    p.add_argument("--max-steps", type=int, help="tool steps per turn (CODE_AGENT_MAX_STEPS, 20)")
    p.add_argument(
        "--protocol",
        choices=("auto", "tools", "react"),
        help="native tool calls, ReAct text, or auto (tools, ReAct if the endpoint rejects tools)",
    )
    p.add_argument(
        "--mode",
        choices=("ask", "auto-edit", "read-only", "plan"),
        help="permission mode (CODE_AGENT_MODE): ask for every patch and command (default), "
        "auto-edit (patches within the limits apply unasked), read-only (plan: nothing written)",
    )
    p.add_argument("--debug", action="store_true", help="verbose logging")


def _session_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--continue", dest="continue_", action="store_true", help="resume the latest session"
    )
    p.add_argument(
        "--resume",
        metavar="ID",
        nargs="?",
        const="",
        help="resume the session with this id (the app, without an id: pick from a list)",
    )


def _tui(p: argparse.ArgumentParser) -> None:
    _model_flags(p)
    _session_flags(p)


def _exec(p: argparse.ArgumentParser) -> None:
    _model_flags(p)
    _session_flags(p)
    p.add_argument(
        "--yes",
        action="store_true",
        help="approve patches, commands, MCP tool calls and the repo's MCP servers (this run only)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per event")
    p.add_argument("task", nargs="+", help="what to do")


def _patch_flags(command: str) -> Callable[[argparse.ArgumentParser], None]:
    return lambda p: patch_args.add_flags(command, p)


def _mcp(p: argparse.ArgumentParser) -> None:
    mcp_sub = p.add_subparsers(dest="mcp_command", metavar="ACTION", required=True)
    mcp_list = mcp_sub.add_parser("list", help="list the configured servers and their tools")
    _repo_flag(mcp_list)
    mcp_list.add_argument("--json", action="store_true", help="print JSON")
    mcp_list.add_argument(
        "--no-start", action="store_true", help="do not start servers to list their tools"
    )


def _demo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--keep", action="store_true", help="keep the sample repo afterwards")


# Each subcommand's help and its flags, in the order `--help` lists them.
_SUBPARSERS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "tui": ("open the full-screen app (the default)", _tui),
    "exec": ("run one turn headless and print the answer", _exec),
    "apply": ("apply a patch file through the patch engine", _patch_flags("apply")),
    "undo": ("step back one applied patch (again: one more)", _patch_flags("undo")),
    "redo": ("step forward again: bring back the last undone patch", _patch_flags("redo")),
    "history": ("applied patches, newest first, undone or not", _patch_flags("history")),
    "recover": ("show and finish or roll back an interrupted patch", _patch_flags("recover")),
    "doctor": ("show the resolved configuration and test the model", _model_flags),
    "mcp": ("MCP servers: where they come from, their state, their tools", _mcp),
    "acp": ("serve the Agent Client Protocol on stdio, for editors such as Zed", _model_flags),
    "demo": ("try the app on a sample repo with a scripted model", _demo),
}
SUBCOMMANDS = tuple(_SUBPARSERS)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; `only`: for a command line that starts with that subcommand.

    Such a line never reaches the top level's flags nor another subcommand's, so they
    are left out: building them all costs every command about 4 ms.
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="hello-tui",
        description="A terminal coding agent that writes only through patches you review.",
    )
    if only is None:
        parser.add_argument("--version", action="version", version=f"hello-tui {__version__}")
        _model_flags(parser)
        _session_flags(parser)
    else:  # what the top level reports (an extra argument) shows its whole usage, as ever
        parser.error = lambda message: build_parser().error(message)  # type: ignore[method-assign]
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, add_flags) in _SUBPARSERS.items():
        if only in (None, name):
            add_flags(sub.add_parser(name, help=help_text))
    return parser


def _start_logging(args: argparse.Namespace, command: str) -> None:
    """Log into the repository's `.helloagents/logs/` at LOG_LEVEL (DEBUG with --debug).

    The demo logs in its own sample repository; a configuration error is left for
    the command to report.
    """
    if command == "demo":
        return
    from hello_tui.config import ConfigError, settings_from_args
    from hello_tui.core import logs

    try:
        logs.configure(settings_from_args(args))
    except ConfigError:
        return


def _command_named_first(argv: list[str]) -> str | None:
    """The subcommand a command line names before any flag, if it does."""
    return argv[0] if argv and argv[0] in SUBCOMMANDS else None


def run() -> None:
    """The `hello-tui` command and `python -m hello_tui`: `main`, then the process's exit.

    A patch command ends with os._exit once the exit handlers ran (as at any exit: a
    log's flush is one) and its output is flushed: the interpreter's teardown (freeing
    every module and object one by one) costs more than many a small apply, and nothing
    is left for it to do. The command closed and synced every file it wrote and
    released its locks, and its fsync threads are joined. Any other command, or a
    patch command with another thread still running, exits as usual.

    The cyclic collector stays off after a patch command here: turned on again, its
    first collection would walk every object the imports made (some 5 ms), for a
    process about to end.
    """
    global _PROCESS_ENDS_AFTER
    _PROCESS_ENDS_AFTER = True
    code = main()
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        code = _reader_gone(code)
    threading = sys.modules.get("threading")
    if _FINISHED_PATCH_COMMAND and (threading is None or threading.active_count() == 1):
        import atexit

        atexit._run_exitfuncs()
        try:
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:
                    stream.flush()
        except (OSError, ValueError):
            raise SystemExit(code) from None  # the usual exit reports what cannot be written
        os._exit(code)
    raise SystemExit(code)


_FINISHED_PATCH_COMMAND = False  # set by `main` when a patch command returned
_PROCESS_ENDS_AFTER = False  # set by `run`: nobody stays to need the collector back


def main(argv: list[str] | None = None) -> int:
    global _FINISHED_PATCH_COMMAND
    _FINISHED_PATCH_COMMAND = False
    words = sys.argv[1:] if argv is None else list(argv)
    # Before parsing, so that `--help` and a usage error are undumpable too; a patch
    # command after all (`hello-tui --repo . apply`) just pays for it.
    if _command_named_first(words) not in PATCH_COMMANDS:
        _make_undumpable()
    args = patch_args.read_plain(words) or build_parser(_command_named_first(words)).parse_args(
        words
    )
    command = args.command or "tui"
    if command in PATCH_COMMANDS:
        # dataclasses imports inspect for classes without a docstring only (the engine's
        # all have one, tests/test_layering.py), urllib.parse (for pathlib) ipaddress for
        # a bracketed host only, pathlib ntpath for Windows paths only: each is loaded
        # only if used.
        from hello_tui.core.lazy_module import defer

        for name in ("inspect", "ipaddress", "ntpath"):
            defer(name)
        code = _run_without_collector(args, command)
        _FINISHED_PATCH_COMMAND = True
        return code
    return _run(args, command)


def _run_without_collector(args: argparse.Namespace, command: str) -> int:
    """A patch command with the cyclic garbage collector off, on again after it.

    Its imports and its parse allocate enough to set the collector off some twenty
    times, each walking every young object (about 2 % of a small apply), and it finds
    next to nothing: the engine's objects hold no cycles and go with their last
    reference. A caller that stays (a test, the app) has its collector back as it was.
    """
    enabled = gc.isenabled() and not _PROCESS_ENDS_AFTER
    gc.disable()
    try:
        return _run(args, command)
    finally:
        if enabled:
            gc.enable()


def _run(args: argparse.Namespace, command: str) -> int:
    try:
        if command not in PATCH_COMMANDS:
            _make_undumpable()  # done already unless a flag came first
            _start_logging(args, command)
        if command == "exec":
            from hello_tui.commands.exec import run_exec

            return run_exec(args)
        if command == "apply":
            from hello_tui.commands.patch_commands import run_apply

            return run_apply(args)
        if command == "undo":
            from hello_tui.commands.patch_commands import run_undo

            return run_undo(args)
        if command == "redo":
            from hello_tui.commands.patch_commands import run_redo

            return run_redo(args)
        if command == "history":
            from hello_tui.commands.patch_commands import run_history

            return run_history(args)
        if command == "recover":
            from hello_tui.commands.patch_commands import run_recover

            return run_recover(args)
        if command == "doctor":
            from hello_tui.commands.doctor import run_doctor

            return run_doctor(args)
        if command == "mcp":
            from hello_tui.commands.mcp import run_mcp

            return run_mcp(args)
        if command == "acp":
            from hello_tui.acp.command import run_acp

            return run_acp(args)
        if command == "demo":
            from hello_tui.demo import run_demo

            return run_demo(args)
        from hello_tui.app import run_tui

        return run_tui(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError as exc:
        if not _stdout_closed_by_reader():
            return _internal_error(args, command, exc)
        return _reader_gone(1)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: logged, said in one line
        return _internal_error(args, command, exc)


# `hello-tui history | head`: the reader has what it wanted and went away. Like git or
# any program that the pipe's SIGPIPE ends, stop without a word, with the status a
# shell shows for that (128 + SIGPIPE); a change already made still exits 0.
EXIT_READER_GONE = 141


def _stdout_closed_by_reader() -> bool:
    """stdout is a pipe whose reading end is closed (poll says POLLERR for it)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


def _reader_gone(code: int) -> int:
    """Point stdout at /dev/null so that nothing left buffered fails again at exit."""
    with contextlib.suppress(OSError, AttributeError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return code if code == 0 else EXIT_READER_GONE


def _make_undumpable() -> None:
    from hello_tui.core.undumpable import make_app_undumpable

    make_app_undumpable()  # no process of the user's may trace it or read its memory


def _internal_error(args: argparse.Namespace, command: str, exc: Exception) -> int:
    """No traceback on the terminal: one line naming the log, where the traceback goes."""
    from hello_tui.core import logs

    if command in PATCH_COMMANDS:  # their log is opened now, for this
        # Failing that, log_uncaught falls back to the current folder's log.
        with contextlib.suppress(Exception):
            _start_logging(args, command)
    where = logs.log_uncaught(f"hello-tui {command}", exc)
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    line = f"error: unexpected {type(exc).__name__}" + (f": {detail}" if detail else "")
    line += f" (details in {where})" if where else " (the traceback could not be saved)"
    print(line, file=sys.stderr)
    return 1


if __name__ == "__main__":
    run()
