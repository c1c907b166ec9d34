"""Codex grammar (complete, plus tolerances), unified diffs, and how chunks are matched."""

from __future__ import annotations

import pytest

from hello_tui.patch import PatchError, commit_plan, plan_patch_text

from .conftest import snapshot, write


def apply(settings, text: str):
    plan = plan_patch_text(text, settings)
    commit_plan(plan, settings)
    return plan


def patch(*body: str) -> str:
    return "*** Begin Patch\n" + "\n".join(body) + "\n*** End Patch\n"


# ---- grammar -------------------------------------------------------------


def test_add_delete_update_move_in_one_patch(repo, settings):
    write(repo, "gone.txt", "bye\n")
    write(repo, "keep.txt", "a\nb\n")
    write(repo, "old/name.txt", "x\n")
    apply(
        settings,
        patch(
            "*** Add File: new/dir/n.txt",
            "+hello",
            "+world",
            "*** Delete File: gone.txt",
            "*** Update File: keep.txt",
            "@@",
            " a",
            "-b",
            "+B",
            "*** Update File: old/name.txt",
            "*** Move to: moved/name.txt",
            "@@",
            "-x",
            "+y",
        ),
    )
    assert (repo / "new/dir/n.txt").read_text() == "hello\nworld\n"
    assert not (repo / "gone.txt").exists()
    assert (repo / "keep.txt").read_text() == "a\nB\n"
    assert (repo / "moved/name.txt").read_text() == "y\n"
    assert not (repo / "old/name.txt").exists()


def test_headers_without_stars_and_missing_end_patch(repo, settings):
    write(repo, "f.txt", "one\n")
    apply(settings, "Begin Patch\nUpdate File: f.txt\n@@\n-one\n+two\n")
    assert (repo / "f.txt").read_text() == "two\n"


def test_add_body_without_plus_prefixes(repo, settings):
    apply(settings, patch("*** Add File: n.md", "# Title", "", "- item"))
    assert (repo / "n.md").read_text() == "# Title\n\n- item\n"


def test_add_with_no_newline_marker(repo, settings):
    apply(settings, patch("*** Add File: n.txt", "+a", "+b", "\\ No newline at end of file"))
    assert (repo / "n.txt").read_bytes() == b"a\nb"


def test_whole_file_update_replaces_the_file_and_is_high_risk(repo, settings):
    write(repo, "cfg.toml", "a = 1\nb = 2\n")
    plan = plan_patch_text(patch("*** Update File: cfg.toml", "a = 10", "b = 20"), settings)
    fp = plan.files[0]
    assert fp.whole_file_rewrite
    assert plan.risk.high and any("rewrites the whole of cfg.toml" in r for r in plan.risk.reasons)
    commit_plan(plan, settings)
    assert (repo / "cfg.toml").read_text() == "a = 10\nb = 20\n"


def test_invalid_line_in_chunk_is_an_error_naming_the_line(repo, settings):
    write(repo, "f.py", "a\nb\n")
    with pytest.raises(PatchError, match="line 5"):
        plan_patch_text(patch("*** Update File: f.py", "@@", " a", "b changed", "+c"), settings)


def test_blank_line_inside_chunk_is_context_not_a_chunk_break(repo, settings):
    write(repo, "f.py", "def a():\n    pass\n\ndef b():\n    return 1\n")
    apply(
        settings,
        patch(
            "*** Update File: f.py",
            "@@",
            "     pass",
            "",
            " def b():",
            "-    return 1",
            "+    return 2",
        ),
    )
    assert (repo / "f.py").read_text() == "def a():\n    pass\n\ndef b():\n    return 2\n"


def test_delete_with_minus_body_is_accepted(repo, settings):
    write(repo, "x.txt", "a\n")
    apply(settings, patch("*** Delete File: x.txt", "-a"))
    assert not (repo / "x.txt").exists()


def test_same_file_twice_is_refused(repo, settings):
    write(repo, "x.txt", "a\n")
    with pytest.raises(PatchError, match="more than one section"):
        plan_patch_text(
            patch("*** Update File: x.txt", "-a", "+b", "*** Update File: x.txt", "-b", "+c"),
            settings,
        )


def test_several_patches_in_one_answer_plan_together(repo, settings):
    write(repo, "a.txt", "1\n")
    write(repo, "b.txt", "2\n")
    text = (
        "First\n```patch\n" + patch("*** Update File: a.txt", "-1", "+one") + "```\nand\n"
        "```diff\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-2\n+two\n```\n"
    )
    plan = apply(settings, text)
    assert [f.path for f in plan.files] == ["a.txt", "b.txt"]
    assert (repo / "a.txt").read_text() == "one\n" and (repo / "b.txt").read_text() == "two\n"


# ---- @@ headers ------------------------------------------------------------


SRC = "class A:\n    def load(self):\n        return 1\n\nclass B:\n    def load(self):\n        return 1\n"


def test_ambiguous_chunk_lists_candidate_lines(repo, settings):
    write(repo, "m.py", SRC)
    with pytest.raises(PatchError) as err:
        plan_patch_text(
            patch("*** Update File: m.py", "@@", "-        return 1", "+        return 2"), settings
        )
    assert "ambiguous" in str(err.value) and "lines 3, 7" in str(err.value)
    assert (repo / "m.py").read_text() == SRC


def test_consecutive_headers_narrow_the_search(repo, settings):
    write(repo, "m.py", SRC)
    apply(
        settings,
        patch(
            "*** Update File: m.py",
            "@@ class B:",
            "@@     def load(self):",
            "-        return 1",
            "+        return 2",
        ),
    )
    assert (repo / "m.py").read_text() == SRC.replace("return 1\n", "return 2\n").replace(
        "return 2\n\nclass", "return 1\n\nclass"
    )


def test_header_may_be_a_prefix_of_the_line(repo, settings):
    write(repo, "m.py", "def save(path):\n    pass\ndef load(path, mode='r'):\n    pass\n")
    apply(
        settings,
        patch("*** Update File: m.py", "@@ def load", "-    pass", "+    return open(path)"),
    )
    assert (
        (repo / "m.py").read_text().endswith("def load(path, mode='r'):\n    return open(path)\n")
    )


def test_header_not_found_is_an_error(repo, settings):
    write(repo, "m.py", "x\n")
    with pytest.raises(PatchError, match="'@@ def nowhere' does not occur in the file"):
        plan_patch_text(patch("*** Update File: m.py", "@@ def nowhere", "-x", "+y"), settings)


def test_pure_addition_under_context_header_goes_right_after_it(repo, settings):
    write(repo, "m.py", "import os\n\ndef f():\n    pass\n")
    apply(settings, patch("*** Update File: m.py", "@@ import os", "+import sys"))
    assert (repo / "m.py").read_text() == "import os\nimport sys\n\ndef f():\n    pass\n"


def test_pure_addition_under_bare_header_goes_to_the_end(repo, settings):
    write(repo, "m.txt", "a\nb\n")
    apply(settings, patch("*** Update File: m.txt", "@@", "+c"))
    assert (repo / "m.txt").read_text() == "a\nb\nc\n"


def test_end_of_file_marker_anchors_at_the_end(repo, settings):
    write(repo, "m.txt", "x\ny\nx\n")
    apply(settings, patch("*** Update File: m.txt", "@@", "-x", "+z", "*** End of File"))
    assert (repo / "m.txt").read_text() == "x\ny\nz\n"


# ---- matching passes ---------------------------------------------------------


def test_trailing_whitespace_pass_keeps_file_context_bytes(repo, settings):
    write(repo, "w.txt", "keep   \nold\n")
    apply(settings, patch("*** Update File: w.txt", "@@", " keep", "-old", "+new"))
    assert (repo / "w.txt").read_bytes() == b"keep   \nnew\n"


def test_surrounding_whitespace_pass(repo, settings):
    write(repo, "w.py", "if x:\n\tdo()\n")
    apply(settings, patch("*** Update File: w.py", "@@", " if x:", "-    do()", "+\tdone()"))
    assert (repo / "w.py").read_text() == "if x:\n\tdone()\n"


def test_unicode_punctuation_pass_keeps_typographic_context(repo, settings):
    write(repo, "u.md", "He said \u201chi\u201d \u2014 twice\nold\u00a0line\n")
    apply(
        settings,
        patch("*** Update File: u.md", "@@", ' He said "hi" - twice', "-old line", "+new line"),
    )
    assert (repo / "u.md").read_text() == "He said \u201chi\u201d \u2014 twice\nnew line\n"


def test_exact_match_wins_over_looser_ones(repo, settings):
    write(repo, "e.txt", "x  \nx\n")
    apply(settings, patch("*** Update File: e.txt", "@@", "-x", "+y"))
    assert (repo / "e.txt").read_text() == "x  \ny\n"


def test_no_match_error_shows_expected_lines_and_closest_region(repo, settings):
    write(repo, "c.py", "".join(f"line {i}\n" for i in range(1, 30)))
    before = snapshot(repo)
    with pytest.raises(PatchError) as err:
        plan_patch_text(
            patch("*** Update File: c.py", "@@", " line 10", "-line eleven", " line 12", "+x"),
            settings,
        )
    msg = str(err.value)
    assert "c.py" in msg and "line eleven" in msg
    assert "Closest region, at line 10" in msg and "    11 | line 11" in msg
    assert snapshot(repo) == before


def test_chunks_out_of_order_are_explained(repo, settings):
    write(repo, "o.txt", "a\nb\nc\nd\n")
    with pytest.raises(PatchError, match="before the end of the previous chunk .line 4.; chunks"):
        plan_patch_text(
            patch("*** Update File: o.txt", "@@", "-d", "+D", "@@", "-a", "+A"), settings
        )


def test_chunks_search_forward_from_previous_chunk(repo, settings):
    write(repo, "r.txt", "x\n1\nx\n2\n")
    apply(settings, patch("*** Update File: r.txt", "@@", " 1", "@@", "-x", "+y"))
    assert (repo / "r.txt").read_text() == "x\n1\ny\n2\n"


# ---- line endings, BOM, final newline ------------------------------------------


def test_crlf_file_keeps_crlf_and_new_lines_take_it(repo, settings):
    write(repo, "w.txt", b"a\r\nb\r\n")
    apply(settings, patch("*** Update File: w.txt", "@@", " a", "+ins", "-b", "+B"))
    assert (repo / "w.txt").read_bytes() == b"a\r\nins\r\nB\r\n"


def test_lone_cr_endings_are_lines(repo, settings):
    write(repo, "m.txt", b"a\rb\rc\r")
    apply(settings, patch("*** Update File: m.txt", "@@", "-b", "+B"))
    assert (repo / "m.txt").read_bytes() == b"a\rB\rc\r"


def test_bom_is_kept(repo, settings):
    write(repo, "b.txt", "\ufefffirst\nsecond\n")
    apply(settings, patch("*** Update File: b.txt", "@@", " first", "-second", "+2nd"))
    assert (repo / "b.txt").read_bytes() == "\ufefffirst\n2nd\n".encode()


def test_untouched_last_line_without_newline_stays_so(repo, settings):
    write(repo, "n.txt", "a\nb\nc")
    apply(settings, patch("*** Update File: n.txt", "@@", "-a", "+A"))
    assert (repo / "n.txt").read_bytes() == b"A\nb\nc"


def test_replacing_last_line_keeps_the_missing_final_newline(repo, settings):
    write(repo, "n.txt", "a\nb")
    apply(settings, patch("*** Update File: n.txt", "@@", " a", "-b", "+B"))
    assert (repo / "n.txt").read_bytes() == b"a\nB"


def test_appending_after_a_last_line_without_newline_keeps_it_missing(repo, settings):
    write(repo, "n.txt", "a\nb")
    apply(settings, patch("*** Update File: n.txt", "@@", " b", "+c"))
    assert (repo / "n.txt").read_bytes() == b"a\nb\nc"


def test_no_newline_marker_on_the_old_side_adds_the_final_newline(repo, settings):
    write(repo, "n.txt", "a\nb")
    apply(
        settings,
        patch("*** Update File: n.txt", "@@", " a", "-b", "\\ No newline at end of file", "+B"),
    )
    assert (repo / "n.txt").read_bytes() == b"a\nB\n"


def test_no_newline_marker_removes_final_newline(repo, settings):
    write(repo, "n.txt", "a\nb\n")
    apply(
        settings,
        patch("*** Update File: n.txt", "@@", " a", "-b", "+B", "\\ No newline at end of file"),
    )
    assert (repo / "n.txt").read_bytes() == b"a\nB"


# ---- unified diffs ------------------------------------------------------------


def test_unified_update_add_delete_and_no_newline(repo, settings):
    write(repo, "u.txt", "a\nb\n")
    write(repo, "d.txt", "bye\n")
    apply(
        settings,
        (
            "--- a/u.txt\n+++ b/u.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n"
            "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n"
            "--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
        ),
    )
    assert (repo / "u.txt").read_bytes() == b"a\nc"
    assert (repo / "n.txt").read_text() == "new\n"
    assert not (repo / "d.txt").exists()


def test_unified_rename(repo, settings):
    write(repo, "p.txt", "same\n")
    plan = apply(
        settings,
        "diff --git a/p.txt b/q.txt\nsimilarity index 100%\nrename from p.txt\nrename to q.txt\n",
    )
    assert plan.files[0].op == "move"
    assert (repo / "q.txt").read_text() == "same\n" and not (repo / "p.txt").exists()


def test_unified_line_numbers_pick_among_duplicates(repo, settings):
    write(repo, "dup.txt", "x\ny\nx\ny\n")
    apply(settings, "--- a/dup.txt\n+++ b/dup.txt\n@@ -3,2 +3,2 @@\n x\n-y\n+z\n")
    assert (repo / "dup.txt").read_text() == "x\ny\nx\nz\n"


def test_unified_diff_with_miscounted_header_applies(repo, settings):
    write(repo, "m.txt", "a\nb\nc\n")
    apply(settings, "```diff\n--- a/m.txt\n+++ b/m.txt\n@@ -1,10 +1,12 @@\n a\n-b\n+B\n c\n```\n")
    assert (repo / "m.txt").read_text() == "a\nB\nc\n"


def test_unified_style_header_in_codex_patch_is_a_line_hint(repo, settings):
    write(repo, "h.txt", "x\ny\nx\ny\n")
    apply(settings, patch("*** Update File: h.txt", "@@ -3,2 +3,2 @@", " x", "-y", "+z"))
    assert (repo / "h.txt").read_text() == "x\ny\nx\nz\n"
