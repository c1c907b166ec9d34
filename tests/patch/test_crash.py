"""Crash safety: a 5-file commit killed with SIGKILL at every write point, then recovered.

The child process installs a write-point hook that kills itself at point N.
After `recover()` the tree must equal exactly the state before the patch or
the state after it, never a mix, and no temp file may be left behind.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

from hello_tui.config import load_settings
from hello_tui.patch import commit_plan, list_backups, plan_patch_text, recover

from .conftest import snapshot, write

CHILD = r"""
import os, signal, sys
from hello_tui.config import load_settings
from hello_tui.patch import commit_plan, plan_patch_text, transaction

kill_at = int(sys.argv[2])
seen = []

def hook(label):
    seen.append(label)
    if len(seen) == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)

transaction.WRITE_POINT_HOOK = hook
settings = load_settings(sys.argv[1], environ={})
commit_plan(plan_patch_text(sys.stdin.read(), settings), settings)
print("points:", len(seen))
"""

PATCH = """*** Begin Patch
*** Update File: a.txt
@@
-a
+A
*** Update File: bin/run.sh
@@
-echo old
+echo new
*** Add File: new/deep/c.txt
+c
*** Delete File: d.txt
*** Update File: e.txt
*** Move to: moved/f.txt
@@
-e
+E
*** End Patch
"""


def make_repo(root: Path) -> Path:
    root.mkdir()
    write(root, "a.txt", "a\n")
    os.chmod(write(root, "bin/run.sh", "echo old\n"), 0o755)
    write(root, "d.txt", "d\n")
    write(root, "e.txt", "e\n")
    return root


def expected_after(tmp_path: Path) -> dict:
    repo = make_repo(tmp_path / "reference")
    settings = load_settings(repo, environ={})
    commit_plan(plan_patch_text(PATCH, settings), settings)
    return snapshot(repo)


def test_kill_at_every_write_point_recovers_to_before_or_after(tmp_path: Path):
    after = expected_after(tmp_path)
    outcomes = []
    n = 1
    while True:
        repo = make_repo(tmp_path / f"r{n}")
        before = snapshot(repo)
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, str(repo), str(n)],
            input=PATCH,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode == 0:
            total = int(proc.stdout.split("points:")[1])
            assert n == total + 1
            break
        assert proc.returncode == -signal.SIGKILL, proc.stderr
        settings = load_settings(repo, environ={})
        recover(settings)
        state = snapshot(repo)
        assert state in (before, after), f"mixed state after a kill at point {n}: {state}"
        assert not [p for p in state if p.endswith(".hello-tmp")]
        outcome = "after" if state == after else "before"
        outcomes.append(outcome)
        assert len(list_backups(settings)) == (1 if outcome == "after" else 0)
        script = repo / ("bin/run.sh")
        assert stat.S_IMODE(os.stat(script).st_mode) == 0o755
        assert not (settings.state.journal / "open.json").exists()
        n += 1
    # backups, journal, 4 writes (temp file complete, replaced), 2 removals, committed, closed
    assert len(outcomes) == 14
    assert outcomes[0] == "before" and outcomes[-1] == "after"
    assert outcomes == sorted(outcomes, key=lambda o: o == "after")


def test_recovery_then_a_new_commit_works(tmp_path: Path):
    repo = make_repo(tmp_path / "r")
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(repo), "5"],
        input=PATCH,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL
    settings = load_settings(repo, environ={})
    # planning rolls back the interrupted commit before reading the tree
    commit_plan(plan_patch_text(PATCH, settings), settings)
    assert snapshot(repo) == expected_after(tmp_path)
