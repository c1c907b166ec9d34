"""git's rules, one by one: mails, modes, line endings, blank context, fences, quoted paths,
binary data, legacy encodings, context-less hunks, line numbers as hints, and nested
repositories. Each silent-WRONG class the engine once had has its regression test here.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from hello_tui.patch import PatchError, commit_plan, plan_patch_text, select, undo_last
from hello_tui.patch.binary import apply_delta
from hello_tui.patch.blob_ids import blob_id

from .conftest import snapshot, write

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def apply(settings, text: str, **kw):
    plan = plan_patch_text(text, settings, **kw)
    commit_plan(plan, settings)
    return plan


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def git(cwd: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, capture_output=True, check=True)
    return proc.stdout


def history(tmp_path: Path, *states: dict[str, bytes | None]) -> Path:
    """A repository with one commit per state ({path: bytes, or None to delete})."""
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q")
    git(src, "config", "core.autocrlf", "false")
    for n, state in enumerate(states):
        for rel, data in state.items():
            path = src / rel
            if data is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        git(src, "add", "-A")
        git(src, "commit", "-q", "--allow-empty", "-m", f"state {n}\n\nbody --- a/x\n+++ b/x")
    return src


# ---- 1. mail patches ----------------------------------------------------------------


MAIL = """From 3f1c2e9a4b5d6c7e8f90a1b2c3d4e5f60718293a Mon Sep 17 00:00:00 2001
From: A Dev <dev@example.com>
Date: Mon, 1 Jan 2024 00:00:00 +0000
Subject: [PATCH] Change b

A message that quotes diff syntax:
+++ b/f.txt
@@ -1 +1 @@ is how hunks start
```diff
---
 f.txt | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/f.txt b/f.txt
index 1111111..2222222 100644
--- a/f.txt
+++ b/f.txt
@@ -1,3 +1,3 @@
 a
-b
+B
 c
-- 
2.39.5

"""


def test_format_patch_mail_applies_and_its_signature_is_not_a_removed_line(repo, settings):
    write(repo, "f.txt", "a\nb\nc\n")
    plan = apply(settings, MAIL)
    assert (repo / "f.txt").read_bytes() == b"a\nB\nc\n"
    assert [fp.path for fp in plan.files] == ["f.txt"]


def test_commit_message_that_quotes_a_diff_is_not_applied(repo, settings):
    # The message has a hunk header and an open fence: read as patch text, the first is a
    # hunk without a file and the second would swallow the diff.
    write(repo, "f.txt", "a\nb\nc\n")
    plan = plan_patch_text(MAIL, settings)
    assert len(plan.files[0].hunks) == 1


@needs_git
def test_mbox_of_several_mails_applies_in_order_as_one_transaction(repo, settings, tmp_path):
    src = history(
        tmp_path,
        {"f.txt": b"one\ntwo\nthree\n", "g.txt": b"g\n"},
        {"f.txt": b"one\n2\nthree\n"},
        {"f.txt": b"one\n2\n3\n", "h.txt": b"new\n"},
        {"g.txt": None, "f.txt": b"1\n2\n3\n"},
    )
    mbox = git(src, "format-patch", "--stdout", "HEAD~3..HEAD").decode()
    assert mbox.count("\nFrom: ") == 3 and mbox.count("\n-- \n") == 3
    write(repo, "f.txt", "one\ntwo\nthree\n")
    write(repo, "g.txt", "g\n")
    before = snapshot(repo)
    plan = apply(settings, mbox)
    assert sorted(fp.path for fp in plan.files) == ["f.txt", "g.txt", "h.txt"]
    assert (repo / "f.txt").read_bytes() == b"1\n2\n3\n"
    assert (repo / "h.txt").read_bytes() == b"new\n"
    assert not (repo / "g.txt").exists()
    undo_last(settings)  # one transaction: one undo restores all three mails
    assert snapshot(repo) == before


def _reencoded(mbox: bytes, encoding: str) -> str:
    """git's MIME mails with each part re-sent as `encoding` (base64, quoted-printable)."""
    from email import message_from_bytes
    from email.charset import BASE64, QP, Charset
    from email.policy import compat32

    out = []
    for mail in mbox.split(b"\nFrom "):
        envelope, _, rest = mail.partition(b"\n")
        message = message_from_bytes(rest, policy=compat32)
        for part in message.walk():
            if part.is_multipart():
                continue
            charset = Charset("utf-8")
            charset.body_encoding = BASE64 if encoding == "base64" else QP
            body = part.get_payload(decode=True).decode("utf-8")
            del part["Content-Transfer-Encoding"]
            part.set_payload(body, charset)
        out.append(envelope.decode().removeprefix("From ") + "\n" + message.as_string())
    return "".join("From " + mail + "\n" for mail in out)


@needs_git
@pytest.mark.parametrize("style", ["--attach", "--inline", "base64", "quoted-printable"])
def test_mime_multipart_mails_apply_as_git_apply_does(repo, settings, tmp_path, style):
    src = history(
        tmp_path,
        {"f.txt": b"one\ntwo\nthree\n", "g.txt": b"g\n"},
        {"f.txt": b"one\n2\nthree\n", "g.txt": b"G\n"},
        {"f.txt": b"one\n2\n3\n", "h.txt": b"caf\xc3\xa9 = 1\n"},
    )
    option = style if style.startswith("--") else "--attach"
    raw = git(src, "format-patch", option, "--stdout", "HEAD~2..HEAD")
    assert raw.count(b"Content-Type: multipart/mixed") == 2
    mbox = raw.decode()
    if not style.startswith("--"):
        mbox = _reencoded(raw, style)
        assert f"Content-Transfer-Encoding: {style}" in mbox
    write(repo, "f.txt", "one\ntwo\nthree\n")
    write(repo, "g.txt", "g\n")
    apply(settings, mbox)
    assert (repo / "f.txt").read_bytes() == b"one\n2\n3\n"
    assert (repo / "g.txt").read_bytes() == b"G\n"
    assert (repo / "h.txt").read_bytes() == "café = 1\n".encode()


@needs_git
@pytest.mark.parametrize("binary_change", ["delete", "add", "modify"])
def test_a_mime_mail_ending_in_a_binary_patch_applies(repo, settings, tmp_path, binary_change):
    """The blank line that ends the last binary hunk is the part's last line before the
    boundary: the unpacked body must keep it (`git format-patch --attach`)."""
    blob = bytes(range(256)) * 40
    before = {"a.txt": b"a\n"}
    after = {"a.txt": b"A\n"}
    if binary_change != "add":
        before["z.bin"] = blob
    after["z.bin"] = None if binary_change == "delete" else blob[::-1] + b"\x00tail"
    src = history(tmp_path, before, after)
    mbox = git(src, "format-patch", "--attach", "--stdout", "HEAD~1..HEAD").decode()
    assert mbox.rstrip("\n").endswith("--") and "GIT binary patch" in mbox
    for name, data in before.items():
        (repo / name).write_bytes(data)
    apply(settings, mbox)
    assert (repo / "a.txt").read_bytes() == b"A\n"
    if after["z.bin"] is None:
        assert not (repo / "z.bin").exists()
    else:
        assert (repo / "z.bin").read_bytes() == after["z.bin"]


def test_a_failing_later_mail_leaves_every_file_as_it_was(repo, settings):
    write(repo, "f.txt", "a\nb\nc\n")
    second = MAIL.replace("-b\n+B", "-zzz\n+B").replace("Change b", "Change again")
    before = snapshot(repo)
    with pytest.raises(PatchError, match="does not apply to f.txt"):
        apply(settings, MAIL + second)
    assert snapshot(repo) == before


def test_quoted_printable_mail_is_decoded(repo, settings):
    mail = (
        "From 3f1c2e9a4b5d6c7e8f90a1b2c3d4e5f60718293a Mon Sep 17 00:00:00 2001\n"
        "From: A <a@example.com>\nSubject: [PATCH] qp\n"
        "Content-Transfer-Encoding: quoted-printable\n\nmsg\n---\n"
        "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n"
        "@@ -1 +1 @@\n-x =3D 1\n+x =3D 2 caf=C3=A9\n-- \n2.39.5\n"
    )
    write(repo, "f.txt", "x = 1\n")
    apply(settings, mail)
    assert (repo / "f.txt").read_text(encoding="utf-8") == "x = 2 caf\u00e9\n"


# ---- 2. file modes ------------------------------------------------------------------


def test_new_executable_file_is_written_executable(repo, settings):
    apply(
        settings,
        "diff --git a/run.sh b/run.sh\nnew file mode 100755\nindex 0000000..1111111\n"
        "--- /dev/null\n+++ b/run.sh\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+echo hi\n",
    )
    assert mode(repo / "run.sh") & 0o111 == 0o111 & ~os.umask(os.umask(0))
    assert (repo / "run.sh").read_bytes() == b"#!/bin/sh\necho hi\n"


def test_mode_only_diff_changes_the_executable_bit_and_nothing_else(repo, settings):
    write(repo, "tool.py", "print(1)\n").chmod(0o644)
    plan = apply(settings, "diff --git a/tool.py b/tool.py\nold mode 100644\nnew mode 100755\n")
    assert plan.files[0].mode_changed and not plan.files[0].hunks
    assert mode(repo / "tool.py") == 0o755
    assert (repo / "tool.py").read_bytes() == b"print(1)\n"
    undo_last(settings)
    assert mode(repo / "tool.py") == 0o644


def test_mode_change_with_content_change_and_back(repo, settings):
    write(repo, "t.sh", "a\n").chmod(0o755)
    apply(
        settings,
        "diff --git a/t.sh b/t.sh\nold mode 100755\nnew mode 100644\nindex 1..2\n"
        "--- a/t.sh\n+++ b/t.sh\n@@ -1 +1 @@\n-a\n+b\n",
    )
    assert mode(repo / "t.sh") == 0o644 and (repo / "t.sh").read_bytes() == b"b\n"


def test_index_line_mode_alone_keeps_the_file_mode(repo, settings):
    write(repo, "x.sh", "a\n").chmod(0o755)
    apply(
        settings,
        "diff --git a/x.sh b/x.sh\nindex 1..2 100644\n--- a/x.sh\n+++ b/x.sh\n"
        "@@ -1 +1 @@\n-a\n+b\n",
    )
    assert mode(repo / "x.sh") == 0o755


def test_accepting_a_mode_only_file_in_review_keeps_it(repo, settings):
    write(repo, "tool.py", "x\n").chmod(0o644)
    plan = plan_patch_text(
        "diff --git a/tool.py b/tool.py\nold mode 100644\nnew mode 100755\n", settings
    )
    chosen = select(plan, {"tool.py": set()})
    assert [fp.path for fp in chosen.files] == ["tool.py"]
    commit_plan(plan, settings, selection={"tool.py": set()})
    assert mode(repo / "tool.py") == 0o755


@pytest.mark.parametrize("git_mode, what", [("120000", "symbolic link"), ("160000", "submodule")])
def test_symlinks_and_submodules_are_refused(repo, settings, git_mode, what):
    with pytest.raises(PatchError, match=what):
        plan_patch_text(
            f"diff --git a/l b/l\nnew file mode {git_mode}\n--- /dev/null\n+++ b/l\n"
            "@@ -0,0 +1 @@\n+target\n\\ No newline at end of file\n",
            settings,
        )


# ---- 3. line endings exactly as the patch says ----------------------------------------


def test_new_file_with_crlf_lines_stays_crlf(repo, settings):
    apply(settings, "--- /dev/null\n+++ b/w.bat\n@@ -0,0 +1,2 @@\n+@echo off\r\n+exit\r\n")
    assert (repo / "w.bat").read_bytes() == b"@echo off\r\nexit\r\n"


def test_a_line_changed_from_crlf_to_lf_changes_its_ending(repo, settings):
    write(repo, "m.txt", b"a\r\nb\r\nc\r\n")
    apply(settings, "--- a/m.txt\n+++ b/m.txt\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+b\n c\r\n")
    assert (repo / "m.txt").read_bytes() == b"a\r\nb\nc\r\n"


def test_diff_that_lost_its_crs_writes_the_files_crlf(repo, settings):
    # A model's (or an editor's) copy of a diff for a CRLF file carries LF lines only.
    write(repo, "m.txt", b"a\r\nb\r\nc\r\n")
    apply(settings, "--- a/m.txt\n+++ b/m.txt\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n+B2\n c\n")
    assert (repo / "m.txt").read_bytes() == b"a\r\nB\r\nB2\r\nc\r\n"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (b"a\nb\nc\n", b"a\nb\nC"),  # the added last line has no newline
        (b"a\nb\nc", b"a\nB\nc"),  # a context last line without one
        (b"a\r\nb\r\nc\r\n", b"a\r\nb\r\nC"),
        (b"a\nb\nc\n", b"a\nb\nC\r"),  # a CR with no LF after it is text
        # The marker is on the old side: the new lines' CRs are the copy's too (found by
        # the pasted-forms property), whatever the file's own endings could say.
        (b"x", b"xtail\n"),
        (b"a\nb", b"a\nb\nc\n"),
    ],
)
def test_crlf_copy_of_a_diff_with_no_newline_markers(tmp_path, repo, settings, before, after):
    # An editor that saved git's diff with CRLF line ends also ended the `\ No newline`
    # marker with one: git's own diff is the reference for what the files become.
    src = history(tmp_path, {"f.txt": before}, {"f.txt": after})
    lf = git(src, "diff", "HEAD~1", "HEAD")
    assert b"\\ No newline at end of file\n" in lf
    crlf = lf.replace(b"\n", b"\r\n")
    write(repo, "f.txt", before)
    apply(settings, crlf.decode("utf-8"))
    assert (repo / "f.txt").read_bytes() == after


@needs_git
@pytest.mark.parametrize(
    "content",
    [b"one\ntwo\n", b"@echo off\r\nexit\r\n", b"mixed\r\nlf\n", b"last"],
    ids=["lf", "crlf", "mixed", "no-newline"],
)
def test_crlf_copy_of_a_diff_adding_a_file_writes_the_file_its_index_line_names(
    tmp_path, repo, settings, content
):
    # Converting the whole copy to CRLF adds a CR to every line of a new file too; there is
    # no old file to compare with, but git's index line names the blob the file must be.
    src = history(tmp_path, {"a.txt": b"a\n"}, {"a.txt": b"a\n", "new.txt": content})
    lf = git(src, "diff", "HEAD~1", "HEAD")
    assert b"new file mode" in lf and b"\nindex 0000000.." in lf
    write(repo, "a.txt", b"a\n")
    apply(settings, lf.replace(b"\n", b"\r\n").decode("utf-8"))
    assert (repo / "new.txt").read_bytes() == content


def test_lone_cr_inside_a_line_is_text_for_a_unified_diff(repo, settings):
    write(repo, "r.txt", b"a\rb\nc\n")
    apply(settings, "--- a/r.txt\n+++ b/r.txt\n@@ -1,2 +1,2 @@\n a\rb\n-c\n+C\n")
    assert (repo / "r.txt").read_bytes() == b"a\rb\nC\n"


def test_bom_is_matched_added_and_removed_by_a_diff(repo, settings):
    write(repo, "b.txt", "\ufeffone\ntwo\n")
    apply(settings, "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-\ufeffone\n+one\n two\n")
    assert (repo / "b.txt").read_bytes() == b"one\ntwo\n"


# ---- 4. blank context lines without their space ----------------------------------------


def test_blank_context_line_that_ends_a_hunk_keeps_the_next_hunks(repo, settings):
    # Regression: the stripped blank line right before `@@` made every later hunk vanish.
    write(repo, "p.py", "a\nb\n\nc\nd\ne\nf\ng\n\nh\n")
    text = (
        "--- a/p.py\n+++ b/p.py\n"
        "@@ -1,3 +1,3 @@\n a\n-b\n+B\n\n"
        "@@ -7,4 +7,4 @@\n f\n-g\n+G\n \n h\n"
    )
    apply(settings, text)
    assert (repo / "p.py").read_bytes() == b"a\nB\n\nc\nd\ne\nf\nG\n\nh\n"


# ---- 5. fences ---------------------------------------------------------------------


def test_fence_line_inside_a_hunk_belongs_to_the_hunk(repo, settings):
    # Regression: ` ``` ` (context) inside a ```diff block closed the block mid-hunk.
    write(repo, "README.md", "# T\n\n```\ncode\n```\n\nend\n")
    answer = (
        "Here:\n```diff\n--- a/README.md\n+++ b/README.md\n"
        "@@ -2,6 +2,6 @@\n \n ```\n-code\n+better code\n ```\n \n-end\n+the end\n```\nDone.\n"
    )
    apply(settings, answer)
    assert (repo / "README.md").read_text() == "# T\n\n```\nbetter code\n```\n\nthe end\n"


def test_codex_patch_with_a_fence_line_inside_a_fenced_patch(repo, settings):
    write(repo, "R.md", "```\nold\n```\n")
    answer = (
        "```patch\n*** Begin Patch\n*** Update File: R.md\n@@\n ```\n-old\n+new\n ```\n"
        "*** End Patch\n```\n"
    )
    apply(settings, answer)
    assert (repo / "R.md").read_text() == "```\nnew\n```\n"


# ---- 6. quoted paths ----------------------------------------------------------------


@pytest.mark.parametrize(
    "quoted, name",
    [
        ('"b/caf\\303\\251.txt"', "caf\u00e9.txt"),
        ('"b/tab\\there.txt"', "tab\there.txt"),
        ('"b/say \\"hi\\".txt"', 'say "hi".txt'),
        ('"b/back\\\\slash.txt"', "back\\slash.txt"),
    ],
)
def test_c_quoted_paths_are_decoded_as_git_does(repo, settings, quoted, name):
    a_side = quoted.replace('"b/', '"a/', 1)
    apply(
        settings,
        f"diff --git {a_side} {quoted}\nnew file mode 100644\n--- /dev/null\n+++ {quoted}\n"
        "@@ -0,0 +1 @@\n+x\n",
    )
    assert (repo / name).read_bytes() == b"x\n"


def test_unquoted_path_with_spaces_in_the_git_header(repo, settings):
    write(repo, "my dir/a file.txt", "a\n")
    apply(
        settings,
        "diff --git a/my dir/a file.txt b/my dir/a file.txt\nold mode 100644\nnew mode 100755\n",
    )
    assert mode(repo / "my dir/a file.txt") & 0o100


def test_quoted_non_ascii_name_is_not_called_absolute(repo, settings):
    with pytest.raises(PatchError) as err:
        plan_patch_text(
            '--- "a/caf\\303\\251.txt"\n+++ "b/caf\\303\\251.txt"\n@@ -1 +1 @@\n-a\n+b\n', settings
        )
    assert "absolute" not in str(err.value) and "caf\u00e9.txt" in str(err.value)


# ---- 7. binary ----------------------------------------------------------------------


def _literal(data: bytes) -> str:
    """A `GIT binary patch` literal hunk, encoded as git encodes it."""
    packed = zlib.compress(data)
    lines = []
    for k in range(0, len(packed), 52):
        piece = packed[k : k + 52]
        n = len(piece)
        head = chr(ord("A") + n - 1) if n <= 26 else chr(ord("a") + n - 27)
        lines.append(head + base64.b85encode(piece, pad=True).decode())
    return f"literal {len(data)}\n" + "\n".join(lines) + "\n\n"


def test_binary_files_differ_without_data_is_refused_never_an_empty_file(repo, settings):
    # Regression: this wrote a 0-byte file and exited 0.
    before = snapshot(repo)
    with pytest.raises(PatchError, match="carries no data"):
        apply(
            settings,
            "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0000000..1234567\n"
            "Binary files /dev/null and b/logo.png differ\n",
        )
    assert snapshot(repo) == before


def test_git_binary_literal_creates_the_exact_bytes(repo, settings):
    data = bytes(range(256)) * 3
    apply(
        settings,
        "diff --git a/b.bin b/b.bin\nnew file mode 100644\n"
        f"index 0000000000000000000000000000000000000000..{blob_id(data)}\n"
        "GIT binary patch\n" + _literal(data) + _literal(b""),
    )
    assert (repo / "b.bin").read_bytes() == data


def test_binary_literal_whose_result_does_not_match_the_index_is_refused(repo, settings):
    with pytest.raises(PatchError, match="wrong result"):
        plan_patch_text(
            "diff --git a/b.bin b/b.bin\nnew file mode 100644\nindex 0000000..abcdef0\n"
            "GIT binary patch\n" + _literal(b"\x00\x01data"),
            settings,
        )


def test_corrupt_binary_data_is_refused(repo, settings):
    text = "diff --git a/b.bin b/b.bin\nnew file mode 100644\nGIT binary patch\n" + _literal(
        b"\x00abc"
    )
    with pytest.raises(PatchError, match="Corrupt binary patch"):
        plan_patch_text(text.replace("literal 4", "literal 9"), settings)


def test_delta_instructions_copy_and_insert():
    source = b"0123456789abcdef"
    # sizes 16 -> 9; copy 4 bytes at offset 2; insert "XYZ"; copy 2 bytes at offset 14
    delta = bytes([16, 9, 0x91, 2, 4, 3]) + b"XYZ" + bytes([0x91, 14, 2])
    assert apply_delta(source, delta) == b"2345XYZef"


@needs_git
def test_git_binary_delta_modify_delete_and_rename(repo, settings, tmp_path):
    big = bytes(range(256)) * 40
    src = history(
        tmp_path,
        {"img.bin": big, "gone.bin": b"\x00gone", "same.bin": b"\x00same\x01"},
        {"img.bin": big[:5000] + b"\x00changed" + big[5000:], "gone.bin": None},
    )
    git(src, "mv", "same.bin", "moved.bin")
    git(src, "commit", "-q", "-m", "rename")
    diff = git(src, "diff", "--binary", "HEAD~2", "HEAD").decode()
    assert "delta " in diff and "similarity index 100%" in diff
    write(repo, "img.bin", big)
    write(repo, "gone.bin", b"\x00gone")
    write(repo, "same.bin", b"\x00same\x01")
    apply(settings, diff)
    assert (repo / "img.bin").read_bytes() == big[:5000] + b"\x00changed" + big[5000:]
    assert not (repo / "gone.bin").exists()
    assert (repo / "moved.bin").read_bytes() == b"\x00same\x01"
    assert not (repo / "same.bin").exists()


@needs_git
def test_binary_delta_against_another_version_is_refused(repo, settings, tmp_path):
    big = bytes(range(256)) * 40
    src = history(tmp_path, {"img.bin": big}, {"img.bin": big + b"\x00tail"})
    diff = git(src, "diff", "--binary", "HEAD~1", "HEAD").decode()
    write(repo, "img.bin", big[:-1] + b"!")
    with pytest.raises(PatchError, match="another version of img.bin"):
        plan_patch_text(diff, settings)


# ---- 9. legacy encodings -----------------------------------------------------------


def test_latin1_file_is_patched_as_bytes_through_the_command_line(repo, tmp_path):
    # Regression: refused as binary.
    write(repo, "l.txt", "caf\xe9\nna\xefve\n".encode("latin-1"))
    diff = "--- a/l.txt\n+++ b/l.txt\n@@ -1,2 +1,2 @@\n caf\xe9\n-na\xefve\n+r\xe9sum\xe9\n"
    (tmp_path / "p.diff").write_bytes(diff.encode("latin-1"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hello_tui",
            "apply",
            "--yes",
            "--repo",
            str(repo),
            str(tmp_path / "p.diff"),
        ],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (repo / "l.txt").read_bytes() == "caf\xe9\nr\xe9sum\xe9\n".encode("latin-1")


def test_latin1_mismatch_message_shows_the_bytes_and_prints(repo, settings):
    write(repo, "l.txt", "caf\xe9\n".encode("latin-1"))
    text = "--- a/l.txt\n+++ b/l.txt\n@@ -1 +1 @@\n-caf\xe8\n+x\n".encode("latin-1")
    with pytest.raises(PatchError) as err:
        plan_patch_text(text.decode("utf-8", "surrogateescape"), settings)
    message = str(err.value)
    assert "\\xe8" in message and "\\xe9" in message
    message.encode("utf-8")  # no lone surrogates left: printable anywhere


# ---- 10. hunks without context -------------------------------------------------------


def test_pure_addition_claiming_old_lines_is_refused_as_corrupt(repo, settings):
    # Regression: `@@ -1,3 +1,5 @@` with only `+` lines landed after line 1.
    write(repo, "c.txt", "1\n2\n3\n")
    with pytest.raises(PatchError, match="Corrupt hunk") as err:
        plan_patch_text("--- a/c.txt\n+++ b/c.txt\n@@ -1,3 +1,5 @@\n+a\n+b\n+c\n+d\n+e\n", settings)
    assert "@@ -0,0 +1,5 @@" in str(err.value)


def test_pure_addition_goes_after_the_line_its_header_names(repo, settings):
    write(repo, "c.txt", "1\n2\n3\n")
    apply(settings, "--- a/c.txt\n+++ b/c.txt\n@@ -2,0 +3,2 @@\n+a\n+b\n")
    assert (repo / "c.txt").read_text() == "1\n2\na\nb\n3\n"


def test_pure_addition_past_the_end_is_refused(repo, settings):
    write(repo, "c.txt", "1\n")
    with pytest.raises(PatchError, match="the file has 1 lines"):
        plan_patch_text("--- a/c.txt\n+++ b/c.txt\n@@ -5,0 +6 @@\n+a\n", settings)


# ---- 11. line numbers are hints --------------------------------------------------------


def test_nearest_occurrence_to_the_stated_line_wins_and_the_plan_says_so(repo, settings):
    write(repo, "d.txt", "x\ny\nk\n" * 4)  # "x / y" at lines 1, 4, 7, 10
    plan = apply(settings, "--- a/d.txt\n+++ b/d.txt\n@@ -6,2 +6,2 @@\n x\n-y\n+Y\n")
    assert (repo / "d.txt").read_text() == "x\ny\nk\n" * 2 + "x\nY\nk\n" + "x\ny\nk\n"
    assert any("used line 7, the nearest to its stated line 6" in w for w in plan.warnings)


def test_equally_near_occurrences_are_ambiguous(repo, settings):
    write(repo, "d.txt", "x\ny\nz\nw\nx\ny\n")
    with pytest.raises(PatchError, match="equally near"):
        plan_patch_text("--- a/d.txt\n+++ b/d.txt\n@@ -3,2 +3,2 @@\n x\n-y\n+Y\n", settings)


def test_header_lines_of_several_files_without_diff_git_lines_are_refused(repo, settings):
    # Two files' mode lines ran together once their `diff --git` lines were dropped.
    write(repo, "f.txt", "\n")
    write(repo, "g.py", "")
    text = (
        "old mode 100755\nnew mode 100644\nold mode 100755\nnew mode 100644\n"
        "--- a/f.txt\n+++ b/f.txt\n@@ -1 +0,0 @@\n-\n"
    )
    with pytest.raises(PatchError, match="belong to several files"):
        plan_patch_text(text, settings)
    assert (repo / "f.txt").read_text() == "\n"


def test_a_header_with_wrong_counts_cannot_choose_between_occurrences(repo, settings):
    # Counts that do not match the hunk mean its line numbers are not to be trusted
    # either: three blank lines, and a hunk that says line 1 but was made at line 3.
    write(repo, "f.txt", "\n\n\n")
    with pytest.raises(PatchError, match="counts are wrong"):
        plan_patch_text("--- a/f.txt\n+++ b/f.txt\n@@ -1,99 +1,97 @@\n \n+tail\n", settings)
    assert (repo / "f.txt").read_text() == "\n\n\n"


def test_line_numbers_that_disagree_and_pick_different_places_are_ambiguous(repo, settings):
    write(repo, "d.txt", "x\ny\n" + "k\n" * 10 + "x\ny\n")
    with pytest.raises(PatchError, match="line numbers disagree"):
        plan_patch_text("--- a/d.txt\n+++ b/d.txt\n@@ -1,2 +13,2 @@\n x\n-y\n+Y\n", settings)


def test_later_hunks_follow_the_offset_where_earlier_ones_were_found(repo, settings):
    # The file has 3 lines more at the top than the diff's base; hunk 2's lines occur twice.
    write(repo, "o.txt", "n1\nn2\nn3\nA\nB\nC\nx\ny\nx\ny\n")
    apply(
        settings,
        "--- a/o.txt\n+++ b/o.txt\n@@ -1,2 +1,2 @@\n A\n-B\n+b\n@@ -6,2 +6,2 @@\n x\n-y\n+Y\n",
    )
    assert (repo / "o.txt").read_text() == "n1\nn2\nn3\nA\nb\nC\nx\ny\nx\nY\n"


# ---- miscounted hunks ----------------------------------------------------------------


def test_undercounted_hunk_takes_all_its_lines_up_to_the_next_hunk(repo, settings):
    write(repo, "u.txt", "a\nb\nc\nd\ne\nf\n")
    plan = apply(
        settings,
        "--- a/u.txt\n+++ b/u.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n c\n+new\n@@ -5,2 +6,2 @@\n e\n-f\n+F\n",
    )
    assert (repo / "u.txt").read_text() == "a\nB\nc\nnew\nd\ne\nF\n"
    assert any("counts" in w for w in plan.warnings)


def test_counts_decide_where_a_hunk_ends_in_a_model_answer(repo, settings):
    # The counts end the hunk; the list after it is prose, not removed lines.
    write(repo, "v.txt", "a\nb\n")
    apply(settings, "--- a/v.txt\n+++ b/v.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n- a list item\nThanks.")
    assert (repo / "v.txt").read_text() == "a\nB\n"


def test_git_header_lines_without_their_diff_git_line_still_say_what_they_do(repo, settings):
    write(repo, "old.txt", "o\n")
    write(repo, "run.sh", "a\n").chmod(0o644)
    plan = apply(
        settings,
        "old mode 100644\nnew mode 100755\nindex 1..2\n"
        "--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-a\n+b\n"
        "similarity index 100%\nrename from old.txt\nrename to new.txt\n",
    )
    assert (repo / "new.txt").read_text() == "o\n" and not (repo / "old.txt").exists()
    # Mode lines name no file: they may be the last lines of a mode-only file whose
    # `diff --git` line was lost. git ignores them without that line, and so do we.
    assert (repo / "run.sh").read_text() == "b\n" and mode(repo / "run.sh") == 0o644
    assert any("mode line without its 'diff --git' line was ignored" in w for w in plan.warnings)


def test_a_mode_only_file_that_lost_its_diff_git_line_lends_no_mode_to_the_next(repo, settings):
    """git diff of a mode change alone (g.py) then a content change (f.txt), with the
    `diff --git` and `index` lines dropped: the mode lines sit above f.txt's `---`."""
    write(repo, "g.py", "").chmod(0o755)
    write(repo, "f.txt", "\n\n").chmod(0o755)
    apply(
        settings,
        "old mode 100755\nnew mode 100644\n--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +0,0 @@\n-\n-\n",
    )
    assert (repo / "f.txt").read_bytes() == b"" and mode(repo / "f.txt") == 0o755
    assert mode(repo / "g.py") == 0o755


def test_a_new_files_mode_line_without_diff_git_sets_no_mode_as_git(repo, settings):
    """Without `diff --git` lines a `new file mode` line may be an empty new file's, run
    into the next section: git creates the file with its default mode, and so do we."""
    write(repo, "f.txt", "\n").chmod(0o755)
    apply(
        settings,
        "new file mode 100755\n--- /dev/null\n+++ b/dir/g.py\n@@ -0,0 +1 @@\n+\n"
        "old mode 100755\nnew mode 100644\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +0,0 @@\n-\n",
    )
    assert (repo / "dir" / "g.py").read_bytes() == b"\n" and mode(repo / "dir" / "g.py") == 0o644
    assert (repo / "f.txt").read_bytes() == b"" and mode(repo / "f.txt") == 0o755


def test_rename_lines_run_into_another_files_header_are_refused(repo, settings):
    # Without `diff --git` lines nothing separates a rename from the next file's diff.
    write(repo, "keep.txt", "a\n")
    write(repo, "old.txt", "o\n")
    with pytest.raises(PatchError, match="names two old files"):
        plan_patch_text(
            "rename from old.txt\nrename to new.txt\n"
            "--- a/keep.txt\n+++ b/keep.txt\n@@ -1 +1 @@\n-a\n+b\n",
            settings,
        )


def test_a_rename_whose_mode_lines_lost_their_diff_git_line_is_refused(repo, settings):
    """git diff -M of f.txt (0755) renamed to dir/g.py (0644), `diff --git` and `index`
    dropped: the mode lines may be the rename's or a mode-only file's before it."""
    write(repo, "f.txt", "\n--- a/x\n").chmod(0o755)
    patch = (
        "old mode 100755\nnew mode 100644\nsimilarity index 50%\n"
        "rename from f.txt\nrename to dir/g.py\n"
        "--- a/f.txt\n+++ b/dir/g.py\n@@ -1,2 +1 @@\n-\n --- a/x\n"
    )
    with pytest.raises(PatchError, match="mode lines and rename lines without"):
        plan_patch_text(patch, settings)
    assert mode(repo / "f.txt") == 0o755 and not (repo / "dir").exists()
    # With its `diff --git` line the same section is the rename with its mode change.
    apply(settings, "diff --git a/f.txt b/dir/g.py\n" + patch)
    assert (repo / "dir" / "g.py").read_text() == "--- a/x\n"
    assert mode(repo / "dir" / "g.py") == 0o644 and not (repo / "f.txt").exists()


def test_git_header_line_that_names_no_file_is_refused(repo, settings):
    write(repo, "keep.txt", "a\n")
    with pytest.raises(PatchError, match="outside any file section"):
        plan_patch_text(
            "new mode 100755\n\n--- a/keep.txt\n+++ b/keep.txt\n@@ -1 +1 @@\n-a\n+b\n",
            settings,
        )


def test_traditional_diff_with_timestamps_and_epoch_creation(repo, settings):
    write(repo, "t.c", "int x;\n")
    apply(
        settings,
        "--- t.c.orig\t2024-01-01 10:00:00.000000000 +0100\n"
        "+++ t.c\t2024-01-01 10:05:00.000000000 +0100\n@@ -1 +1 @@\n-int x;\n+int y;\n"
        "--- n.c\t1970-01-01 00:00:00.000000000 +0000\n"
        "+++ n.c\t2024-01-01 10:05:00.000000000 +0100\n@@ -0,0 +1 @@\n+new\n",
    )
    assert (repo / "t.c").read_text() == "int y;\n"
    assert (repo / "n.c").read_text() == "new\n"


def test_deleting_a_file_that_holds_more_than_the_diff_shows_is_refused(repo, settings):
    write(repo, "d.txt", "a\nb\nextra\n")
    with pytest.raises(PatchError, match="holds more than the patch shows"):
        plan_patch_text("--- a/d.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n", settings)


@needs_git
def test_git_copy_creates_the_copy_and_keeps_the_source(repo, settings, tmp_path):
    body = "".join(f"line {i}\n" for i in range(30)).encode()
    src = history(tmp_path, {"a.py": body}, {"b.py": body + b"more\n"})
    diff = git(src, "diff", "-C", "--find-copies-harder", "HEAD~1", "HEAD").decode()
    assert "copy from a.py" in diff
    write(repo, "a.py", body)
    apply(settings, diff)
    assert (repo / "a.py").read_bytes() == body
    assert (repo / "b.py").read_bytes() == body + b"more\n"


# ---- 12. Codex `@@ <header>` behind the search position ---------------------------------


CODE = "def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    e = 5\n    f = 6\n    g = 7\n"


def test_second_chunk_under_the_same_function_header_is_placed_by_its_own_lines(repo, settings):
    write(repo, "m.py", CODE)
    plan = apply(
        settings,
        "*** Begin Patch\n*** Update File: m.py\n@@ def f():\n-    a = 1\n+    a = 10\n"
        "@@ def f():\n-    g = 7\n+    g = 70\n*** End Patch\n",
    )
    assert (repo / "m.py").read_text() == CODE.replace("a = 1", "a = 10").replace("g = 7", "g = 70")
    assert any(
        "'@@ def f():' is at line 1, before the end of the previous chunk" in w
        for w in plan.warnings
    )


def test_header_behind_the_search_position_with_ambiguous_lines_says_where_the_header_is(
    repo, settings
):
    write(repo, "m.py", CODE + "    x = 0\n    x = 0\n")
    with pytest.raises(PatchError) as err:
        plan_patch_text(
            "*** Begin Patch\n*** Update File: m.py\n@@ def f():\n-    a = 1\n+    a = 10\n"
            "@@ def f():\n-    x = 0\n+    x = 1\n*** End Patch\n",
            settings,
        )
    message = str(err.value)
    assert "'@@ def f():' is at line 1" in message and "occur 2 times" in message
    assert "was not found" not in message


# ---- 13. errors a model can act on in one step ------------------------------------------


def test_error_names_the_first_differing_line_and_the_column(repo, settings):
    write(repo, "e.py", "def g():\n    return compute(a, b)\n    pass\n")
    with pytest.raises(PatchError) as err:
        plan_patch_text(
            "*** Begin Patch\n*** Update File: e.py\n@@\n def g():\n-    return compute(a, c)\n"
            "+    return 0\n     pass\n*** End Patch\n",
            settings,
        )
    message = str(err.value)
    assert "line 2 of the file" in message
    assert "expected: '    return compute(a, c)'" in message
    assert "found:    '    return compute(a, b)'" in message
    assert "from column 23" in message
    assert "follow the file's order" not in message and "before the end" not in message


def test_error_explains_a_missing_line(repo, settings):
    write(repo, "e.txt", "one\ntwo\nthree\nfour\n")
    with pytest.raises(PatchError, match="leaves out"):
        plan_patch_text(
            "*** Begin Patch\n*** Update File: e.txt\n@@\n one\n three\n-four\n+4\n*** End Patch\n",
            settings,
        )


# ---- nested repositories ----------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        ".GIT/config",
        "sub/.git",
        "sub/.Git/hooks/post-checkout",
        "x/.git./config",
        "GIT~1/config",
        "fixtures/repo.git/config",
        "fixtures/repo.git/hooks/pre-commit",
    ],
)
def test_git_control_files_at_any_depth_are_refused(repo, settings, path):
    with pytest.raises(PatchError, match="Refused"):
        plan_patch_text(f"*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\n", settings)


def test_bare_repository_layout_is_refused_on_disk_and_when_the_patch_makes_it(repo, settings):
    (repo / "fx/objects").mkdir(parents=True)
    (repo / "fx/refs").mkdir(parents=True)
    write(repo, "fx/HEAD", "ref: refs/heads/main\n")
    with pytest.raises(PatchError, match="control folder"):
        plan_patch_text(
            "*** Begin Patch\n*** Add File: fx/config\n+[core]\n*** End Patch\n", settings
        )
    made = (
        "*** Begin Patch\n*** Add File: new/HEAD\n+ref: refs/heads/main\n"
        "*** Add File: new/objects/info/x\n+x\n*** Add File: new/refs/heads/main\n+0\n"
        "*** Add File: new/config\n+[core]\n*** End Patch\n"
    )
    with pytest.raises(PatchError, match="control folder"):
        plan_patch_text(made, settings)
    # An ordinary config/ or hooks/ folder is not a repository.
    plan_patch_text(
        "*** Begin Patch\n*** Add File: config/hooks/app.py\n+x\n*** End Patch\n", settings
    )


# ---- partial acceptance keeps the diff's own bytes ----------------------------------------


def test_accepting_one_hunk_of_a_crlf_diff_writes_exactly_that_hunk(repo, settings):
    write(repo, "w.txt", b"a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\n")
    text = (
        "--- a/w.txt\n+++ b/w.txt\n"
        "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\n"
        "@@ -7,2 +7,3 @@\n g\r\n-h\r\n+H\r\n+i\r\n"
    )
    plan = plan_patch_text(text, settings)
    second = plan.files[0].hunks[1].index
    commit_plan(plan, settings, selection={"w.txt": {second}})
    assert (repo / "w.txt").read_bytes() == b"a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nH\r\ni\r\n"
    undo_last(settings)
    commit_plan(plan_patch_text(text, settings), settings, selection={"w.txt": {0}})
    assert (repo / "w.txt").read_bytes() == b"a\r\nB\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\n"


def test_binary_marker_without_its_header_says_it_is_binary(repo, settings):
    with pytest.raises(PatchError, match="carries no data") as err:
        plan_patch_text("Binary files a/x.png and b/x.png differ\n", settings)
    assert "hunk header" not in str(err.value)


def test_lines_added_to_an_empty_file_go_to_its_top_whatever_the_numbers_say(repo, settings):
    write(repo, "e.py", "")
    apply(settings, "--- a/e.py\n+++ b/e.py\n@@ -13,0 +14,2 @@\n+a\n+b\n")
    assert (repo / "e.py").read_text() == "a\nb\n"
    write(repo, "f.py", "")
    apply(settings, "--- a/f.py\n+++ b/f.py\n@@ -0,8 +1,4 @@\n+a\n")
    assert (repo / "f.py").read_text() == "a\n"


def test_a_diff_that_changes_a_symlink_says_so(repo, settings):
    (repo / "target.txt").write_text("t\n")
    (repo / "link").symlink_to("target.txt")
    with pytest.raises(PatchError, match="symbolic link .mode 120000.; patches do not"):
        plan_patch_text(
            "diff --git a/link b/link\nindex 1..2 120000\n--- a/link\n+++ b/link\n"
            "@@ -1 +1 @@\n-target.txt\n\\ No newline at end of file\n+other.txt\n"
            "\\ No newline at end of file\n",
            settings,
        )


def test_an_empty_files_deletion_run_into_the_next_section_is_refused_with_the_cause(
    repo, settings
):
    write(repo, "empty.txt", "")
    write(repo, "k.txt", "a\n")
    with pytest.raises(PatchError, match="'deleted file mode' but its '\\+\\+\\+' line"):
        plan_patch_text(
            "deleted file mode 100644\nindex e69de29..0000000\nindex 1..2 100644\n"
            "--- a/k.txt\n+++ b/k.txt\n@@ -1 +1 @@\n-a\n+b\n",
            settings,
        )


# ---- coloured diffs pasted from a terminal ----------------------------------------------


COLOUR_BEFORE = {
    "f.py": b"def f():\n    a = 1\n    b = 2\n    c = 3\n    d = 4\n    e = 5\n"
    + b"".join(b"    keep_%d = %d\n" % (n, n) for n in range(12))
    + b"def g():\n    return 0\n",
    "g.txt": b"one\ntwo\n",
}
COLOUR_AFTER = {
    # a block moved (colour-moved paints it), a changed line, trailing white space
    "f.py": b"def f():\n    e = 5  \n"
    + b"".join(b"    keep_%d = %d\n" % (n, n) for n in range(12))
    + b"    a = 1\n    b = 2\n    c = 3\n    d = 4\ndef g():\n    return 1\n",
    "g.txt": b"one\nTWO\n",
}


@needs_git
@pytest.mark.parametrize(
    "options",
    [["--color=always"], ["--color=always", "--color-moved"], ["--color=always", "-U1"]],
)
def test_coloured_git_diff_applies_as_the_plain_one(repo, settings, tmp_path, options):
    src = history(tmp_path, COLOUR_BEFORE, COLOUR_AFTER)
    coloured = git(src, "diff", *options, "HEAD~1", "HEAD")
    assert b"\x1b[32m" in coloured and b"\x1b[1mdiff --git" in coloured
    for rel, data in COLOUR_BEFORE.items():
        write(repo, rel, data)
    apply(settings, coloured.decode())
    assert {rel: (repo / rel).read_bytes() for rel in COLOUR_AFTER} == COLOUR_AFTER


@needs_git
@pytest.mark.parametrize("options", [["--word-diff=color"], ["--color-words"]])
def test_coloured_word_diff_is_refused_saying_why(repo, settings, tmp_path, options):
    src = history(tmp_path, COLOUR_BEFORE, COLOUR_AFTER)
    word_diff = git(src, "diff", "--color=always", *options, "HEAD~1", "HEAD").decode()
    for rel, data in COLOUR_BEFORE.items():
        write(repo, rel, data)
    before = snapshot(repo)
    with pytest.raises(PatchError, match="word diff"):
        plan_patch_text(word_diff, settings)
    assert snapshot(repo) == before


def test_escape_codes_in_an_uncoloured_diff_are_file_text(repo, settings):
    # Only a diff whose own headers are coloured is a colour paste: a script's colour
    # codes inside an ordinary diff are the file's bytes.
    write(repo, "c.sh", "echo start\n")
    apply(
        settings, "--- a/c.sh\n+++ b/c.sh\n@@ -1 +1,2 @@\n echo start\n+echo '\x1b[31mred\x1b[m'\n"
    )
    assert (repo / "c.sh").read_bytes() == b"echo start\necho '\x1b[31mred\x1b[m'\n"


# ---- hunks out of the file's order ------------------------------------------------------


def _shuffled_hunks(diff: bytes, order: list[int]) -> bytes:
    """git's diff of one file with its hunks put in `order`."""
    head, *hunks = diff.split(b"\n@@")
    hunks = [b"@@" + h.rstrip(b"\n") for h in hunks]
    return head + b"\n" + b"\n".join(hunks[k] for k in order) + b"\n"


@needs_git
@pytest.mark.parametrize("order", [[2, 0, 1], [1, 0, 2], [2, 1, 0], [0, 2, 1]])
def test_shuffled_hunks_are_placed_as_git_apply_places_them(repo, settings, tmp_path, order):
    before = b"".join(b"line %d\n" % n for n in range(60)) + b"".join(b"same\n" for _ in range(8))
    after = before.replace(b"line 5\n", b"FIVE\n").replace(b"line 30\n", b"THIRTY\nmore\n")
    after = after.replace(b"line 50\n", b"")
    src = history(tmp_path, {"f.txt": before}, {"f.txt": after})
    shuffled = _shuffled_hunks(git(src, "diff", "HEAD~1", "HEAD"), order)
    assert shuffled.count(b"\n@@ ") == 3
    peer = tmp_path / "peer"
    peer.mkdir()
    (peer / "f.txt").write_bytes(before)
    (tmp_path / "s.diff").write_bytes(shuffled)
    git(peer, "apply", str(tmp_path / "s.diff"))
    write(repo, "f.txt", before)
    plan = apply(settings, shuffled.decode())
    assert (repo / "f.txt").read_bytes() == (peer / "f.txt").read_bytes() == after
    assert any("not in the file's order" in w for w in plan.warnings) == (order != sorted(order))


def test_hunks_in_order_whose_numbers_are_wrong_keep_the_patch_order(repo, settings):
    # The stated numbers say "later hunk first", the lines say otherwise: the patch's own
    # order places them, as before.
    write(repo, "f.txt", "".join(f"l{n}\n" for n in range(40)))
    patch = (
        "--- a/f.txt\n+++ b/f.txt\n@@ -30,3 +30,3 @@\n l4\n-l5\n+L5\n l6\n"
        "@@ -2,3 +2,3 @@\n l34\n-l35\n+L35\n l36\n"
    )
    apply(settings, patch)
    text = (repo / "f.txt").read_text()
    assert "L5\n" in text and "L35\n" in text
