"""Assembling an Agent from settings: model client, tools, session (new, latest or by id), log."""

from __future__ import annotations

from hello_tui.agent.loop import Agent
from hello_tui.config import Settings
from hello_tui.core.approval import Approver
from hello_tui.llm import LLMClient, PreflightResult
from hello_tui.store.sessions import Session, SessionCorrupt, SessionStore
from hello_tui.store.transcript import TranscriptLog


def open_session(
    settings: Settings, *, resume: str | None = None, continue_latest: bool = False
) -> tuple[Session, list[str]]:
    """The session to work in, and notices for the user (a corrupt file set aside).

    Raises SessionNotFound when `resume` names no session: that is the user's
    typo, not something to paper over with a new session.
    """
    store = SessionStore(settings.state)
    notices: list[str] = []
    try:
        if resume:
            return store.load(resume), notices
        if continue_latest:
            latest = store.latest()
            if latest is not None:
                return latest, notices
            notices.append("No earlier session to continue; starting a new one.")
    except SessionCorrupt as exc:
        notices.append(str(exc))
    return store.new(), notices


def build_agent(
    settings: Settings,
    approver: Approver,
    *,
    resume: str | None = None,
    continue_latest: bool = False,
    llm: LLMClient | None = None,
) -> Agent:
    from hello_tui.patch import PatchError, recover
    from hello_tui.tools import build_registry

    session, notices = open_session(settings, resume=resume, continue_latest=continue_latest)
    # A commit killed midway (kill -9, power loss) left an open journal: roll it
    # back (or finish it) before the agent or the user looks at the tree.
    try:
        recovered = recover(settings)
    except (PatchError, OSError) as exc:
        notices.append(f"An interrupted patch could not be recovered: {exc}")
    else:
        if recovered:
            notices.append("An interrupted patch was recovered: " + "; ".join(recovered))
    agent = Agent(
        settings,
        llm or LLMClient(settings),
        build_registry(settings),
        approver,
        session,
        log=TranscriptLog(settings.state.logs / f"{session.id}.jsonl"),
    )
    agent.notices.extend(notices)
    return agent


async def run_preflight(settings: Settings) -> PreflightResult:
    client = LLMClient(settings)
    try:
        return await client.preflight()
    finally:
        await client.aclose()
