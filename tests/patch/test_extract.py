"""Finding patches in model answers: fences, prose, heredocs, missing markers, several patches."""

import pytest

from hello_tui.patch import PatchError, contains_patch, extract_patches
from hello_tui.patch.planner import parse_patch_text

CODEX = "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch\n"


def test_plain_codex_patch_is_found_as_is():
    assert extract_patches(CODEX) == [CODEX]


def test_patch_inside_prose_and_fence():
    text = f"I will fix it.\n\n```patch\n{CODEX}```\n\nDone, run the tests."
    assert extract_patches(text) == [CODEX]


def test_every_patch_in_an_answer_is_found():
    second = CODEX.replace("a.txt", "b.txt")
    text = f"First:\n```diff\n{CODEX}```\nthen\n```\n{second}```\n"
    assert extract_patches(text) == [CODEX, second]


def test_missing_end_patch_stops_at_closing_fence():
    text = "```text\n*** Begin Patch\n*** Add File: n.txt\n+hi\n```\nmore prose\n"
    assert extract_patches(text) == ["*** Begin Patch\n*** Add File: n.txt\n+hi\n"]


def test_heredoc_wrapper_is_stripped():
    text = f"apply_patch <<'EOF'\n{CODEX}EOF\n"
    assert extract_patches(text) == [CODEX]


def test_heredoc_without_end_patch_stops_at_terminator():
    text = "apply_patch <<EOF\n*** Begin Patch\n*** Delete File: x\nEOF\n"
    assert extract_patches(text) == ["*** Begin Patch\n*** Delete File: x\n"]


def test_crlf_patch_text_is_normalised():
    assert extract_patches(CODEX.replace("\n", "\r\n")) == [CODEX]


def test_bare_headers_inside_patch_fence_start_a_patch():
    text = "```patch\nUpdate File: a.txt\n@@\n-x\n+y\n```\n"
    assert extract_patches(text) == ["Update File: a.txt\n@@\n-x\n+y\n"]


def test_bare_header_in_prose_is_not_a_patch():
    assert not contains_patch("Update File: the docs say so.\nThanks")


def test_unified_diff_in_answer_is_kept_byte_for_byte_even_miscounted():
    text = "Here:\n```diff\n--- a/x.py\n+++ b/x.py\n@@ -1,9 +1,9 @@\n a\n-b\n+c\n```\nok"
    assert extract_patches(text) == ["--- a/x.py\n+++ b/x.py\n@@ -1,9 +1,9 @@\n a\n-b\n+c\n"]


def test_unified_diff_blank_context_line_without_space_ends_by_the_counts():
    text = "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n\nThat is all."
    assert extract_patches(text) == ["--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n"]


def test_crlf_unified_diff_keeps_its_crs():
    text = "--- a/x\r\n+++ b/x\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n"
    assert extract_patches(text) == [text]


def test_git_diff_with_rename_header():
    text = "diff --git a/p.txt b/q.txt\nsimilarity index 100%\nrename from p.txt\nrename to q.txt\n"
    assert extract_patches(text) == [text]


def test_contains_patch():
    assert contains_patch(f"x\n{CODEX}")
    assert not contains_patch("just an answer with - a list\n+ and a plus")


def test_a_hunk_header_quoted_in_prose_is_not_a_patch_but_applying_it_says_why():
    text = "The header\n@@ -1,2 +1,3 @@\nmeans one line was added."
    assert not contains_patch(text)
    with pytest.raises(PatchError, match="no file header before it"):
        parse_patch_text(text)
