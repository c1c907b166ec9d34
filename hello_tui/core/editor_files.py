"""The repository's files as the user's editor has them, when a front-end offers that.

An ACP client may offer its buffers (`fs/read_text_file`, `fs/write_text_file`):
then the agent reads what the user sees, unsaved changes included, and an accepted
patch reaches the open buffer instead of bypassing it. `EditorFiles` is that offer
as the engine sees it; the ACP layer implements it, and with no editor (the app,
`exec`, a client that offers nothing) every read and write is the disk's.

Reads and writes are coroutines on the loop that owns the client's connection.
The patch engine plans and commits on worker threads: `BlockingEditor` is the
same editor called from such a thread (each call runs on the owner's loop and
the thread waits for its answer).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

# A thread waits this long for the editor's answer before the call counts as failed:
# a client that never answers must not hold a commit (and the repository's lock) forever.
EDITOR_ANSWER_SECONDS = 30.0


class EditorRefused(Exception):
    """The editor could not give or take a file; the message says why, for the user."""


class EditorFiles(Protocol):
    @property
    def reads(self) -> bool:
        """The editor gives the text of files (else: read the disk)."""

    @property
    def writes(self) -> bool:
        """The editor takes the new text of files (else: the disk only)."""

    async def read_text(self, path: Path) -> str | None:
        """The text of the file at the absolute `path`; None when the editor cannot give it."""

    async def write_text(self, path: Path, text: str) -> None:
        """Put `text` in the file at the absolute `path`; raises EditorRefused."""


class BlockingEditor:
    """An `EditorFiles` for worker threads: each call waits for the owner loop's answer."""

    def __init__(self, editor: EditorFiles, loop: asyncio.AbstractEventLoop) -> None:
        self.editor = editor
        self._loop = loop
        self._loop_thread = threading.get_ident()

    @classmethod
    def here(cls, editor: EditorFiles) -> BlockingEditor:
        """Made on the loop that owns `editor`, for the threads it starts."""
        return cls(editor, asyncio.get_running_loop())

    @property
    def reads(self) -> bool:
        return self.editor.reads

    @property
    def writes(self) -> bool:
        return self.editor.writes

    def read_text(self, path: Path) -> str | None:
        try:
            return self._wait(self.editor.read_text(path))
        except EditorRefused:
            return None

    def write_text(self, path: Path, text: str) -> None:
        self._wait(self.editor.write_text(path, text))

    def _wait(self, call: Coroutine[Any, Any, T]) -> T:
        # Waiting on the owner loop's own thread would stop the loop that must answer.
        if threading.get_ident() == self._loop_thread:
            call.close()
            raise RuntimeError("BlockingEditor is for worker threads, not the loop's own")
        future = asyncio.run_coroutine_threadsafe(call, self._loop)
        try:
            return future.result(EDITOR_ANSWER_SECONDS)
        except TimeoutError:
            future.cancel()
            raise EditorRefused(
                f"the editor did not answer within {EDITOR_ANSWER_SECONDS:g} s"
            ) from None
        except EditorRefused:
            raise
        except Exception as exc:  # the connection's errors (closed, an error answer), said
            raise EditorRefused(str(exc) or type(exc).__name__) from exc
