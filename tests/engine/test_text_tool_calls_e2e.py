"""Tool calls written as text, end to end: the scripted server sends each form as plain content.

The client must hand them on as ordinary tool calls (without showing their
syntax as the answer), and `hello-tui exec` must run them through the same
approvals as native calls.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from hello_tui.config import load_settings
from hello_tui.llm import Completion, LLMClient, TextDelta
from tests.support.scripted_model import reject_tools, text
from tests.support.warm_python import warm_python

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            },
        },
    },
    {"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}},
]

WRITE = {"path": "notes.txt", "content": "hello from a local model\n"}
WRITE_JSON = json.dumps({"name": "write", "arguments": WRITE})

FORMS = {
    "hermes": f"I will write it.\n<tool_call>\n{WRITE_JSON}\n</tool_call>",
    "qwen3-coder": (
        "I will write it.\n<tool_call>\n<function=write>\n<parameter=path>\nnotes.txt\n"
        "</parameter>\n<parameter=content>\nhello from a local model\n\n</parameter>\n"
        "</function>\n</tool_call>"
    ),
    "qwen3-coder-bare": (
        "<function=write>\n<parameter=path>\nnotes.txt\n</parameter>\n<parameter=content>\n"
        "hello from a local model\n\n</parameter>\n</function>"
    ),
    "bare-json": WRITE_JSON,
    "fenced-json": f"```json\n{WRITE_JSON}\n```",
    "mistral-list": f"[TOOL_CALLS][{WRITE_JSON}]",
    "mistral-args": f"[TOOL_CALLS]write[ARGS]{json.dumps(WRITE)}",
}


@pytest.mark.parametrize("form", sorted(FORMS))
async def test_each_form_becomes_a_real_tool_call(tmp_path, scripted_server, form):
    server = scripted_server([text(FORMS[form], chunk_size=5)])
    settings = load_settings(tmp_path, base_url=server.base_url, model="m", environ={})
    client = LLMClient(settings)
    try:
        events = [
            e async for e in client.stream_chat([{"role": "user", "content": "x"}], tools=TOOLS)
        ]
    finally:
        await client.aclose()
    done = events[-1]
    assert isinstance(done, Completion)
    assert [(c.name, json.loads(c.arguments)) for c in done.tool_calls] == [("write", WRITE)]
    assert done.finish_reason == "tool_calls"
    (call,) = done.tool_calls
    assert len(call.id) == 9 and call.id.isalnum()
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "<tool_call>" not in shown and "[TOOL_CALLS]" not in shown and "<function" not in shown
    assert shown.strip() == done.content
    assert done.content in ("", "I will write it.")


async def test_without_tools_offered_the_text_stays_text(tmp_path, scripted_server):
    server = scripted_server([text(FORMS["hermes"])])
    settings = load_settings(tmp_path, base_url=server.base_url, model="m", environ={})
    client = LLMClient(settings)
    try:
        done = await client.complete([{"role": "user", "content": "x"}])
    finally:
        await client.aclose()
    assert done.tool_calls == [] and done.content == FORMS["hermes"]


async def test_the_non_streamed_path_recognises_them_too(tmp_path, scripted_server):
    server = scripted_server([text(FORMS["mistral-args"])])
    settings = load_settings(tmp_path, base_url=server.base_url, model="m", environ={})
    client = LLMClient(settings)
    try:
        done = await client.complete([{"role": "user", "content": "x"}], tools=TOOLS)
    finally:
        await client.aclose()
    assert [c.name for c in done.tool_calls] == ["write"]


def exec_cli(repo, server, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            *warm_python(),
            "-m",
            "hello_tui",
            "exec",
            "--repo",
            str(repo),
            "--base-url",
            server.base_url,
            "--model",
            "scripted-model",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize("form", ["hermes", "qwen3-coder", "fenced-json", "mistral-args"])
def test_exec_runs_a_text_tool_call_after_approval(tmp_path, scripted_server, form):
    server = scripted_server([text(FORMS[form]), text("Wrote notes.txt.")])
    proc = exec_cli(tmp_path, server, "--yes", "write a note")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "notes.txt").read_text() == "hello from a local model\n"
    assert "· write" in proc.stderr
    assert proc.stdout.endswith("Wrote notes.txt.\n")
    assert "<tool_call>" not in proc.stdout and "[TOOL_CALLS]" not in proc.stdout
    # The next request carries it as a native call with its result, as for any tool call.
    messages = server.chat_requests[-1]["messages"]
    assistant = next(m for m in messages if m.get("tool_calls"))
    assert assistant["tool_calls"][0]["function"]["name"] == "write"
    assert any(m["role"] == "tool" for m in messages)


def test_exec_declines_a_text_tool_call_without_approval(tmp_path, scripted_server):
    server = scripted_server([text(FORMS["bare-json"]), text("It was declined.")])
    proc = exec_cli(tmp_path, server, "write a note")
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "notes.txt").exists()
    told = server.chat_requests[-1]["messages"][-1]["content"]
    assert "declined" in told


def test_auto_protocol_keeps_native_tools_when_the_model_writes_calls_as_text(
    tmp_path, scripted_server
):
    # The endpoint accepts `tools`; the model merely writes its calls as text:
    # no switch to ReAct, the calls are recognised instead.
    server = scripted_server([text(FORMS["hermes"]), text("done")])
    proc = exec_cli(tmp_path, server, "--yes", "write a note")
    assert proc.returncode == 0, proc.stderr
    assert "ReAct" not in proc.stderr
    assert all(r.get("tools") for r in server.chat_requests)


def test_auto_protocol_switches_to_react_only_when_tools_are_rejected(tmp_path, scripted_server):
    server = scripted_server([reject_tools(), text("Final Answer: switched")])
    proc = exec_cli(tmp_path, server, "say hi to the repo")
    assert proc.returncode == 0, proc.stderr
    assert "ReAct" in proc.stderr
    assert proc.stdout == "switched\n"
