"""The app makes itself non-dumpable before it does anything else.

No process of the same user may then ptrace the app or read its `/proc` memory
and environ (where the model key lives). This module imports only ctypes: every
command that may hold a key, `--version` and `--help` included, pays for it at start
(the patch commands hold none and skip it, see `cli.PATCH_COMMANDS`).
"""

from __future__ import annotations

import contextlib
import ctypes
import sys

PR_SET_DUMPABLE = 4
_done = False


def make_app_undumpable() -> None:
    global _done
    if _done or not sys.platform.startswith("linux"):
        return
    _done = True
    with contextlib.suppress(OSError, AttributeError):
        zero = ctypes.c_ulong(0)
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, zero, zero, zero, zero)
