"""hello-tui's own log: `logging` into `<state>/logs/hello-tui.log`, rotating.

`configure(settings)` sets the level from LOG_LEVEL (or DEBUG with --debug),
installs one rotating file handler on the `hello_tui` logger and returns the
file. Broad `except` blocks log their traceback here, and what the user reads
about an internal error names this file (`internal_error_hint`). The handler
sits on the `hello_tui` logger, so Python's last-resort stderr handler never
prints over the screen the TUI draws.
"""

from __future__ import annotations

import logging
import tempfile
import traceback
from pathlib import Path

from hello_tui.config import Settings

LOG_NAME = "hello-tui.log"
MAX_BYTES = 2_000_000
BACKUPS = 3
FORMAT = "%(asctime)s %(levelname)s %(name)s [%(process)d]: %(message)s"

_handler: logging.Handler | None = None
_file: Path | None = None


class _QuietRotatingHandler(logging.Handler):
    """A rotating file handler made at the first record, never writing its own errors
    to the terminal (a full disk must not print over the app).

    Most runs of `apply`, `undo` or `history` log nothing at the default level:
    they need neither the file nor `logging.handlers` (sockets, pickle), which
    this defers to the first record.
    """

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._file: logging.Handler | None = None

    def _target(self) -> logging.Handler:
        if self._file is None:
            import logging.handlers

            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = logging.handlers.RotatingFileHandler(
                self.path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8"
            )
            self._file.setFormatter(self.formatter)
        return self._file

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._target().emit(record)
        except Exception:  # noqa: BLE001 - see handleError: logging must never break the app
            self.handleError(record)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        super().close()

    def handleError(self, record: logging.LogRecord) -> None:
        pass


def log_path(settings: Settings) -> Path:
    return settings.state.logs / LOG_NAME


def level_for(name: str) -> int:
    level = logging.getLevelName(name.strip().upper())
    return level if isinstance(level, int) else logging.WARNING


def configure(settings: Settings) -> Path:
    """Log to the repository's log file at the configured level; returns the file."""
    return configure_file(log_path(settings), settings.log_level)


def configure_file(path: Path, level: str) -> Path:
    global _handler, _file
    logger = logging.getLogger("hello_tui")
    logger.setLevel(level_for(level))
    if _file == path and _handler is not None:
        return path
    handler = _QuietRotatingHandler(path)
    handler.setFormatter(logging.Formatter(FORMAT))
    if _handler is not None:
        logger.removeHandler(_handler)
        _handler.close()
    logger.addHandler(handler)
    _handler, _file = handler, path
    return path


def log_uncaught(where: str, exc: BaseException) -> Path | None:
    """Log `exc` with its traceback; returns the file it went to (None if none could be written).

    When the repository's log cannot be written (a full disk, a read-only
    folder) the traceback goes to a file in the system's temp folder instead,
    so the one line the user reads never names a file that lacks it.
    """
    path = _file
    if path is None:  # before any settings: the log of the repository in the current folder
        path = configure_file(Path.cwd() / ".helloagents" / "logs" / LOG_NAME, "WARNING")
    before = _size(path)
    logging.getLogger("hello_tui").critical("uncaught error in %s", where, exc_info=exc)
    if _handler is not None:
        _handler.flush()
    if _size(path) > before:
        return path
    fallback = Path(tempfile.gettempdir()) / f"hello-tui-{LOG_NAME}"
    text = f"--- uncaught error in {where}\n" + "".join(traceback.format_exception(exc))
    try:
        with open(fallback, "a", encoding="utf-8") as fh:
            fh.write(text)
    except OSError:
        return None
    return fallback


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def current_log_file() -> Path | None:
    """The file the log goes to (None before `configure`)."""
    return _file


def internal_error_hint() -> str:
    where = current_log_file()
    return f"details are in {where}" if where else "run with --debug and report it"


def reset() -> None:
    """Remove the handler (tests, and a second configure for another repository)."""
    global _handler, _file
    logger = logging.getLogger("hello_tui")
    if _handler is not None:
        logger.removeHandler(_handler)
        _handler.close()
    logger.setLevel(logging.NOTSET)
    _handler = _file = None
