"""What a repository's index holds that the terminal policy must know about.

- tracked env files: `git diff`, `git show`, `git log -p` and `git grep` print
  tracked files' contents without naming them, so the policy needs the list to
  know when such a command could show a `.env`;
- gitlinks (submodules): git may enter each populated one and run what its
  own config names, so the policy checks those configs too;
- committed virtual environments: a folder whose `pyvenv.cfg` or `bin/` files
  came with the repository is not one the user made, so its `bin` leaves PATH.

The list comes from `git ls-files --stage` (every index format, split and
sparse indexes included), run with nothing that could start a program, and is
cached on the index file's identity: every git command pays one `stat`, and one
listing per change of the index.
"""

from __future__ import annotations

import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from hello_tui.core.env_names import is_env_file
from hello_tui.core.git_layout import own_git_dirs, policy_git_env

GITLINK_MODE = "160000"


@dataclass(frozen=True)
class Tracked:
    env_files: tuple[str, ...]  # repo-relative POSIX paths
    gitlinks: tuple[str, ...]
    # Folders holding a tracked `pyvenv.cfg`, or a tracked file in their `bin/`.
    venv_like: frozenset[str] = frozenset()


NOTHING = Tracked((), ())
_CACHE: dict[tuple[str, int, int, int], Tracked] = {}
_LOCK = threading.Lock()


def git_output(
    args: list[str],
    *,
    cwd: Path | str,
    env: dict[str, str],
    timeout: float,
    stdin: bytes | None = None,
) -> bytes:
    """What a git of the policy's own prints (never a command's); ValueError when it fails,
    with git's first line, so the caller asks instead of guessing."""
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        problem = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ValueError(problem[0] if problem else f"git {args[0]} exited {done.returncode}")
    return done.stdout


def tracked(repo: Path) -> Tracked:
    """Env files and gitlinks in `repo`'s index; raises OSError, ValueError or
    subprocess.SubprocessError when the index can't be read."""
    dirs = own_git_dirs(repo)
    if dirs is None:
        return NOTHING
    git_dir = dirs[0]
    index = Path(git_dir) / "index"
    try:
        st = index.stat()
    except FileNotFoundError:
        return NOTHING
    key = (str(index), st.st_ino, st.st_size, st.st_mtime_ns)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None:
        return cached
    found = _list(repo, git_dir)
    with _LOCK:
        _CACHE[key] = found
    return found


def _list(repo: Path, git_dir: str) -> Tracked:
    env = policy_git_env(repo, git_dir)
    listed = git_output(["ls-files", "--stage", "-z"], cwd=repo, env=env, timeout=20)
    env_files: list[str] = []
    gitlinks: list[str] = []
    venv_like: set[str] = set()
    for record in listed.split(b"\0"):
        meta, tab, raw = record.partition(b"\t")
        if not tab:
            continue
        path = raw.decode("utf-8", "surrogateescape")
        if meta.startswith(GITLINK_MODE.encode()):
            gitlinks.append(path)
        elif is_env_file(path):
            env_files.append(path)
        folder, _, name = path.rpartition("/")
        if name == "pyvenv.cfg":
            venv_like.add(folder)
        elif folder == "bin" or folder.endswith("/bin"):
            venv_like.add(folder[:-3].rstrip("/"))
    # Unmerged paths appear once per stage.
    return Tracked(
        tuple(dict.fromkeys(env_files)), tuple(dict.fromkeys(gitlinks)), frozenset(venv_like)
    )
