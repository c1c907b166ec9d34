"""A warm Python for tests that run `python -m hello_tui …` or a test server as a process.

Each such process spends most of its CPU time starting: the interpreter, then `openai`
(whose package imports every type it has), the ACP schema, the MCP SDK and the tokenizer's
ranks, about 1.5 s on these cores before the first line of the code under test runs. A
suite that starts a few hundred of them spends minutes there.

`warm_python()` gives an argv prefix to use instead of `sys.executable`. It starts a tiny
launcher process (the standard library only) that hands its argv, environment, working
directory, umask, signal state and its stdin/stdout/stderr descriptors to a server process
of this test worker. The server imported all that once; it forks, and the fork sets itself
up as a fresh interpreter would for that request (descriptors, environment, signals,
`sys.argv`, `sys.path[0]`, the std streams) and runs the module or script as `__main__`.
The launcher forwards signals to the fork and exits as it exits (code or signal), so
exit statuses, stdio pipes, signals and every file the code touches are the real ones.

What a fork cannot be is a process whose start-up is the subject: interpreter flags,
a different `PYTHON*` or locale environment, lazy imports, process identity (`/proc`
command lines, parents, groups) or a terminal. The server answers "cold" to a request
whose start-up environment differs from its own and the launcher then `exec`s the real
interpreter; tests about the rest keep `sys.executable`.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

LAUNCHER = Path(__file__).with_name("warm_launch.py")
ROOT = Path(__file__).resolve().parents[2]
# Imported once by the server, beside every hello_tui module that is not the UI's: what
# hello-tui's commands and the test servers import, lazily or not.
PRELOAD = (
    "acp",
    "mcp",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.server.mcpserver",
    "mcp.shared._httpx_utils",
    "openai",
    "tiktoken",
)
UI = ("hello_tui.app", "hello_tui.screens", "hello_tui.widgets")

# Not `-m`: runpy runs a `-m` program in `__main__`'s own namespace, which must not be ours.
SERVE = "import sys; from tests.support.warm_python import serve; serve(sys.argv[1])"

_server: subprocess.Popen[bytes] | None = None
_socket_path = ""
_lock = threading.Lock()


def warm_python() -> list[str]:
    """The argv prefix that runs `-m module …` or `script …` in a warm interpreter."""
    global _server, _socket_path
    with _lock:
        if _server is None or _server.poll() is not None:
            folder = tempfile.mkdtemp(prefix="warm-python-")
            _socket_path = os.path.join(folder, "socket")
            _server = subprocess.Popen(
                [sys.executable, "-c", SERVE, _socket_path],
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
            )
            assert _server.stdout is not None
            if _server.stdout.readline().strip() != b"ready":
                raise RuntimeError("the warm Python server did not start")
            atexit.register(_stop, _server, folder)
    return [sys.executable, "-I", "-S", str(LAUNCHER), _socket_path]


def _stop(server: subprocess.Popen[bytes], folder: str) -> None:
    import shutil

    if server.poll() is None:
        server.terminate()
        server.wait(timeout=10)
    shutil.rmtree(folder, ignore_errors=True)


# ---- the server --------------------------------------------------------------


# Start-up variables whose whole effect a fork can still give: the std streams' buffering
# and the bytecode-writing switch (`sys.dont_write_bytecode`).
RUNTIME_SETTABLE = ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE")


def startup_environment(env: dict[str, str]) -> dict[str, str]:
    """The variables an interpreter reads while it starts, which a fork cannot change."""
    return {
        k: v
        for k, v in env.items()
        if (k.startswith(("PYTHON", "LC_")) or k == "LANG") and k not in RUNTIME_SETTABLE
    }


def serve(path: str) -> None:
    import gc
    import selectors

    _preload()
    _die_with_parent()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    own_startup = startup_environment(dict(os.environ))
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    children: dict[int, tuple[socket.socket, int]] = {}  # pid -> (connection, pidfd)
    gc.collect()
    gc.freeze()  # a fork touches fewer pages when the collector leaves old objects alone
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    assert threading.active_count() == 1  # fork from one thread only
    while True:
        for key, _ in selector.select():
            what = key.data
            if what == "accept":
                _start(listener, selector, children, own_startup)
            elif what[0] == "launcher":
                # The launcher ended (a test killed it): its command ends with it. The fork
                # may have ended and been reaped in this same round.
                entry = children.get(what[1])
                if entry is not None:
                    selector.unregister(entry[0])
                    _kill(entry[1])
            else:
                _reap(what[1], selector, children)


# A launcher can be gone at any point of its exchange with the server (a test killed it, a
# timeout ended it); none of that may end the server, which every later test of the worker
# uses. So every step on a connection is guarded, and a fork whose launcher is gone is
# killed through its pidfd (never by pid, which may already name another process).


def _start(listener, selector, children, own_startup) -> None:
    import selectors

    try:
        conn, _ = listener.accept()
    except OSError:
        return
    try:
        request, fds = _receive(conn)
    except (OSError, ValueError):
        request, fds = None, []
    if request is None or startup_environment(request["env"]) != own_startup:
        for fd in fds:
            os.close(fd)
        try:
            conn.sendall(b"cold\n")
        except OSError:
            pass
        conn.close()
        return
    inherited = [listener.fileno(), selector.fileno()]
    inherited += [fd for c, p in children.values() for fd in (c.fileno(), p)]
    pid = os.fork()
    if pid == 0:
        for fd in inherited:
            os.close(fd)
        _become(request, fds, conn)  # never returns
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    children[pid] = (conn, pidfd)
    selector.register(pidfd, selectors.EVENT_READ, ("child", pid))
    try:
        conn.sendall(f"{pid}\n".encode())
    except OSError:  # the launcher is already gone: so is its command (reaped as it ends)
        _kill(pidfd)
        return
    selector.register(conn, selectors.EVENT_READ, ("launcher", pid))


def _kill(pidfd: int) -> None:
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap(pid: int, selector, children) -> None:
    conn, pidfd = children.pop(pid)
    _, status = os.waitpid(pid, 0)
    selector.unregister(pidfd)
    os.close(pidfd)
    try:
        selector.unregister(conn)
    except KeyError:
        pass
    try:
        conn.sendall(f"{status}\n".encode())
    except OSError:
        pass
    conn.close()


def _preload() -> None:
    import importlib
    import pkgutil

    import hello_tui

    for name in PRELOAD:
        importlib.import_module(name)
    for module in pkgutil.walk_packages(hello_tui.__path__, "hello_tui."):
        if "main" not in module.name and not module.name.startswith(UI):
            importlib.import_module(module.name)
    import openai

    from hello_tui.agent.tokens import default_counter

    default_counter()  # the tokenizer's ranks, built once
    # A client loads its HTTP transport's modules when it is made.
    openai.OpenAI(api_key="unused", base_url="http://127.0.0.1:9").close()
    assert not any(name == "textual" or name.startswith("textual.") for name in sys.modules)


def _receive(conn: socket.socket) -> tuple[dict | None, list[int]]:
    fds: list[int] = []
    msg, ancdata, _, _ = conn.recvmsg(8, socket.CMSG_SPACE(3 * 4))
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += list(memoryview(data).cast("i"))
    if len(msg) != 8 or len(fds) != 3:
        return None, fds
    size = int.from_bytes(msg, "big")
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            return None, fds
        body += chunk
    return json.loads(body), fds


def _die_with_parent() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: the worker's end is ours


def _become(request: dict, fds: list[int], conn: socket.socket) -> None:
    """In the fork: turn into the interpreter the launcher would have exec'd, run, exit."""
    code = 1
    try:
        conn.close()
        os.setpgid(0, 0)
        for target, fd in enumerate(fds):
            os.dup2(fd, target, inheritable=True)
            os.close(fd)
        _reset_signals(request)
        os.chdir(request["cwd"])
        os.umask(request["umask"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
        _fresh_std_streams(unbuffered=bool(os.environ.get("PYTHONUNBUFFERED")))
        code = _run(request["argv"])
    except BaseException:  # noqa: BLE001 - the set-up failed: say so as an interpreter would
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


def _reset_signals(request: dict) -> None:
    signal.set_wakeup_fd(-1)
    for sig in signal.valid_signals():
        if sig in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            continue
    # What CPython itself installs at start-up, then what the launcher inherited ignored
    # (an ignored signal survives exec: the launcher's ignores are the program's).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    for sig in request["ignored"]:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, request["blocked"])


def _fresh_std_streams(*, unbuffered: bool) -> None:
    import io

    # As CPython builds them (pylifecycle's create_stdio), on the new descriptors: with
    # `-u` or PYTHONUNBUFFERED the writers are raw and written through; otherwise buffered,
    # line by line on a terminal and for stderr. Encodings and error handlers are this
    # interpreter's, which had the same start-up environment.

    def stream(fd: int, mode: str, like, stderr: bool = False) -> io.TextIOWrapper:
        raw = io.FileIO(fd, mode, closefd=False)
        buffered: io.RawIOBase | io.BufferedIOBase
        if mode == "r":
            buffered = io.BufferedReader(raw)
        else:
            buffered = raw if unbuffered else io.BufferedWriter(raw)
        return io.TextIOWrapper(
            buffered,  # type: ignore[arg-type]
            encoding=like.encoding,
            errors=like.errors,
            newline="\n",
            line_buffering=not unbuffered and (stderr or raw.isatty()),
            write_through=unbuffered,
        )

    sys.stdin = sys.__stdin__ = stream(0, "r", sys.__stdin__)
    sys.stdout = sys.__stdout__ = stream(1, "w", sys.__stdout__)
    sys.stderr = sys.__stderr__ = stream(2, "w", sys.__stderr__, stderr=True)


def _run(argv: list[str]) -> int:
    import runpy
    import types

    # A new interpreter's `__main__` is empty; `-m` runs the module in its namespace.
    main = types.ModuleType("__main__")
    main.__builtins__ = __builtins__  # type: ignore[attr-defined]
    sys.modules["__main__"] = main

    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]  # runpy puts the module's file in argv[0]
            sys.path[0] = os.getcwd()
            runpy._run_module_as_main(argv[1])  # type: ignore[attr-defined]
        else:
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.realpath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
        code = 0
    except SystemExit as exit_:
        code = _exit_code(exit_.code)
    except KeyboardInterrupt as error:
        _report(error, script=argv[0] != "-m")
        _finish()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)  # CPython ends an uncaught Ctrl-C the same way
        code = 130
    except BaseException as error:  # noqa: BLE001 - an uncaught error ends the program, reported
        _report(error, script=argv[0] != "-m")
        code = 1
    return _finish(code)


def _report(error: BaseException, *, script: bool) -> None:
    """The traceback CPython prints: without this file's frames, and for a script without
    runpy's (`python -m` shows runpy's two frames, and so does this)."""
    tb = error.__traceback__
    while tb is not None and (
        tb.tb_frame.f_code.co_filename == __file__
        or (script and tb.tb_frame.f_code.co_filename == "<frozen runpy>")
    ):
        tb = tb.tb_next
    sys.excepthook(type(error), error.with_traceback(tb), tb)


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def _finish(code: int = 0) -> int:
    """Interpreter shutdown's visible part: non-daemon threads, atexit, the final flush."""
    threading._shutdown()  # type: ignore[attr-defined]
    import atexit as exits

    exits._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            if stream is sys.stdout:
                return 120  # CPython's status when the final flush of stdout fails
    return code
