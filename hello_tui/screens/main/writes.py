"""Writes the user asks for outside a turn: `/undo`, `/redo`, a restore from a backup, `/compact`.

Undo, redo and restore share one runner (`_revert`): while it waits for
another hello-tui's write lock the status bar says so and Esc ends the wait
with nothing changed; whatever it did, or why it failed, goes to the chat.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from textual.worker import NoActiveWorker, Worker, get_current_worker

from hello_tui.core import logs
from hello_tui.screens.main.engine_events import LOCK_WAIT_STATE
from hello_tui.screens.main.host import Host
from hello_tui.screens.main.turns import TurnController
from hello_tui.widgets.sidebar import BackupPick

if TYPE_CHECKING:
    from hello_tui.engine.facade import Engine

log = logging.getLogger(__name__)
WRITE_GROUP = "write"


class WriteController:
    def __init__(
        self, host: Host, turns: TurnController, refresh_sidebar: Callable[[], None]
    ) -> None:
        self.host = host
        self.views = host.views
        self.turns = turns
        self._refresh_sidebar = refresh_sidebar
        self.waiting: Worker[Any] | None = None  # an undo/restore waiting for the lock

    def _run(self, work: Awaitable[None], name: str) -> None:
        self.host.run_worker(work, name=name, group=WRITE_GROUP, exit_on_error=False)

    def cancel_wait(self) -> None:
        if self.waiting is not None:
            self.waiting.cancel()

    def undo(self) -> None:
        engine = self.turns.engine_if_idle("/undo")
        if engine is not None:
            self._run(self._revert(engine.undo, "Undo"), "undo")

    def redo(self) -> None:
        engine = self.turns.engine_if_idle("/redo")
        if engine is not None:
            self._run(self._revert(engine.redo, "Redo"), "redo")

    def compact(self) -> None:
        engine = self.turns.engine_if_idle("/compact")
        if engine is not None:
            self._run(self._compact(engine), "compact")

    async def _compact(self, engine: Engine) -> None:
        self.views.chat.add("notice", "Compacting the conversation…")
        result = await engine.compact()
        self.views.chat.add("notice", result.text)

    def restore(self, pick: BackupPick) -> None:
        """Restore a backup (a file of it, or all of it) once the user confirms."""
        engine = self.turns.engine_if_idle("restoring")
        if engine is not None:
            self._run(self._confirm_restore(engine, pick), "restore")

    async def _confirm_restore(self, engine: Engine, pick: BackupPick) -> None:
        from hello_tui.screens.confirm import ConfirmScreen

        what = f"{pick.relpath}" if pick.relpath else "every file of this backup"
        question = ConfirmScreen(
            "Restore from backup?",
            f"Overwrite {what} with the copy saved in {pick.backup}.\n"
            "The current version is backed up first, so /undo brings it back.",
            yes_label="Restore (y)",
            no_label="Cancel (n)",
        )
        if not await self.host.push_screen_wait(question):
            return
        await self._revert(lambda wait: engine.restore(pick.backup, pick.relpath, wait), "Restore")

    async def _revert(self, call: Callable[[Any], Awaitable[Any]], what: str) -> None:
        """Run an undo or restore; while it waits for another process's lock, Esc ends it."""
        from hello_tui.engine.types import PatchError

        try:
            worker: Worker[Any] | None = get_current_worker()
        except NoActiveWorker:
            worker = None

        def waiting(text: str) -> None:
            self.waiting = worker
            self.views.chat.add("notice", text)
            self.host.set_state(LOCK_WAIT_STATE)

        try:
            reverted = await call(waiting)
        except asyncio.CancelledError:
            self.views.chat.add("notice", f"{what} cancelled: nothing was changed.")
            raise
        except (PatchError, OSError) as exc:  # "nothing to undo" and friends are messages
            self.views.chat.add("error", f"{what} failed: {exc}")
            return
        except Exception as exc:  # an engine bug is shown and logged
            log.exception("%s failed", what)
            self.views.chat.add("error", f"{what} failed: {exc} ({logs.internal_error_hint()})")
            return
        finally:
            self.waiting = None
            if self.turns.closed:
                self.host.set_state("idle")
        self.views.chat.add("result", reverted.text)
        self._refresh_sidebar()
