"""The "Patch applied" note records the git diff of exactly what was written.

Each case commits a patch (often with hunks or files declined), then checks the
note's fenced diff against git itself: `git diff --binary` of the same change
(byte for byte where git's own diff is unambiguous) and `git apply -R`, which
must turn the new tree back into the old one.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hello_tui.core.approval import PatchDecision
from hello_tui.core.tools import ToolContext
from hello_tui.patch import (
    PatchError,
    commit_plan,
    plan_file_change,
    plan_patch_text,
    replan_with_edits,
)
from hello_tui.patch.blob_ids import blob_id
from hello_tui.patch.commit import note_failure
from hello_tui.patch.notes import MAX_PATCH_IN_NOTE, fence
from hello_tui.patch.written_diff import quote_path, written_diff
from hello_tui.store.notes import NoteStore
from hello_tui.tools.writes import ApplyPatchTool
from tests.support.work import lines_run

from .conftest import snapshot, write
from .git_runner import git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def baseline(repo: Path) -> None:
    """The tree before the patch, committed, with the state folder ignored."""
    git(repo, "init", "-q")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text(".helloagents/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "before")


def git_diff(repo: Path) -> str:
    git(repo, "add", "-A")
    out = git(repo, "diff", "--cached", "--binary", "-M", "HEAD").stdout
    return out.decode("utf-8", "surrogateescape")


def note_diff(settings) -> str:
    """The fenced diff of the newest "Patch applied" note, read from the file as written."""
    notes = [n for n in NoteStore(settings.state.notes).list() if n.title == "Patch applied"]
    assert notes, "no Patch applied note"
    raw = notes[0].path.read_bytes().decode("utf-8")  # bytes: keep any CR of the diff
    found = re.search(r"^(`{3,})diff\n(.*?)^\1$", raw, re.DOTALL | re.MULTILINE)
    assert found, raw
    return found.group(2)


def reverse_applies(repo: Path, diff: str, before: dict) -> None:
    """`git apply -R` of the note's diff on the new tree gives back the old tree exactly."""
    (repo.parent / "note.diff").write_bytes(diff.encode("utf-8", "surrogateescape"))
    check = git(repo, "apply", "--check", "-R", str(repo.parent / "note.diff"), check=False)
    assert check.returncode == 0, check.stderr.decode()
    git(repo, "apply", "-R", str(repo.parent / "note.diff"))
    assert tree(repo) == before


def tree(repo: Path) -> dict:
    return {k: v for k, v in snapshot(repo).items() if not k.startswith(".git")}


TEN = "".join(f"line {n}\n" for n in range(1, 21))


def test_a_declined_hunk_is_not_in_the_note(repo, settings):
    write(repo, "calc.py", "def mean(xs):\n" + TEN + "def total(xs):\n    return 0\n")
    baseline(repo)
    before = tree(repo)
    patch = (
        "*** Begin Patch\n*** Update File: calc.py\n@@\n line 2\n-line 3\n+LINE THREE\n"
        "@@\n def total(xs):\n-    return 0\n+    return sum(xs)\n*** End Patch\n"
    )
    plan = plan_patch_text(patch, settings)
    assert len(plan.files[0].hunks) == 2
    commit_plan(plan, settings, selection={"calc.py": {1}})
    diff = note_diff(settings)
    assert "sum(xs)" in diff and "LINE THREE" not in diff
    assert diff == git_diff(repo)
    assert "@@ -20,4 +20,4 @@ line 18\n" in diff  # git's numbering and function context
    reverse_applies(repo, diff, before)


def test_the_note_is_not_the_proposal_when_a_file_is_declined(repo, settings):
    write(repo, "a.txt", "a\n")
    baseline(repo)
    before = tree(repo)
    patch = (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n"
        "*** Add File: b.txt\n+new\n*** End Patch\n"
    )
    commit_plan(plan_patch_text(patch, settings), settings, selection={"b.txt": {0}})
    diff = note_diff(settings)
    assert "a.txt" not in diff
    assert diff == git_diff(repo)
    reverse_applies(repo, diff, before)


def test_hunks_six_lines_apart_share_one_hunk_seven_do_not(repo, settings):
    body = [f"l{n}\n" for n in range(1, 40)]
    write(repo, "m.txt", "".join(body))
    baseline(repo)
    before = tree(repo)
    new = list(body)
    new[4] = "L5\n"
    new[11] = "L12\n"  # 6 unchanged lines between: one hunk
    new[26] = "L27\n"  # 7 unchanged lines after L19: a second hunk
    new[19] = "L20\n"
    commit_plan(plan_file_change(settings, "m.txt", "".join(new)), settings)
    diff = note_diff(settings)
    assert diff == git_diff(repo)
    assert diff.count("\n@@ ") == 2
    reverse_applies(repo, diff, before)


def test_pure_insertion_and_single_line_ranges_are_numbered_as_git_does(repo, settings):
    write(repo, "p.txt", "".join(f"{n}\n" for n in range(1, 30)))
    baseline(repo)
    before = tree(repo)
    patch = (
        "diff --git a/p.txt b/p.txt\n--- a/p.txt\n+++ b/p.txt\n"
        "@@ -12,2 +12,4 @@\n 12\n 13\n+new a\n+new b\n"
    )
    commit_plan(plan_patch_text(patch, settings), settings)
    diff = note_diff(settings)
    assert "@@ -11,6 +11,8 @@" in diff
    assert diff == git_diff(repo)
    reverse_applies(repo, diff, before)


def test_crlf_no_final_newline_and_user_edits(repo, settings):
    write(repo, "w.txt", b"one\r\ntwo\r\nthree")
    baseline(repo)
    before = tree(repo)
    plan = plan_patch_text(
        "*** Begin Patch\n*** Update File: w.txt\n@@\n-two\n+TWO\n*** End Patch\n", settings
    )
    plan = replan_with_edits(plan, settings, {"w.txt": "one\r\n2\r\nthree\r\nfour"})
    commit_plan(plan, settings)
    diff = note_diff(settings)
    assert "\\ No newline at end of file" in diff and "+2\r\n" in diff and "TWO" not in diff
    assert diff == git_diff(repo)
    reverse_applies(repo, diff, before)


def test_add_delete_empty_mode_and_rename(repo, settings):
    write(repo, "gone.txt", "bye\n")
    write(repo, "run.sh", "echo hi\n")
    write(repo, "old name.txt", "same\n")
    write(repo, "café.txt", "x\n")
    baseline(repo)
    before = tree(repo)
    patch = (
        "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n"
        "+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
        "diff --git a/empty.txt b/empty.txt\nnew file mode 100644\n"
        "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
        'diff --git "a/old name.txt" "b/new name.txt"\nsimilarity index 100%\n'
        "rename from old name.txt\nrename to new name.txt\n"
        'diff --git "a/caf\\303\\251.txt" "b/caf\\303\\251.txt"\n'
        '--- "a/caf\\303\\251.txt"\n+++ "b/caf\\303\\251.txt"\n@@ -1 +1 @@\n-x\n+y\n'
    )
    commit_plan(plan_patch_text(patch, settings), settings)
    diff = note_diff(settings)
    assert "deleted file mode 100644" in diff
    assert "new file mode 100644\nindex 0000000..e69de29\n" in diff
    assert "old mode 100644\nnew mode 100755\n" in diff
    assert "rename from old name.txt\nrename to new name.txt\n" in diff
    assert '"a/caf\\303\\251.txt"' in diff
    assert "similarity index 100%\nrename from old name.txt\n" in diff
    assert diff == git_diff(repo)
    reverse_applies(repo, diff, before)
    assert not os.access(repo / "run.sh", os.X_OK)


def test_binary_files_are_recorded_as_git_binary_literals(repo, settings):
    old = bytes(range(256)) * 3
    write(repo, "blob.bin", old)
    baseline(repo)
    before = tree(repo)
    new = b"\0new" + bytes(range(200))
    git_text = git_diff_of_bytes(repo, "blob.bin", new)
    commit_plan(plan_patch_text(git_text, settings), settings)
    assert (repo / "blob.bin").read_bytes() == new
    diff = note_diff(settings)
    assert f"index {blob_id(old)}..{blob_id(new)} 100644\nGIT binary patch\n" in diff
    assert f"literal {len(new)}\n" in diff and f"literal {len(old)}\n" in diff
    reverse_applies(repo, diff, before)


def git_diff_of_bytes(repo: Path, rel: str, new: bytes) -> str:
    """A `git diff --binary` patch turning rel into `new`, with the tree left as it was."""
    path = repo / rel
    old = path.read_bytes()
    path.write_bytes(new)
    text = git(repo, "diff", "--binary", "--", rel).stdout.decode()
    path.write_bytes(old)
    return text


def test_quote_path_follows_git():
    assert quote_path("plain/x.py") == "plain/x.py"
    assert quote_path("tab\there") == '"tab\\there"'
    assert quote_path('say "hi"') == '"say \\"hi\\""'
    assert quote_path("é") == '"\\303\\251"'


def test_fence_outlasts_backtick_runs_in_the_text():
    text = " ```\n+````py\n"
    fenced = fence(text)
    assert fenced.startswith("````diff\n") and fenced.endswith("\n````")
    assert fence("+x\n") == "```diff\n+x\n```"


def test_a_huge_diff_is_clipped_at_a_line_end(repo, settings):
    wide = "-" * 60
    write(repo, "big.txt", "".join(f"{n}{wide}\n" for n in range(350)))
    baseline(repo)
    new_text = "".join(f"x{n}{wide}\n" for n in range(350))
    commit_plan(plan_file_change(settings, "big.txt", new_text), settings)
    diff = note_diff(settings)
    assert len(diff) < MAX_PATCH_IN_NOTE + 200
    body, last = diff.rstrip("\n").rsplit("\n", 1)
    assert last.startswith("… (truncated after ")
    assert re.fullmatch(r"[ +\-@].*", body.rsplit("\n", 1)[1])


class _Decides:
    """An approver that accepts with a fixed selection (what the review screen returns)."""

    def __init__(self, decision: PatchDecision) -> None:
        self.decision = decision

    async def review_patch(self, plan) -> PatchDecision:
        return self.decision

    async def approve_command(self, command: str, reason: str) -> str:
        return "deny"


TWO_HUNKS = (
    "*** Begin Patch\n*** Update File: calc.py\n@@\n line 2\n-line 3\n+LINE THREE\n"
    "@@\n line 19\n-line 20\n+LINE TWENTY\n*** End Patch\n"
)


async def test_the_tool_door_records_only_the_accepted_hunk(repo, settings):
    write(repo, "calc.py", TEN)
    baseline(repo)
    before = tree(repo)
    ctx = ToolContext(
        settings=settings,
        approver=_Decides(PatchDecision(accepted=True, selection={"calc.py": {0}})),
        emit=lambda event: None,
        call_id="c1",
        user_task="fix",
    )
    result = await ApplyPatchTool().run(ApplyPatchTool.Args(patch=TWO_HUNKS), ctx)
    assert result.status == "partial", result.text
    diff = note_diff(settings)
    assert "LINE THREE" in diff and "LINE TWENTY" not in diff
    assert diff == git_diff(repo)
    reverse_applies(repo, diff, before)


def test_hello_tui_apply_records_the_written_diff(repo, settings, tmp_path):
    write(repo, "calc.py", TEN)
    baseline(repo)
    before = tree(repo)
    (tmp_path / "p.patch").write_text(TWO_HUNKS)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hello_tui",
            "apply",
            "--repo",
            str(repo),
            str(tmp_path / "p.patch"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    diff = note_diff(settings)
    assert diff == git_diff(repo) and "LINE TWENTY" in diff
    reverse_applies(repo, diff, before)


def test_a_file_in_a_legacy_encoding_still_gets_its_note(repo, settings):
    write(repo, "latin.txt", b"caf\xe9\nline2\n")
    patch = "*** Begin Patch\n*** Update File: latin.txt\n@@\n-line2\n+LINE2\n*** End Patch\n"
    result = commit_plan(plan_patch_text(patch, settings), settings)
    assert result.note_id is not None
    diff = note_diff(settings)
    assert " caf\\xe9\n-line2\n+LINE2\n" in diff


def test_a_rename_with_a_mode_and_content_change(repo, settings):
    write(repo, "x", "a\nb\nc\nd\ne\nf\n")
    baseline(repo)
    before = tree(repo)
    patch = (
        "diff --git a/x b/y\nold mode 100644\nnew mode 100755\nsimilarity index 83%\n"
        "rename from x\nrename to y\n--- a/x\n+++ b/y\n@@ -6 +6 @@\n-f\n+F\n"
    )
    commit_plan(plan_patch_text(patch, settings), settings)
    diff = note_diff(settings)
    assert "similarity index 83%\n" in diff  # git's own estimate of the likeness
    assert diff == git_diff(repo)
    reverse_applies(repo, diff, before)
    assert not (repo / "y").exists() and (repo / "x").read_text().endswith("f\n")


@pytest.mark.parametrize("seed", range(40))
def test_random_edits_and_selections_round_trip_through_git(repo, settings, seed):
    """Repeated lines, CRLF, missing final newlines, any subset of hunks: the note's diff
    applies forward to the old tree and backward to the new one, both by git's rules."""
    rng = random.Random(seed)
    words = ["a", "b", "", "x = 1", "}", "def f():"]
    eols = ["\n", "\n", "\n", "\r\n"]

    def text(n: int) -> str:
        out = "".join(rng.choice(words) + rng.choice(eols) for _ in range(n))
        return out[:-1] if rng.random() < 0.3 else out

    old = text(rng.randint(0, 40))
    write(repo, "f.txt", old)
    baseline(repo)
    before = tree(repo)
    lines = old.splitlines(keepends=True)
    for _ in range(rng.randint(1, 6)):
        at = rng.randint(0, len(lines))
        lines[at : at + rng.randint(0, 3)] = [rng.choice(words) + "\n"] * rng.randint(0, 3)
    new = "".join(lines)
    if new == old:
        new = old + "tail\n"
    plan = plan_file_change(settings, "f.txt", new)
    hunks = {h.index for h in plan.files[0].hunks}
    keep = {i for i in hunks if rng.random() < 0.6} or {min(hunks)}
    commit_plan(plan, settings, selection={"f.txt": keep})
    written = (repo / "f.txt").read_bytes()
    diff = note_diff(settings)
    reverse_applies(repo, diff, before)
    git(repo, "apply", str(repo.parent / "note.diff"))
    assert (repo / "f.txt").read_bytes() == written


def test_a_failed_patch_note_fences_the_proposal(repo, settings):
    write(repo, "a.txt", "a\n")
    bad = "*** Begin Patch\n*** Update File: a.txt\n@@\n-not there\n+x\n ```\n*** End Patch\n"
    with pytest.raises(PatchError) as failed:
        plan_patch_text(bad, settings)
    note_failure(settings, str(failed.value), bad, "fix a")  # what `hello-tui apply` does
    (note,) = [n for n in NoteStore(settings.state.notes).list() if n.title == "Patch failed"]
    assert "Patch (as proposed):\n````diff\n*** Begin Patch\n" in note.content
    assert note.content.endswith(" ```\n*** End Patch\n````\n")


def test_function_context_matches_git_byte_for_byte(repo, settings):
    # git's rule (xdiff def_ff): the nearest old line above the hunk that starts with an
    # ASCII letter, `_` or `$`, cut at 80 bytes, trailing white space dropped; a hunk whose
    # stretch since the previous hunk holds none keeps the previous hunk's line.
    long_def = "def " + "very_long_name_" * 8 + "(x):   \t"
    lines = ["# header comment", long_def]
    lines += [f"    body_{n} = {n}" for n in range(40)]
    lines += ["$dollar_line = 1", "    deep = 1", "_private = 2", "é_not_ascii = 3"]
    lines += [f"        nested_{n} = {n}" for n in range(60)]
    lines += ["\tTabbed = 1"] + [f"    tail_{n}" for n in range(30)]
    write(repo, "f.py", "\n".join(lines) + "\n")
    baseline(repo)
    before = tree(repo)
    new = list(lines)
    for k in (5, 20, 38, 44, 47, 60, 80, 100, 104, 130):
        new[k] = new[k] + "  # changed"
    commit_plan(plan_file_change(settings, "f.py", "\n".join(new) + "\n"), settings)
    diff = note_diff(settings)
    assert diff == git_diff(repo)
    assert " @@ _private = 2\n" in diff
    reverse_applies(repo, diff, before)


def _written_diff_steps(settings, n_lines: int) -> int:
    """Lines run to write the diff of one indented file with a hunk per 100 lines."""
    old = [f"    value_{i} = {i}" for i in range(n_lines)]
    new = [line + " # x" if i % 100 == 50 else line for i, line in enumerate(old)]
    write(settings.repo, "big.py", "\n".join(old) + "\n")
    plan = plan_file_change(settings, "big.py", "\n".join(new) + "\n")
    return lines_run(lambda: written_diff(plan))


def test_function_context_costs_linear_time_in_indented_files(settings):
    # Scanning back to the top of the file for every hunk made this quadratic: a file
    # four times longer (with four times the hunks) cost sixteen times the work.
    small = _written_diff_steps(settings, 2_000)
    large = _written_diff_steps(settings, 8_000)
    assert large < 6 * small


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("a\n", "b\n"),  # git: @@ -1 +1 @@
        ("a\nb\n", "a\n"),  # @@ -1,2 +1 @@
        ("a\n", "x\na\n"),
        ("a\nb\nc", "a\nb\nC"),
        ("", "new\n"),
    ],
)
def test_two_texts_are_diffed_as_git_does(repo, old, new):
    from hello_tui.patch.written_diff import text_diff

    write(repo, "f.txt", old)
    baseline(repo)
    write(repo, "f.txt", new)
    theirs = git(repo, "diff", "--", "f.txt").stdout.decode()
    assert text_diff("f.txt", old, new) == theirs
