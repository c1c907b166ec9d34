"""The patch commands through the real CLI: output, JSON, exit codes, no traceback, imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from tests.support.warm_python import warm_python

from .conftest import snapshot, write

PATCH = (
    "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** Add File: n.txt\n+n\n*** End Patch\n"
)


def cli(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*warm_python(), "-m", "hello_tui", *args[:1], "--repo", str(repo), *args[1:]],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )


def test_apply_prints_changes_and_exits_0(repo, tmp_path):
    write(repo, "a.txt", "a\n")
    pf = tmp_path / "p.patch"
    pf.write_text(PATCH)
    proc = cli(repo, "apply", str(pf))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == ["A n.txt", "M a.txt"]
    assert (repo / "a.txt").read_text() == "b\n"


def test_apply_from_stdin_with_json(repo):
    write(repo, "a.txt", "a\n")
    proc = cli(repo, "apply", "--json", "-", stdin=f"Sure:\n```diff\n{PATCH}```\n")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "applied" and out["updated"] == ["a.txt"] and out["added"] == ["n.txt"]
    assert out["backup_dir"].startswith(".helloagents/backups/")


def test_dry_run_writes_nothing(repo):
    write(repo, "a.txt", "a\n")
    before = snapshot(repo)
    proc = cli(repo, "apply", "--dry-run", "-", stdin=PATCH)
    assert proc.returncode == 0 and "dry run" in proc.stdout
    assert snapshot(repo) == before


def test_refused_patch_exits_1_and_changes_nothing(repo):
    write(repo, "a.txt", "zzz\n")
    before = snapshot(repo)
    proc = cli(repo, "apply", "-", stdin=PATCH)
    assert proc.returncode == 1
    assert "a.txt" in proc.stderr and "not found" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert snapshot(repo) == before


def test_high_risk_needs_yes(repo):
    write(repo, "a.txt", "a\n")
    delete = "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n"
    proc = cli(repo, "apply", "-", stdin=delete)
    assert proc.returncode == 3 and "deletes a.txt" in proc.stderr and "--yes" in proc.stderr
    assert (repo / "a.txt").exists()
    proc = cli(repo, "apply", "--yes", "-", stdin=delete)
    assert proc.returncode == 0 and proc.stdout.startswith("D a.txt")
    assert not (repo / "a.txt").exists()


def test_usage_errors_exit_2(repo, tmp_path):
    assert cli(repo, "apply", str(tmp_path / "missing.patch")).returncode == 2
    assert cli(tmp_path / "no-such-repo", "apply", "-", stdin=PATCH).returncode == 2


def test_undo_redo_history_commands(repo):
    write(repo, "a.txt", "a\n")
    before = snapshot(repo)
    assert cli(repo, "apply", "-", stdin=PATCH).returncode == 0
    after = snapshot(repo)
    proc = cli(repo, "undo")
    assert proc.returncode == 0 and "M a.txt" in proc.stdout and "D n.txt" in proc.stdout
    assert snapshot(repo) == before
    again = cli(repo, "undo", "--json")
    assert again.returncode == 1 and json.loads(again.stdout)["status"] == "failed"
    assert snapshot(repo) == before
    redo = json.loads(cli(repo, "redo", "--json").stdout)
    assert redo["status"] == "redone" and redo["added"] == ["n.txt"]
    assert snapshot(repo) == after
    hist = json.loads(cli(repo, "history", "--json").stdout)["history"]
    assert [h["undone"] for h in hist] == [False]
    assert hist[0]["files"] == ["M a.txt", "A n.txt"] and hist[0]["task"] == "hello-tui apply -"
    # The counts are the patch note's diff, read back with unidiff.
    assert hist[0]["patch"]["files"] == [
        {"path": "a.txt", "status": "M", "added": 1, "removed": 1},
        {"path": "n.txt", "status": "A", "added": 1, "removed": 0},
    ]
    text = cli(repo, "history").stdout
    assert "applied" in text and "task: hello-tui apply -" in text
    assert "    M a.txt  +1 −1\n    A n.txt  +1 −0\n" in text


def test_undo_with_nothing_to_undo_exits_1(repo):
    proc = cli(repo, "undo")
    assert proc.returncode == 1 and "Nothing to undo" in proc.stderr


def test_apply_path_imports_neither_textual_nor_openai(repo):
    write(repo, "a.txt", "a\n")
    code = (
        "import sys\n"
        "from hello_tui.cli import main\n"
        f"rc = main(['apply', '--repo', {str(repo)!r}, '--dry-run', '-'])\n"
        "heavy = [m for m in ('textual', 'openai', 'tiktoken') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy), rc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], input=PATCH, capture_output=True, text=True, check=False
    )
    assert "HEAVY= 0" in proc.stdout, proc.stdout + proc.stderr


def _modules_after(repo: Path, argv: list[str]) -> set[str]:
    """The hello_tui modules one CLI command imported (run in a fresh interpreter)."""
    code = (
        "import sys\n"
        "from hello_tui.cli import main\n"
        f"main({argv!r})\n"
        "print('MODULES=' + ','.join(m for m in sys.modules if m.startswith('hello_tui')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], input=PATCH, capture_output=True, text=True, check=False
    )
    found = [line for line in proc.stdout.splitlines() if line.startswith("MODULES=")]
    assert found, proc.stdout + proc.stderr
    return set(found[0].removeprefix("MODULES=").split(","))


def test_each_patch_command_imports_only_what_it_uses(repo):
    write(repo, "a.txt", "a\n")
    applied = _modules_after(repo, ["apply", "--repo", str(repo), "-"])
    assert "hello_tui.patch.planner" in applied
    assert "hello_tui.patch.codex_writer" not in applied  # the Codex patch writer
    for command in ("history", "undo"):
        loaded = _modules_after(repo, [command, "--repo", str(repo)])
        assert "hello_tui.patch.history" in loaded
        assert not loaded & {
            "hello_tui.patch.planner",
            "hello_tui.patch.unified_parser",
            "hello_tui.patch.codex_writer",
        }, command


def test_doctor_finishes_an_interrupted_patch_first(tmp_path, scripted_server):
    import argparse
    import io

    from hello_tui.commands.doctor import run_doctor
    from hello_tui.patch import commit_plan, plan_patch_text

    from .crashkit import run_killed

    repo = tmp_path / "repo"
    repo.mkdir()
    write(repo, "a.txt", "a\n")
    before = snapshot(repo)
    settings = load_settings(repo, environ={})
    kill = 1 + next(
        i for i, lab in enumerate(_labels_of_apply(tmp_path), 1) if lab == "replace n.txt"
    )
    run = run_killed(lambda: commit_plan(plan_patch_text(PATCH, settings), settings), kill)
    assert run.killed and snapshot(repo) != before
    server = scripted_server([], preflight=None)
    out = io.StringIO()
    args = argparse.Namespace(
        repo=str(repo),
        model="m",
        base_url=server.base_url,
        api_key=None,
        project=None,
        max_steps=None,
        protocol=None,
        debug=False,
    )
    assert run_doctor(args, out=out) == 0
    assert "recovered: rolled back the interrupted patch" in out.getvalue()
    assert snapshot(repo) == before


def _labels_of_apply(tmp_path: Path) -> list[str]:
    from hello_tui.patch import commit_plan, plan_patch_text

    from .crashkit import count_points

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    write(scratch, "a.txt", "a\n")
    settings = load_settings(scratch, environ={})
    return count_points(lambda: commit_plan(plan_patch_text(PATCH, settings), settings))


def test_apply_says_how_a_hunk_was_placed_by_its_line_hint(repo):
    # "x / y" occurs at lines 1, 4, 7 and 10; the hunk says line 6: line 7 is taken, and said.
    write(repo, "d.txt", "x\ny\nk\n" * 4)
    diff = "--- a/d.txt\n+++ b/d.txt\n@@ -6,2 +6,2 @@\n x\n-y\n+Y\n"
    proc = cli(repo, "apply", "-", stdin=diff)
    assert proc.returncode == 0, proc.stderr
    assert "warning:" in proc.stderr and "nearest to its stated line 6" in proc.stderr
    write(repo, "e.txt", "x\ny\nk\n" * 4)
    dry = cli(repo, "apply", "--json", "--dry-run", "-", stdin=diff.replace("d.txt", "e.txt"))
    assert dry.returncode == 0, dry.stderr
    assert any("nearest to its stated line 6" in w for w in json.loads(dry.stdout)["warnings"])


DEV_FULL = Path("/dev/full")


@pytest.mark.skipif(not DEV_FULL.exists(), reason="needs /dev/full")
@pytest.mark.parametrize("stream", ["stdout", "stdout and stderr"])
def test_output_on_a_full_disk_does_not_turn_a_done_change_into_a_failure(repo, tmp_path, stream):
    # /dev/full fails every write with ENOSPC, as a full disk under a redirected output does.
    write(repo, "a.txt", "a\n")
    pf = tmp_path / "p.patch"
    pf.write_text(PATCH)

    def run(*args: str) -> int:
        with open(DEV_FULL, "w") as full:
            return subprocess.run(
                [*warm_python(), "-m", "hello_tui", args[0], "--repo", str(repo), *args[1:]],
                stdout=full,
                stderr=full if "stderr" in stream else subprocess.PIPE,
                check=False,
            ).returncode

    assert run("apply", str(pf)) == 0
    assert (repo / "a.txt").read_text() == "b\n"
    assert run("undo") == 0
    assert (repo / "a.txt").read_text() == "a\n" and not (repo / "n.txt").exists()
    assert run("redo", "--json") == 0
    assert (repo / "n.txt").read_text() == "n\n"


def _run_entry(repo: Path, argv: list[str], before: str = "") -> subprocess.CompletedProcess:
    """`hello_tui.cli.run` (the installed command's entry) in a fresh interpreter."""
    code = (
        "import sys\n"
        f"{before}"
        "from hello_tui.cli import run\n"
        f"sys.argv = ['hello-tui', *{argv!r}]\n"
        "run()\n"
        "print('not reached')\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], input=PATCH, capture_output=True, text=True, check=False
    )


def test_a_patch_command_exits_at_once_with_its_output_flushed(repo):
    write(repo, "a.txt", "a\n")
    # Teardown skipped: an object's finaliser is never run, yet every line arrives.
    finaliser = "class Late:\n    def __del__(self):\n        print('torn down')\nlate = Late()\n"
    proc = _run_entry(repo, ["apply", "--repo", str(repo), "-"], before=finaliser)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:2] == ["A n.txt", "M a.txt"]
    assert "backup: " in proc.stdout and "torn down" not in proc.stdout
    refused = _run_entry(repo, ["apply", "--repo", str(repo), "-"])
    assert refused.returncode == 1 and "error:" in refused.stderr


def test_exit_handlers_still_run_and_other_commands_exit_as_usual(repo):
    write(repo, "a.txt", "a\n")
    handler = "import atexit\natexit.register(lambda: print('handler ran'))\n"
    proc = _run_entry(repo, ["apply", "--repo", str(repo), "-"], before=handler)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "handler ran"
    other = _run_entry(repo, ["--version"])
    assert other.returncode == 0 and other.stdout.strip().startswith("hello-tui ")


@pytest.mark.parametrize("command", [["history"], ["history", "--json"]])
def test_a_reader_that_went_away_ends_the_command_quietly(repo, command):
    """`hello-tui history | head`: no error line, and the status a shell shows when a pipe's
    reader left (128 + SIGPIPE), as git's; nothing is changed by it."""
    write(repo, "a.txt", "a\n")
    assert cli(repo, "apply", "-", stdin=PATCH).returncode == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written
    try:
        proc = subprocess.run(
            [*warm_python(), "-m", "hello_tui", command[0], "--repo", str(repo), *command[1:]],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode == 141


def test_a_patch_command_runs_without_the_collector_and_gives_it_back(repo, monkeypatch, capsys):
    """The cyclic collector is off while a patch command runs (it finds nothing there and
    costs a small apply about 2 %), and a caller that stays has it back as it was."""
    import gc

    from hello_tui import cli as cli_module
    from hello_tui.commands import patch_commands

    seen: list[bool] = []
    real = patch_commands.run_history
    monkeypatch.setattr(
        patch_commands, "run_history", lambda args: seen.append(gc.isenabled()) or real(args)
    )
    assert gc.isenabled()
    assert cli_module.main(["history", "--repo", str(repo)]) == 0
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        assert cli_module.main(["history", "--repo", str(repo)]) == 0
        assert not gc.isenabled()  # off before, off after
    finally:
        gc.enable()
    capsys.readouterr()
