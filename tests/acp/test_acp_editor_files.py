"""The client's buffers: read through `fs/read_text_file`, accepted patches written through
`fs/write_text_file` (still all or nothing, backed up, noted, undoable) when the client
offers them; the disk alone when it does not. The SDK's client over real stdio."""

from __future__ import annotations

import json

import pytest
from acp.schema import FileSystemCapabilities

from tests.acp.acp_kit import (
    EditorClient,
    acp_agent,
    always,
    new_session,
    prompt,
)
from tests.support.scripted_model import call, text, tool_calls

OFFERED = FileSystemCapabilities(read_text_file=True, write_text_file=True)
ON_DISK = "hello\nworld\n"
# The user typed a line in the editor and has not saved it.
IN_EDITOR = "hello\nunsaved line\nworld\n"
PATCH = (
    "*** Begin Patch\n*** Update File: hello.txt\n@@\n hello\n-unsaved line\n+agent line\n"
    " world\n*** End Patch\n"
)
PATCHED = "hello\nagent line\nworld\n"


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    (path / "hello.txt").write_text(ON_DISK)
    (path / "other.txt").write_text("only on disk\n")
    return path


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_reads_patches_and_undo_go_through_a_client_that_offers_its_files(
    repo, scripted_server
):
    hello, other = str(repo / "hello.txt"), str(repo / "other.txt")
    server = scripted_server(
        [
            tool_calls(
                [
                    call("read", {"path": "hello.txt"}, id="call_r1"),
                    call("read", {"path": "other.txt"}, id="call_r2"),
                ]
            ),
            tool_calls([call("apply_patch", {"patch": PATCH}, id="call_p")]),
            text("Replaced it."),
        ]
    )
    client = EditorClient(answer=always("allow"), buffers={hello: IN_EDITOR})
    async with acp_agent(repo, server, client, fs=OFFERED) as conn:
        session_id = await new_session(conn, repo)
        response = await prompt(conn, session_id, "replace the unsaved line")
        assert response.stop_reason == "end_turn"
        # What the model read is the buffer; a file the client could not give, the disk.
        [read_hello, read_other] = tool_results(server.chat_requests[1])
        assert "unsaved line" in read_hello
        assert "only on disk" in read_other
        assert hello in client.reads and other in client.reads
        # The patch was planned against the buffer (its removed line is only there) and
        # shown so; the client got the exact accepted text; the disk holds it too.
        [(tool_call, _options)] = client.asked
        [diff] = [c for c in tool_call.content if c.type == "diff"]
        assert (diff.old_text, diff.new_text) == (IN_EDITOR, PATCHED)
        assert client.writes == [(hello, PATCHED)]
        assert client.buffers[hello] == PATCHED
        assert (repo / "hello.txt").read_text() == PATCHED
        assert "applied" in tool_results(server.chat_requests[2])[-1].lower()
        # Backed up (the disk's copy) and noted, as any patch.
        [backup] = list((repo / ".helloagents" / "backups").rglob("hello.txt.bak"))
        assert backup.read_text() == ON_DISK
        notes = [p.read_text() for p in (repo / ".helloagents" / "notes").glob("note_*.md")]
        assert any("agent line" in n for n in notes)

        undone = await prompt(conn, session_id, "/undo")
    assert undone.stop_reason == "end_turn"
    assert "Undone: M hello.txt" in client.message()
    # The editor gets back what the user had, unsaved line included; the disk, its backup.
    assert client.writes[-1] == (hello, IN_EDITOR)
    assert client.buffers[hello] == IN_EDITOR
    assert (repo / "hello.txt").read_text() == ON_DISK
    assert len(server.chat_requests) == 3  # /undo is no turn for the model


async def test_edit_works_on_the_buffer_too(repo, scripted_server):
    hello = str(repo / "hello.txt")
    edit = {"path": "hello.txt", "old_text": "unsaved line", "new_text": "edited line"}
    server = scripted_server(
        [
            tool_calls([call("read", {"path": "hello.txt"})]),
            tool_calls([call("edit", edit)]),
            text("Edited."),
        ]
    )
    client = EditorClient(answer=always("allow"), buffers={hello: IN_EDITOR})
    async with acp_agent(repo, server, client, fs=OFFERED) as conn:
        session_id = await new_session(conn, repo)
        await prompt(conn, session_id, "edit the unsaved line")
    edited = "hello\nedited line\nworld\n"
    assert client.writes == [(hello, edited)]
    assert (repo / "hello.txt").read_text() == edited
    # The stale guard compared the buffer with what was read from it: no conflict.
    assert "applied" in tool_results(server.chat_requests[-1])[-1].lower()


async def test_a_write_the_client_refuses_changes_nothing_on_disk_or_in_the_editor(
    repo, scripted_server
):
    (repo / "second.txt").write_text("two\n")
    hello, second = str(repo / "hello.txt"), str(repo / "second.txt")
    both = (
        "*** Begin Patch\n*** Update File: hello.txt\n@@\n-hello\n+HELLO\n"
        "*** Update File: second.txt\n@@\n-two\n+TWO\n*** End Patch\n"
    )
    server = scripted_server(
        [tool_calls([call("apply_patch", {"patch": both}, id="call_p")]), text("It failed.")]
    )
    client = EditorClient(
        answer=always("allow"),
        buffers={hello: ON_DISK, second: "two\n"},
        refuse_writes={second},
    )
    async with acp_agent(repo, server, client, fs=OFFERED) as conn:
        session_id = await new_session(conn, repo)
        await prompt(conn, session_id, "shout")
    # hello.txt reached the editor first, then got its earlier text back.
    assert client.writes == [(hello, "HELLO\nworld\n"), (second, "TWO\n"), (hello, ON_DISK)]
    assert client.buffers == {hello: ON_DISK, second: "two\n"}
    assert (repo / "hello.txt").read_text() == ON_DISK
    assert (repo / "second.txt").read_text() == "two\n"
    [told] = tool_results(server.chat_requests[-1])
    assert "editor refused the new text of second.txt" in told
    assert "read-only in this editor" in told and "Nothing was written" in told
    failed = [u for u in client.of("tool_call_update") if u.status == "failed"]
    assert [u.tool_call_id for u in failed] == ["call_p"]
    # No patch on record: nothing to undo.
    backups = repo / ".helloagents" / "backups"
    committed = [m for m in backups.rglob("manifest.json") if (m.parent / "COMMITTED").exists()]
    assert committed == []


async def test_a_client_that_offers_nothing_is_never_asked_and_the_disk_is_used(
    repo, scripted_server
):
    hello = str(repo / "hello.txt")
    server = scripted_server(
        [
            tool_calls([call("read", {"path": "hello.txt"})]),
            tool_calls(
                [
                    call(
                        "apply_patch",
                        {
                            "patch": "*** Begin Patch\n*** Update File: hello.txt\n@@\n-world\n"
                            "+there\n*** End Patch\n"
                        },
                    )
                ]
            ),
            text("Done."),
        ]
    )
    client = EditorClient(answer=always("allow"), buffers={hello: IN_EDITOR})
    async with acp_agent(repo, server, client) as conn:
        session_id = await new_session(conn, repo)
        await prompt(conn, session_id, "change world")
        await prompt(conn, session_id, "/undo")
    assert client.reads == [] and client.writes == []
    [read] = tool_results(server.chat_requests[1])
    assert "unsaved line" not in read and "world" in read
    assert (repo / "hello.txt").read_text() == ON_DISK  # written, then undone, on disk
    manifests = list((repo / ".helloagents" / "backups").rglob("manifest.json"))
    kinds = sorted(json.loads(m.read_text())["kind"] for m in manifests)
    assert kinds == ["patch", "undo"]
