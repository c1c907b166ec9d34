"""The launcher half of `warm_python` (see there): `python -I -S warm_launch.py SOCKET ARGS…`.

Standard library only, started isolated and without site-packages, so it costs a few
milliseconds. It sends ARGS, its environment, working directory, umask, ignored and blocked
signals and its descriptors 0–2 to the warm server, forwards the signals a test sends to
the fork, and ends as the fork ended. When the server answers "cold" (or is gone), or ARGS
is not `-m MODULE …` / `SCRIPT …`, it becomes the real interpreter with `exec`.
"""

import json
import os
import signal
import socket
import sys

FORWARDED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGWINCH,
    signal.SIGCONT,
)


# The fork's pid once the server has sent it; a signal that arrives before then waits in
# `pending` (the fork may already run and tell the test it is ready before the launcher has
# read its pid, and that signal is the program's, not the launcher's).
target = {"pid": None, "pending": []}


def forward(sig, _frame):
    if target["pid"] is None:
        target["pending"].append(sig)
        return
    try:
        os.kill(target["pid"], sig)
    except ProcessLookupError:
        pass


def cold(args, forwarded=()):
    # The real interpreter starts with the dispositions the launcher inherited, and a signal
    # that came while the server was asked is delivered to the launcher as it would have
    # been to an interpreter that was starting.
    for sig in forwarded:
        signal.signal(sig, signal.SIG_DFL)
    for sig in target["pending"]:
        os.kill(os.getpid(), sig)
    os.execv(sys.executable, [sys.executable, *args])


def main():
    path, args = sys.argv[1], sys.argv[2:]
    if not args or (args[0].startswith("-") and (args[0] != "-m" or len(args) < 2)):
        cold(args)
    ignored = [
        s
        for s in signal.valid_signals()
        if s not in (signal.SIGKILL, signal.SIGSTOP)
        and signal.getsignal(s) == signal.SIG_IGN
        and s not in (signal.SIGPIPE, signal.SIGXFSZ)
    ]  # this interpreter's own
    request = {
        "argv": args,
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "umask": os.umask(0o022),
        "ignored": ignored,
        "blocked": sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])),
    }
    os.umask(request["umask"])
    forwarded = [sig for sig in FORWARDED if sig not in ignored]
    for sig in forwarded:
        signal.signal(sig, forward)
    body = json.dumps(request).encode()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        conn.sendmsg(
            [len(body).to_bytes(8, "big")],
            [
                (
                    socket.SOL_SOCKET,
                    socket.SCM_RIGHTS,
                    bytes(memoryview(__import__("array").array("i", [0, 1, 2]))),
                )
            ],
        )
        conn.sendall(body)
        reply = conn.makefile("rb")
        first = reply.readline().strip()
    except OSError:
        first = b"cold"
    if first == b"cold" or not first:
        conn.close()
        cold(args, forwarded)
    target["pid"] = int(first)
    while target["pending"]:
        forward(target["pending"].pop(0), None)
    line = reply.readline().strip()
    if not line:  # the server went away: nothing tells how the fork ended
        os._exit(1)
    status = int(line)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


main()
