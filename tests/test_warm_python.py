"""The tests' warm Python behaves as the interpreter it stands in for, seen from outside.

Every row runs the same program both ways, `sys.executable` and `warm_python()`, and
compares what a caller can see: exit status (a code or a signal), stdout and stderr, and
what the program saw of its start (argv, `sys.path[0]`, working directory, environment,
umask, ignored signals, std stream buffering).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.warm_python import warm_python

GUARD = 30

SEEN = textwrap.dedent(
    """
    import json, os, signal, sys
    print(json.dumps({
        "argv": sys.argv, "path0": sys.path[0], "cwd": os.getcwd(),
        "env": os.environ.get("WARM_PROBE"), "umask": os.umask(0),
        "ignored": signal.getsignal(signal.SIGUSR1) == signal.SIG_IGN,
        "int": signal.getsignal(signal.SIGINT) is signal.default_int_handler,
        "pipe": signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN,
        "streams": [type(s.buffer).__name__ for s in (sys.stdin, sys.stdout, sys.stderr)],
        "lines": [s.line_buffering for s in (sys.stdout, sys.stderr)],
        "bytecode": sys.dont_write_bytecode,
    }))
    """
)

PROGRAMS = {
    "exit 0": "print('out'); print('err', file=__import__('sys').stderr)",
    "exit 3": "raise SystemExit(3)",
    "exit message": "raise SystemExit('no good')",
    "uncaught error": "print('before'); raise ValueError('boom')",
    "uncaught ctrl-c": "raise KeyboardInterrupt",
    "killed by a signal": "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
    "atexit and threads": (
        "import atexit, threading, time\n"
        "atexit.register(lambda: print('at exit'))\n"
        "threading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()\n"
    ),
    "what it saw": SEEN,
}


def both(tmp_path: Path, name: str, *, env: dict[str, str] | None = None, **kwargs):
    script = tmp_path / "program.py"
    script.write_text(PROGRAMS[name])
    results = []
    for prefix in ([sys.executable], warm_python()):
        proc = subprocess.run(
            [*prefix, str(script), "an", "argument"],
            capture_output=True,
            text=True,
            timeout=GUARD,
            cwd=tmp_path,
            env={**os.environ, "WARM_PROBE": "here", **(env or {})},
            check=False,
            **kwargs,
        )
        results.append(proc)
    return results


def _comparable(stderr: str) -> str:
    return stderr.replace(str(Path(sys.executable).name), "python")


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_program_ends_and_speaks_the_same_either_way(tmp_path, name):
    cold, warm = both(tmp_path, name)
    assert warm.returncode == cold.returncode
    assert warm.stdout == cold.stdout
    assert _comparable(warm.stderr) == _comparable(cold.stderr)


def test_an_inherited_ignore_and_umask_reach_the_program(tmp_path):
    def start() -> None:
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
        os.umask(0o077)

    cold, warm = both(tmp_path, "what it saw", preexec_fn=start)
    assert '"ignored": true' in cold.stdout and '"umask": 63' in cold.stdout
    assert warm.stdout == cold.stdout


def test_unbuffered_or_not_the_streams_are_built_the_same(tmp_path):
    plain = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    for env in (plain, {**plain, "PYTHONUNBUFFERED": "1"}):
        script = tmp_path / "program.py"
        script.write_text(SEEN)
        outputs = [
            subprocess.run(
                [*prefix, str(script)], capture_output=True, text=True, env=env, check=True
            ).stdout
            for prefix in ([sys.executable], warm_python())
        ]
        assert outputs[0] == outputs[1]


def test_it_is_warm_a_fork_of_the_server_not_a_new_interpreter(tmp_path):
    script = tmp_path / "program.py"
    script.write_text("import os, sys; print(os.getppid(), 'openai' in sys.modules)")
    launcher = subprocess.Popen(
        [*warm_python(), str(script)], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    out, _ = launcher.communicate(timeout=GUARD)
    parent, preloaded = out.split()
    assert int(parent) != launcher.pid and preloaded == "True"


def test_a_different_start_up_environment_runs_the_real_interpreter(tmp_path):
    script = tmp_path / "program.py"
    script.write_text("import os, sys; print(os.getppid(), 'openai' in sys.modules)")
    launcher = subprocess.Popen(
        [*warm_python(), str(script)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "7"},
    )
    out, _ = launcher.communicate(timeout=GUARD)
    assert out.split()[1] == "False"  # exec'd: nothing preloaded


def test_a_signal_to_the_launcher_reaches_the_program(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *a: (print('got it', flush=True), sys.exit(5)))\n"
        "print('ready', flush=True)\n"
        # Short sleeps: a signal that lands between the last check for handlers and the
        # sleep's system call waits for that call's end (CPython's own race), so one long
        # sleep would hold the handler for its whole length.
        "for _ in range(600):\n"
        "    time.sleep(0.05)\n"
    )
    launcher = subprocess.Popen([*warm_python(), str(script)], stdout=subprocess.PIPE, text=True)
    assert launcher.stdout is not None
    assert launcher.stdout.readline() == "ready\n"
    launcher.send_signal(signal.SIGTERM)
    assert launcher.wait(timeout=GUARD) == 5
    assert launcher.stdout.read() == "got it\n"


def test_a_killed_launcher_takes_its_program_along(tmp_path):
    script = tmp_path / "program.py"
    script.write_text("import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(30)\n")
    launcher = subprocess.Popen([*warm_python(), str(script)], stdout=subprocess.PIPE, text=True)
    assert launcher.stdout is not None
    pid = int(launcher.stdout.readline())
    launcher.kill()
    launcher.wait(timeout=GUARD)
    deadline = time.monotonic() + GUARD
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not Path(f"/proc/{pid}").exists()
