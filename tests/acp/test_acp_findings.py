"""What the ACP approver asks the editor carries text, never terminal control.

An editor shows a permission request the way it shows updates (some draw it in a
terminal): a command the model wrote, a file named by the repository, its contents
in a diff, a repository's MCP server, all with their escape sequences as text.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from acp.schema import AllowedOutcome, RequestPermissionResponse

from hello_tui.acp.permissions import AcpApprover
from hello_tui.core.approval import ServerStartRequest
from hello_tui.core.events import CommandApprovalNeeded, PatchProposed
from hello_tui.patch.types import FilePlan, Hunk, PatchPlan, Risk

ATTACK = "a \x1b]52;c;aGk=\x07 b \x1b[2J c \x9b2J d \u202e"
OBEYED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def approver_answering(option_id: str, *, hunks: bool = False):
    asked: list = []
    notified: list = []

    async def request(session_id, tool_call, options):
        asked.append((tool_call, options))
        outcome = AllowedOutcome(outcome="selected", option_id=option_id)
        return RequestPermissionResponse(outcome=outcome)

    async def notify(update):
        notified.append(update)

    approver = AcpApprover(request, "s", Path("/r"), hunk_choices=hunks, notify=notify)
    return approver, asked, notified


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def sent(*parts) -> str:
    """Every string the client is sent, as it arrives."""
    return "\n".join(s for p in parts for s in _strings(p.model_dump(mode="json", by_alias=True)))


async def test_a_command_question_shows_escapes_as_text():
    approver, asked, _ = approver_answering("reject")
    command = f"printf '{ATTACK}'"
    await approver.observe(CommandApprovalNeeded(call_id="c1", command=command, reason=ATTACK))
    assert await approver.approve_command(command, ATTACK) == "deny"
    [(tool_call, options)] = asked
    assert OBEYED.search(sent(tool_call, *options)) is None
    assert "␛]52;c;aGk=␇" in tool_call.title and tool_call.tool_call_id == "c1"


async def test_a_patch_question_shows_a_hostile_name_and_contents_as_text():
    approver, asked, _ = approver_answering("reject", hunks=True)
    path = f"x{ATTACK}.txt"
    hunk = Hunk(index=0, old_start=0, old_lines=[ATTACK], new_lines=["b"], header=ATTACK)
    plan = PatchPlan(
        files=[
            FilePlan(path=path, op="update", old_text=f"{ATTACK}\n", new_text="b\n", hunks=[hunk])
        ],
        risk=Risk(high=True, reasons=[ATTACK]),
    )
    proposed = PatchProposed(call_id="p1", files=[{"path": path}], high_risk=True, risk_reasons=[])
    await approver.observe(proposed)
    decision = await approver.review_patch(plan)
    assert not decision.accepted
    [(tool_call, options)] = asked
    assert OBEYED.search(sent(tool_call, *options)) is None


async def test_a_repo_server_question_shows_escapes_as_text():
    approver, asked, notified = approver_answering("reject")
    request = ServerStartRequest(
        server=f"s{ATTACK}", origin=".mcp.json", summary=ATTACK, env_names=(ATTACK,)
    )
    assert await approver.approve_server(request) == "deny"
    [(tool_call, options)] = asked
    assert OBEYED.search(sent(tool_call, *options, *notified)) is None


async def test_hunks_chosen_by_the_name_shown_are_written():
    # The client answers with the path it was shown (made safe): the choice still holds.
    path = f"x{ATTACK}.txt"

    async def request(session_id, tool_call, options):
        [offer] = [o for o in options if o.option_id == "hunks"]
        [hunk] = offer.field_meta["hello-tui"]["hunks"]
        meta = {"hello-tui": {"hunks": {hunk["path"]: [hunk["index"]]}}}
        outcome = AllowedOutcome(outcome="selected", option_id="hunks", field_meta=meta)
        return RequestPermissionResponse(outcome=outcome)

    approver = AcpApprover(request, "s", Path("/r"), hunk_choices=True)
    hunk = Hunk(index=0, old_start=0, old_lines=["a"], new_lines=["b"], header="@@")
    plan = PatchPlan(
        files=[FilePlan(path=path, op="update", old_text="a\n", new_text="b\n", hunks=[hunk])],
        risk=Risk(high=False),
    )
    proposed = PatchProposed(call_id="p1", files=[{"path": path}], high_risk=False, risk_reasons=[])
    await approver.observe(proposed)
    decision = await approver.review_patch(plan)
    assert decision.accepted and decision.selection == {path: {0}}


def _hostile_state_link(base: Path) -> Path:
    """A repository whose state folder is a link with escape sequences in its target."""
    repo = base / "repo"
    repo.mkdir()
    (repo / ".helloagents").symlink_to(f"x{ATTACK}")
    return repo


async def test_a_session_on_a_hostile_repo_fails_with_text(tmp_path: Path):
    from acp import RequestError

    from hello_tui.acp.server import HelloTuiAgent
    from hello_tui.cli import build_parser

    repo = _hostile_state_link(tmp_path)
    agent = HelloTuiAgent(build_parser().parse_args(["acp"]))
    try:
        await agent.new_session(cwd=str(repo))
    except RequestError as exc:
        said = json.dumps(exc.to_error_obj(), ensure_ascii=False)
    else:
        raise AssertionError("the session opened")
    assert "symbolic link" in said and OBEYED.search(json.loads(said)["message"]) is None


def test_hello_tui_acp_says_a_hostile_repos_error_as_text(tmp_path: Path):
    repo = _hostile_state_link(tmp_path)
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run(
        [sys.executable, "-m", "hello_tui", "acp", "--repo", str(repo)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert b"symbolic link" in done.stderr and b"\x1b" not in done.stderr
