"""TodoStore and the `todo` tool: ids, the single in_progress rule, events, plain-text board."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.core.events import TodoChanged
from hello_tui.core.tools import ToolContext
from hello_tui.store.todos import TodoError, TodoStore, render_board
from hello_tui.tools.registry import ToolRegistry
from hello_tui.tools.todo import TodoTool

ANSI = re.compile(r"\x1b\[")


@pytest.fixture
def store(tmp_path: Path) -> TodoStore:
    return TodoStore(tmp_path / "todos")


@pytest.fixture
def ctx(tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    events: list = []
    context = ToolContext(settings=load_settings(repo, environ={}), emit=events.append)
    context.events = events  # type: ignore[attr-defined]
    return context


async def call(ctx, **kwargs):
    return await ToolRegistry([TodoTool()]).run("todo", kwargs, ctx)


def test_store_ids_are_small_integers_as_strings(store: TodoStore):
    a = store.add("first")
    b = store.add("second", "details")
    assert (a.id, b.id) == ("1", "2")
    store.delete("1")
    assert store.add("third").id == "3"
    assert [i.id for i in store.load()] == ["2", "3"]
    saved = json.loads(store.path.read_text(encoding="utf-8"))
    assert [r["id"] for r in saved["items"]] == ["2", "3"]
    assert set(saved["items"][0]) == {"id", "title", "desc", "status", "created_at", "updated_at"}


def test_store_ids_sort_numerically(store: TodoStore):
    for n in range(11):
        store.add(f"t{n}")
    assert [i.id for i in store.load()][-3:] == ["9", "10", "11"]


def test_only_one_in_progress(store: TodoStore):
    store.add("a", status="in_progress")
    store.add("b")
    with pytest.raises(TodoError, match=r"\[1\] 'a' already is"):
        store.update("2", status="in_progress")
    with pytest.raises(TodoError, match="Only one todo"):
        store.add("c", status="in_progress")
    assert [i.status for i in store.load()] == ["in_progress", "pending"]
    store.update("1", status="in_progress")  # re-marking the same one is fine
    store.update("1", status="completed")
    assert store.update("2", status="in_progress").status == "in_progress"


def test_unknown_id_lists_existing_ids(store: TodoStore):
    store.add("a")
    store.add("b")
    with pytest.raises(TodoError, match="Existing ids: 1, 2"):
        store.update("9", status="completed")
    with pytest.raises(TodoError, match="list is empty"):
        TodoStore(store.todos_dir.parent / "other").delete("1")


def test_corrupt_file_is_an_error_and_clear_keeps_it_aside(store: TodoStore):
    store.todos_dir.mkdir(parents=True)
    store.path.write_text("{broken", encoding="utf-8")
    with pytest.raises(TodoError, match="clear"):
        store.load()
    with pytest.raises(TodoError):
        store.add("x")
    assert store.path.read_text(encoding="utf-8") == "{broken"
    assert store.clear() == 0
    assert store.load() == []
    kept = list(store.todos_dir.glob("todos.corrupt-*.json"))
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == "{broken"


def test_board_is_plain_text_grouped_by_status(store: TodoStore):
    store.add("write tests", "for the parser\nand the matcher")
    store.add("read code", status="in_progress")
    store.add("done thing", status="completed")
    board = render_board(store.load())
    assert not ANSI.search(board)
    assert board.splitlines() == [
        "Todos (1 in progress, 1 pending, 1 completed):",
        "IN_PROGRESS",
        "  [2] read code",
        "PENDING",
        "  [1] write tests — for the parser and the matcher",
        "COMPLETED",
        "  [3] done thing",
    ]
    assert render_board([]) == "No todos."


async def test_tool_add_update_emits_events_and_saves(ctx):
    added = await call(ctx, action="add", title="explore repo", desc="ls and read")
    assert added.status == "success"
    assert "[1] explore repo" in added.text
    assert added.data[0]["status"] == "pending"
    updated = await call(ctx, action="update", id=1, status="in_progress")
    assert updated.status == "success" and "IN_PROGRESS\n  [1] explore repo" in updated.text
    assert [type(e) for e in ctx.events] == [TodoChanged, TodoChanged]
    assert ctx.events[-1].items[0]["status"] == "in_progress"
    on_disk = json.loads((ctx.settings.state.todos / "todos.json").read_text(encoding="utf-8"))
    assert on_disk["items"][0]["status"] == "in_progress"


async def test_tool_list_returns_text_and_structured_data(ctx):
    await call(ctx, action="add", title="a")
    await call(ctx, action="add", title="b", status="completed")
    listed = await call(ctx, action="list")
    assert listed.status == "success"
    assert [d["title"] for d in listed.data] == ["a", "b"]
    assert "PENDING\n  [1] a" in listed.text and "COMPLETED\n  [2] b" in listed.text
    assert len(ctx.events) == 2  # list changes nothing, so no event


async def test_tool_second_in_progress_is_a_clear_error(ctx):
    await call(ctx, action="add", title="a", status="in_progress")
    await call(ctx, action="add", title="b")
    result = await call(ctx, action="update", id="2", status="in_progress")
    assert result.status == "error"
    assert "Only one todo can be in_progress" in result.text and "'a'" in result.text
    assert len(ctx.events) == 2


async def test_tool_errors(ctx):
    assert "needs an id" in (await call(ctx, action="delete")).text
    assert "needs a title" in (await call(ctx, action="add")).text
    missing = await call(ctx, action="update", id="7", status="completed")
    assert missing.status == "error" and "No todo with id '7'" in missing.text
    bad_status = await call(ctx, action="add", title="x", status="doing")
    assert bad_status.status == "error" and "status" in bad_status.text
    await call(ctx, action="add", title="x")
    nothing = await call(ctx, action="update", id="1")
    assert nothing.status == "error" and "at least one" in nothing.text
    assert not (ctx.settings.repo / "todos.json").exists()


async def test_tool_delete_and_clear(ctx):
    for t in ("a", "b", "c"):
        await call(ctx, action="add", title=t)
    deleted = await call(ctx, action="delete", id="2")
    assert deleted.status == "success" and [d["id"] for d in deleted.data] == ["1", "3"]
    cleared = await call(ctx, action="clear")
    assert cleared.status == "success" and "2 item(s) removed" in cleared.text
    assert cleared.data == [] and ctx.events[-1].items == []
    assert (await call(ctx, action="list")).text == "No todos."
