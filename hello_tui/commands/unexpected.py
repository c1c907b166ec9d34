"""The last line of defence: an unexpected exception becomes one line; its traceback goes to a log.

The log is `<state>/logs/errors.log` of the repository the command was run on
(or the system's temp folder when that cannot be written, e.g. on a full disk).
"""

from __future__ import annotations

import sys
import tempfile
import traceback
from datetime import datetime
from pathlib import Path

EXIT_FAILED = 1
LOG_NAME = "errors.log"


def _log_candidates(repo: str | None) -> list[Path]:
    out: list[Path] = []
    try:
        from hello_tui.config import load_settings

        out.append(load_settings(repo or ".").state.logs / LOG_NAME)
    except Exception:  # noqa: BLE001, S110 - a broken configuration still gets its traceback logged
        pass
    out.append(Path(tempfile.gettempdir()) / f"hello-tui-{LOG_NAME}")
    return out


def write_traceback(exc: BaseException, repo: str | None) -> Path | None:
    text = f"--- {datetime.now().isoformat(timespec='seconds')} {' '.join(sys.argv)}\n" + "".join(
        traceback.format_exception(exc)
    )
    for path in _log_candidates(repo):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(text)
            return path
        except OSError:
            continue
    return None


def report_unexpected(exc: BaseException, repo: str | None) -> int:
    where = write_traceback(exc, repo)
    detail = str(exc).splitlines()[0] if str(exc) else ""
    line = f"error: unexpected {type(exc).__name__}" + (f": {detail}" if detail else "")
    line += f" (details in {where})" if where else " (the traceback could not be saved)"
    print(line, file=sys.stderr)
    return EXIT_FAILED
