"""The client's buffers as the engine's `EditorFiles`: `fs/read_text_file` and `fs/write_text_file`.

Offered by the client in `initialize` (`clientCapabilities.fs`); each request names
the session and an absolute path. An error answer, or a connection gone, is the
editor refusing that file: a read then falls back to the disk, a write fails the
patch (see `tools/editor_texts` for what goes where).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hello_tui.core.editor_files import EditorRefused


class ClientFiles:
    """One session's view of the client's files."""

    def __init__(self, conn: Any, *, reads: bool, writes: bool) -> None:
        self._conn = conn
        self._reads = reads
        self._writes = writes
        self.session_id = ""  # known once the engine has opened its session

    @classmethod
    def offered(cls, conn: Any, capabilities: Any) -> ClientFiles | None:
        """The client's offer from `initialize`; None when it offers neither method."""
        fs = getattr(capabilities, "fs", None)
        reads = bool(getattr(fs, "read_text_file", False))
        writes = bool(getattr(fs, "write_text_file", False))
        return cls(conn, reads=reads, writes=writes) if reads or writes else None

    @property
    def reads(self) -> bool:
        return self._reads

    @property
    def writes(self) -> bool:
        return self._writes

    async def read_text(self, path: Path) -> str | None:
        if not self._reads:
            return None
        try:
            response = await self._conn.read_text_file(session_id=self.session_id, path=str(path))
        except Exception as exc:  # an error answer or a closed connection: the disk's copy
            raise EditorRefused(_why(exc)) from exc
        return str(response.content)

    async def write_text(self, path: Path, text: str) -> None:
        if not self._writes:
            raise EditorRefused("the client does not take file writes")
        try:
            await self._conn.write_text_file(
                session_id=self.session_id, path=str(path), content=text
            )
        except Exception as exc:  # an error answer or a closed connection: the patch fails
            raise EditorRefused(_why(exc)) from exc


def _why(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
