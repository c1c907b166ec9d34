"""Backup records and the journal are hello-tui's own: those git tracks came with the repository.

Undo, redo and recovery write what the records say. A repository can commit a state
folder of its own (`git add -f .helloagents/backups`), and once cloned its records would
make an undo, or the recovery every patch command starts with, write whatever their
author put in them: content nobody here accepted. So before recovery looks at a record,
the records git tracks are looked for (with hello-tui's own git environment, which no
repository setting can turn into a program), and any there stop it with one line.
"""

from __future__ import annotations

from hello_tui.config import Settings
from hello_tui.core.git_layout import own_git_dirs, policy_git_env
from hello_tui.patch.types import PatchError

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from pathlib import Path


def tracked_records(settings: Settings) -> list[str]:
    """The files under the state folder's backups and journal that git tracks."""
    repo: Path = settings.repo
    dirs = own_git_dirs(repo)
    if dirs is None or not settings.state.root.is_dir():
        return []
    # Only a repository git knows can have brought records; subprocess (and the threading
    # it imports) is loaded for those alone.
    import subprocess

    state = settings.state_dir_name.rstrip("/")
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z", "--", f"{state}/backups", f"{state}/journal"],
            cwd=repo,
            env=policy_git_env(repo, dirs[0]),
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []  # no git to ask: nothing can have come through it
    if done.returncode != 0:
        return []
    return [name for name in done.stdout.decode("utf-8", "replace").split("\0") if name]


def refuse_foreign_records(settings: Settings) -> None:
    """PatchError when the repository brought records of its own; nothing was changed."""
    found = tracked_records(settings)
    if found:
        state = settings.state_dir_name.rstrip("/")
        raise PatchError(
            f"the state folder holds backup records that came with the repository (git "
            f"tracks {found[0]}{f' and {len(found) - 1} more' if len(found) > 1 else ''}); "
            "hello-tui never restores from records it did not write, so nothing was changed. "
            f"Remove them (git rm -r {state}), then retry."
        )
