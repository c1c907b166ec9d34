"""Reading back hello-tui's own diffs with unidiff: names, statuses, counts, clipped notes."""

from __future__ import annotations

from hello_tui.patch import commit_plan, plan_file_change, plan_patch_text
from hello_tui.patch.diff_summary import diff_summary, note_patch_summary, written_patch
from hello_tui.patch.notes import MAX_PATCH_IN_NOTE
from hello_tui.patch.written_diff import FileChange, diff_file, render
from hello_tui.store.notes import NoteStore

from .conftest import write


def _summary_of(*changes: FileChange):
    return diff_summary(render([diff_file(c) for c in changes]))


def test_each_file_is_named_as_the_repository_spells_it():
    summary = _summary_of(
        FileChange("caf\u00e9.txt", "caf\u00e9.txt", b"a\nb\n", b"a\nc\nd\n"),
        FileChange("tab\there.txt", "tab\there.txt", None, b"x\n"),
        FileChange("sp ace.md", "sp ace.md", b"gone\n", None),
        FileChange("old name.py", "new name.py", b"same\n" * 9, b"same\n" * 9),
        FileChange("logo.png", "logo.png", b"\x89PNG\0", b"\x89PNG\0\0"),
        FileChange("run.sh", "run.sh", b"echo\n", b"echo\n", 0o644, 0o755),
    )
    assert [f.label() for f in summary.files] == [
        "M café.txt +2 −1",
        "A tab\there.txt +1 −0",
        "D sp ace.md +0 −1",
        "R old name.py -> new name.py +0 −0",
        "M logo.png binary",
        "M run.sh +0 −0",
    ]
    assert summary.complete and summary.line() == "6 files, +3 −2"
    assert summary.hunks == 3


def test_a_line_that_looks_like_a_header_is_still_a_line():
    old = b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n"
    summary = _summary_of(FileChange("f", "f", old, old.replace(b"@@ -1", b"@@ -2")))
    assert [f.label() for f in summary.files] == ["M f +1 −1"]


def test_a_clipped_note_is_read_up_to_its_last_whole_file(repo, settings):
    write(repo, "small.txt", "a\n")
    wide = "-" * 60
    write(repo, "zbig.txt", "".join(f"{n}{wide}\n" for n in range(400)))
    body = "".join(f"+x{n}{wide}\n-{n}{wide}\n" for n in range(400))
    patch = (
        "*** Begin Patch\n*** Update File: small.txt\n@@\n-a\n+b\n"
        "*** Update File: zbig.txt\n@@\n" + body + "*** End Patch\n"
    )
    commit_plan(plan_patch_text(patch, settings, limits=False), settings)
    (note,) = NoteStore(settings.state.notes).list()
    diff = written_patch(note.content)
    assert diff is not None and len(diff) <= MAX_PATCH_IN_NOTE + 200
    summary = note_patch_summary(note.content)
    assert summary is not None and not summary.complete
    assert [f.label() for f in summary.files] == ["M small.txt +1 −1"]
    assert summary.line() == "at least 1 file, +1 −1"


def test_only_a_patch_applied_note_has_a_written_patch(repo, settings):
    write(repo, "a.txt", "a\n")
    commit_plan(plan_file_change(settings, "a.txt", "b\n"), settings)
    (note,) = NoteStore(settings.state.notes).list()
    assert note_patch_summary(note.content) is not None
    # A failed patch's note fences the model's proposal: not a diff hello-tui wrote.
    assert note_patch_summary("Patch (as proposed):\n```diff\n-a\n+b\n```\n") is None
    assert note_patch_summary("Just a note about a.txt") is None
