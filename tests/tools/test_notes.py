"""NoteStore and the `note` tool: format, round trips, ids, recovery from corrupt files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from hello_tui.store.notes import NOTE_TYPES, NoteError, NoteStore


@pytest.fixture
def store(tmp_path: Path) -> NoteStore:
    return NoteStore(tmp_path / "notes")


def test_create_writes_front_matter_heading_and_index(store: NoteStore):
    note = store.create("Fix the parser", "The bug is in line 3.", "conclusion", ["parser", "bug"])
    text = note.path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    front = yaml.safe_load(text.split("\n---\n")[0][4:])
    assert front["id"] == note.id
    assert front["title"] == "Fix the parser"
    assert front["type"] == "conclusion"
    assert front["tags"] == ["parser", "bug"]
    assert front["created_at"] == note.created_at and front["updated_at"] == note.updated_at
    assert "\n# Fix the parser\n\nThe bug is in line 3." in text
    index = json.loads((store.notes_dir / "notes_index.json").read_text(encoding="utf-8"))
    assert index["notes"][note.id]["title"] == "Fix the parser"
    assert index["notes"][note.id]["file"] == f"{note.id}.md"
    assert note.path == store.notes_dir / f"{note.id}.md"


def test_read_returns_what_was_created(store: NoteStore):
    note = store.create("t", "line 1\nline 2\n", "task_state", ["a"])
    again = store.read(note.id)
    assert (again.title, again.content, again.note_type, again.tags) == (
        "t",
        "line 1\nline 2\n",
        "task_state",
        ["a"],
    )


def test_crlf_lines_in_the_content_come_back_with_their_cr(store: NoteStore):
    # A patch of a CRLF file recorded in a note must still apply when read back.
    diff = "```diff\n@@ -1 +1 @@\n-old\r\n+new\r\n```\n"
    note = store.create("Patch applied", diff, "action", [])
    assert store.read(note.id).content == diff
    assert [n.content for n in store.list() if n.id == note.id] == [diff]


@pytest.mark.parametrize(
    "title",
    [
        'He said "hi"',
        "it's: a colon: here",
        "---",
        "before\n---\nafter",
        "multi\nline\ntitle",
        "中文标题：测试",
        "# hash and - dash",
        "yes",
        "null",
        "123",
        "  leading and trailing  ",
        "{braces: [1, 2]}",
    ],
)
def test_tricky_titles_round_trip(store: NoteStore, title: str):
    note = store.create(title, "body\n---\nmore", "general", [title, "tag: x", '"q"'])
    again = store.read(note.id)
    assert again.title == title
    assert again.content == "body\n---\nmore"
    assert again.tags == [title.strip(), "tag: x", '"q"']


@hsettings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    title=st.text(min_size=1, max_size=40).filter(lambda s: s.strip()),
    content=st.text(max_size=80),
    tags=st.lists(st.text(min_size=1, max_size=10).filter(lambda s: s.strip()), max_size=3),
)
def test_round_trip_property(tmp_path_factory, title: str, content: str, tags: list[str]):
    # Carriage returns and other line breaks are normalised by text files; keep to "\n".
    def plain(s: str) -> str:
        return "".join(ch for ch in s if ch == "\n" or (ch.isprintable() and ch != "\r"))

    title = plain(title) if plain(title).strip() else "x"  # a blank title is refused by design
    content = plain(content)
    tags = [plain(t) for t in tags if plain(t).strip()]
    store = NoteStore(tmp_path_factory.mktemp("n"))
    note = store.create(title, content, "reference", tags)
    again = store.read(note.id)
    assert again.title == title
    assert again.content == content
    assert again.tags == list(dict.fromkeys(t.strip() for t in tags))


def test_ids_never_collide(store: NoteStore):
    ids = {store.create(f"n{i}", "c").id for i in range(30)}
    assert len(ids) == 30
    assert len(list(store.notes_dir.glob("note_*.md"))) == 30


def test_unknown_type_lists_the_six_types(store: NoteStore):
    with pytest.raises(NoteError) as err:
        store.create("t", "c", "todo")
    for t in NOTE_TYPES:
        assert t in str(err.value)
    assert not store.notes_dir.exists() or not list(store.notes_dir.glob("*.md"))


def test_update_changes_fields_and_updated_at(store: NoteStore):
    note = store.create("old", "old body", "general", ["x"])
    updated = store.update(note.id, title="new", content="new body", note_type="blocker", tags=[])
    assert updated.updated_at > note.updated_at
    again = store.read(note.id)
    assert (again.title, again.content, again.note_type, again.tags) == (
        "new",
        "new body",
        "blocker",
        [],
    )
    assert again.created_at == note.created_at
    index = json.loads(store.index_path.read_text(encoding="utf-8"))
    assert index["notes"][note.id]["title"] == "new"


def test_update_keeps_unspecified_fields(store: NoteStore):
    note = store.create("keep", "body", "action", ["t"])
    store.update(note.id, content="changed")
    again = store.read(note.id)
    assert (again.title, again.note_type, again.tags, again.content) == (
        "keep",
        "action",
        ["t"],
        "changed",
    )


def test_update_with_bad_type_changes_nothing(store: NoteStore):
    note = store.create("t", "body")
    before = note.path.read_bytes()
    with pytest.raises(NoteError, match="task_state"):
        store.update(note.id, note_type="nope", content="x")
    assert note.path.read_bytes() == before


def test_delete_removes_file_and_index_entry(store: NoteStore):
    a = store.create("a", "1")
    b = store.create("b", "2")
    store.delete(a.id)
    assert not a.path.exists()
    index = json.loads(store.index_path.read_text(encoding="utf-8"))
    assert list(index["notes"]) == [b.id]
    with pytest.raises(NoteError, match="No note"):
        store.delete(a.id)


def test_missing_and_malicious_ids_are_clear_errors(store: NoteStore, tmp_path: Path):
    secret = tmp_path / "secret.md"
    secret.write_text("---\nid: x\n---\n", encoding="utf-8")
    with pytest.raises(NoteError, match="No note"):
        store.read("note_20240101_120000_abcdef")
    for bad in ("../secret", "../../etc/passwd", "note_1/../../secret", ""):
        with pytest.raises(NoteError, match="Invalid note id"):
            store.read(bad)
        with pytest.raises(NoteError, match="Invalid note id"):
            store.delete(bad)
    assert secret.exists()


def test_list_newest_first_filter_and_limit(store: NoteStore):
    a = store.create("a", "", "general")
    b = store.create("b", "", "blocker")
    c = store.create("c", "", "general")
    assert [n.id for n in store.list()] == [c.id, b.id, a.id]
    assert [n.id for n in store.list(note_type="general")] == [c.id, a.id]
    assert [n.id for n in store.list(limit=2)] == [c.id, b.id]
    with pytest.raises(NoteError):
        store.list(note_type="bogus")


def test_empty_store(tmp_path: Path):
    store = NoteStore(tmp_path / "missing")
    assert store.list() == []
    assert store.search("x") == []
    assert store.summary() == "No notes yet."
    assert not (tmp_path / "missing").exists()


def test_corrupt_note_is_skipped_and_index_rebuilt(store: NoteStore):
    good = store.create("good", "fine")
    (store.notes_dir / "note_20200101_000000_deadbeef.md").write_text(
        "---\nid: [unclosed\n", encoding="utf-8"
    )
    (store.notes_dir / "note_20200101_000001_deadbeef.md").write_bytes(b"\xff\xfe garbage")
    store.index_path.write_text("{not json", encoding="utf-8")
    notes = store.list()
    assert [n.id for n in notes] == [good.id]
    index = json.loads(store.index_path.read_text(encoding="utf-8"))
    assert list(index["notes"]) == [good.id]
    assert any("skipped" in w for w in store.warnings)
    assert [n.id for n in store.search("fine")] == [good.id]


def test_index_pointing_at_deleted_file_is_rebuilt(store: NoteStore):
    a = store.create("a", "x")
    b = store.create("b", "y")
    a.path.unlink()  # removed behind the store's back
    assert [n.id for n in store.list()] == [b.id]
    index = json.loads(store.index_path.read_text(encoding="utf-8"))
    assert list(index["notes"]) == [b.id]


def test_hand_written_note_with_yaml_dates_is_read(store: NoteStore):
    store.notes_dir.mkdir(parents=True)
    path = store.notes_dir / "note_20240101_120000_abcdef.md"
    path.write_text(
        "---\nid: note_20240101_120000_abcdef\ntitle: hand\ntype: weird\ntags: solo\n"
        "created_at: 2024-01-01 12:00:00\n---\n\n# hand\n\nwritten by a person\n",
        encoding="utf-8",
    )
    note = store.read("note_20240101_120000_abcdef")
    assert note.note_type == "general"
    assert note.tags == ["solo"]
    assert note.content == "written by a person\n"
    assert note.created_at.startswith("2024-01-01")


def test_search_ranks_title_over_content_and_handles_chinese(store: NoteStore):
    in_content = store.create("misc", "the cache invalidation is broken")
    in_title = store.create("cache invalidation", "details")
    store.create("unrelated", "nothing here")
    chinese = store.create("缓存失效", "文件修改后缓存没有失效")
    assert [n.id for n in store.search("cache invalidation")] == [in_title.id, in_content.id]
    assert [n.id for n in store.search("缓存")] == [chinese.id]
    assert store.search("CACHE", limit=1)[0].id == in_title.id
    assert store.search("absent-word") == []
    assert store.search("   ") == []


def test_summary_counts_types_and_names_blockers(store: NoteStore):
    store.create("a", "", "general")
    blocker = store.create("Tests hang on CI", "", "blocker")
    summary = store.summary()
    assert "2 note(s)" in summary
    assert "blocker: 1" in summary and "general: 1" in summary
    assert f"[{blocker.id}] Tests hang on CI" in summary


def test_no_temp_files_left_behind(store: NoteStore):
    note = store.create("a", "b")
    store.update(note.id, content="c")
    leftovers = [p.name for p in store.notes_dir.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


# ---- the `note` tool -------------------------------------------------------

from hello_tui.config import load_settings
from hello_tui.core.events import NoteWritten
from hello_tui.core.tools import ToolContext
from hello_tui.tools.notes import NoteTool


@pytest.fixture
def ctx(tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    events: list = []
    context = ToolContext(settings=load_settings(repo, environ={}), emit=events.append)
    context.events = events  # type: ignore[attr-defined]
    return context


async def call(ctx, **kwargs):
    tool = NoteTool()
    return await tool.run(NoteTool.Args.model_validate(kwargs), ctx)


async def test_tool_create_read_update_delete_cycle(ctx):
    created = await call(
        ctx, action="create", title="State", content="step 2 of 5", note_type="task_state"
    )
    assert created.status == "success"
    note_id = created.data["id"]
    assert (ctx.settings.state.notes / f"{note_id}.md").is_file()
    assert ctx.events == [
        NoteWritten(note_id=note_id, title="State", note_type="task_state", ts=ctx.events[0].ts)
    ]

    read = await call(ctx, action="read", note_id=note_id)
    assert read.status == "success" and "step 2 of 5" in read.text and "task_state" in read.text

    updated = await call(ctx, action="update", note_id=note_id, content="step 3 of 5")
    assert updated.status == "success"
    assert "step 3 of 5" in (await call(ctx, action="read", note_id=note_id)).text
    assert len(ctx.events) == 2

    deleted = await call(ctx, action="delete", note_id=note_id)
    assert deleted.status == "success"
    assert not (ctx.settings.state.notes / f"{note_id}.md").exists()


async def test_tool_list_search_summary(ctx):
    await call(ctx, action="create", title="Blocked on CI", content="flaky", note_type="blocker")
    await call(
        ctx,
        action="create",
        title="Uses pathspec",
        content="for gitignore",
        note_type="reference",
        tags=["deps"],
    )
    listed = await call(ctx, action="list")
    assert listed.status == "success"
    assert listed.text.index("Uses pathspec") < listed.text.index("Blocked on CI")
    assert [d["title"] for d in listed.data] == ["Uses pathspec", "Blocked on CI"]
    only = await call(ctx, action="list", note_type="blocker")
    assert [d["title"] for d in only.data] == ["Blocked on CI"]
    found = await call(ctx, action="search", query="gitignore")
    assert [d["title"] for d in found.data] == ["Uses pathspec"]
    none = await call(ctx, action="search", query="zzz")
    assert none.status == "success" and "No note matches" in none.text and none.data == []
    summary = await call(ctx, action="summary")
    assert "2 note(s)" in summary.text and "Blocked on CI" in summary.text


async def test_tool_errors_are_readable(ctx):
    assert "needs note_id" in (await call(ctx, action="read")).text
    assert "needs title and content" in (await call(ctx, action="create")).text
    bad_type = await call(ctx, action="create", title="t", content="c", note_type="idea")
    assert bad_type.status == "error" and "task_state" in bad_type.text
    missing = await call(ctx, action="read", note_id="note_20240101_120000_abcdef")
    assert missing.status == "error" and "list" in missing.text
    sneaky = await call(ctx, action="delete", note_id="../../.git/config")
    assert sneaky.status == "error" and "Invalid note id" in sneaky.text
    created = await call(ctx, action="create", title="t", content="c")
    nothing = await call(ctx, action="update", note_id=created.data["id"])
    assert nothing.status == "error" and "at least one" in nothing.text
    assert (await call(ctx, action="search", query=" ")).status == "error"
    assert (await call(ctx, action="list", note_type="nope")).status == "error"
    assert (await call(ctx, action="list")).text.startswith("1 note(s)")


async def test_tool_through_registry_rejects_unknown_action(ctx):
    from hello_tui.tools.registry import ToolRegistry

    registry = ToolRegistry([NoteTool()])
    result = await registry.run("note", {"action": "explode"}, ctx)
    assert result.status == "error" and "action" in result.text
    ok = await registry.run("note", {"action": "summary"}, ctx)
    assert ok.status == "success" and ok.text == "No notes yet."


# Every code point, lone surrogates (a non-UTF-8 file's name), C1 controls, NEL, LS, PS
# and BOM among them: the front matter is written without a YAML emitter.
ANY_CHARACTER = st.characters(codec=None, exclude_categories=())


@hsettings(max_examples=300, deadline=None)
@given(title=st.text(ANY_CHARACTER, min_size=1), tags=st.lists(st.text(ANY_CHARACTER), max_size=3))
def test_front_matter_reads_back_as_written_for_any_text(title: str, tags: list[str]):
    from hello_tui.store.notes import Note, parse_note, render_note

    note_id = "note_20260101_000000_abcdef"
    note = Note(note_id, title, "general", tags, "body", "2026-01-01T00:00:00", "u", Path("x"))
    again = parse_note(render_note(note), Path(f"{note_id}.md"))
    assert (again.title, again.tags, again.created_at) == (title, tags, "2026-01-01T00:00:00")


def test_a_new_note_changes_one_index_entry_without_reading_the_others(store, monkeypatch):
    from hello_tui.store import notes as notes_module

    read: list[str] = []
    real = notes_module.parse_note
    monkeypatch.setattr(
        notes_module, "parse_note", lambda text, path: read.append(path.name) or real(text, path)
    )
    first = store.create("first", "a")  # the index is made, from what was just written
    second = store.create("second", "b")
    third = store.create("third", "c")
    store.update(first.id, title="first, renamed")
    store.delete(second.id)
    assert read == [f"{first.id}.md"]  # update reads the note it changes, nothing else
    index = json.loads(store.index_path.read_text(encoding="utf-8"))["notes"]
    assert {k: v["title"] for k, v in index.items()} == {
        first.id: "first, renamed",
        third.id: "third",
    }
    # An index that cannot be read is rebuilt from the files.
    store.index_path.write_text("{not json", encoding="utf-8")
    fourth = store.create("fourth", "d")
    index = json.loads(store.index_path.read_text(encoding="utf-8"))["notes"]
    assert set(index) == {first.id, third.id, fourth.id}


def test_the_note_is_synced_and_the_index_cache_is_not(store: NoteStore, monkeypatch):
    from hello_tui.store import atomic

    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    note = store.create("first", "a")
    assert len(synced) == 1  # the note's own file
    # What a crash could leave of an unsynced index: an empty file. It is rebuilt.
    store.index_path.write_text("", encoding="utf-8")
    assert [n.id for n in store.list()] == [note.id]
    assert note.id in json.loads(store.index_path.read_text(encoding="utf-8"))["notes"]
