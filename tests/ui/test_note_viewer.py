"""The notes viewer shows a note's patch as a fenced, coloured diff, old unfenced notes too."""

from __future__ import annotations

from textual.app import App
from textual.widgets._markdown import MarkdownBulletList, MarkdownHorizontalRule

from hello_tui.screens.note_viewer import NoteFence, NoteViewerScreen, fence_patch_sections

OLD_NOTE = (
    "Task: fix it\n\nFiles:\nM a.txt\n\nHunks applied: 1, declined: 0\n"
    "Backup folder: .helloagents/backups/x (undo with `hello-tui undo`)\n\n"
    "Patch:\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n- item one\n+item two\n ```\n"
)
NEW_NOTE = (
    "Files:\nM a.txt\n\nPatch (what was written):\n```diff\ndiff --git a/a.txt b/a.txt\n"
    "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n```\n"
)


def test_an_old_patch_section_is_fenced_to_the_end_of_the_note():
    shown = fence_patch_sections(OLD_NOTE)
    head, patch = shown.split("Patch:\n", 1)
    assert head == OLD_NOTE.split("Patch:\n", 1)[0]
    # The patch has a " ```" context line: the fence must be longer than it.
    assert patch.startswith("````diff\n--- a/a.txt\n") and patch.endswith(" ```\n````\n")


def test_fenced_and_patchless_notes_are_left_alone():
    assert fence_patch_sections(NEW_NOTE) == NEW_NOTE
    plain = "Why: the mean divides by count - 1.\nPatch: see the next note\n"
    assert fence_patch_sections(plain) == plain
    assert fence_patch_sections("Patch:\n\n") == "Patch:\n\n"


def _styles_of_line(content, line: str) -> set[str]:
    text = content.plain
    start = text.index(line)
    end = start + len(line)
    return {str(s.style) for s in content.spans if s.start < end and s.end > start}


def test_diff_lines_are_coloured():
    code = "@@ -1 +1 @@\n-old\n+new\n context\n"
    content = NoteFence.highlight(code, "diff")
    assert "#9ece6a" in _styles_of_line(content, "+new")
    assert "#f7768e" in _styles_of_line(content, "-old")
    assert "#7aa2f7" in _styles_of_line(content, "@@ -1 +1 @@")
    ansi = NoteFence.highlight(code, "diff", ansi=True, dark=True)
    assert "ansi_green" in _styles_of_line(ansi, "+new")


class _ViewerApp(App[None]):
    def __init__(self, note: str) -> None:
        super().__init__()
        self.note = note

    def on_mount(self) -> None:
        self.push_screen(NoteViewerScreen("Patch applied", self.note, "action"))


async def test_the_viewer_renders_an_old_patch_as_one_diff_block():
    app = _ViewerApp(OLD_NOTE)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        fences = list(screen.query(NoteFence))
        assert len(fences) == 1
        assert fences[0].lexer == "diff"
        assert fences[0].code.startswith("--- a/a.txt\n+++ b/a.txt\n")
        assert "- item one" in fences[0].code
        # Unfenced, "- item one" was a bullet and "+++"/"---" were rules.
        assert not list(screen.query(MarkdownBulletList))
        assert not list(screen.query(MarkdownHorizontalRule))


async def test_the_viewer_colours_a_new_notes_diff():
    app = _ViewerApp(NEW_NOTE)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        (block,) = app.screen.query(NoteFence)
        assert block.code.startswith("diff --git a/a.txt b/a.txt")
        assert "#9ece6a" in _styles_of_line(block._highlighted_code, "+b")


async def test_file_names_in_a_note_are_not_web_links():
    app = _ViewerApp("Files:\n\n- M stats.py\n- A docs/setup.md\n")
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        body = app.screen.query_one("#note-body")
        spans = [s for block in body.query("MarkdownBlock") for s in block._content.spans]
        assert not [s for s in spans if "link" in str(s.style)]
