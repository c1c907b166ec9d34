"""Env files that were ever committed: `git log -p` and `git show <old>` still print them.

A `.env` committed once and then removed (`git rm --cached .env`, a later commit
deleting it) is gone from the index, but every commit that added, changed or
deleted it still holds its contents, and `git show <that commit>`, `git log -p`,
`git diff <old> <new>` and `git grep KEY <old>` print them. The policy needs the
paths of such files to know when a command reaching commits could show one.

The list comes from one `git log` over every ref and every reflog, limited to
env-file names by pathspec, run with nothing that could start a program (the
index listing's environment). It is cached on the refs' state (HEAD, packed and
loose refs, reflogs, a reftable's table list): a command pays a few `stat`s, and
one history walk per change of the refs. A walk that takes too long fails, so the
command asks instead of waiting.

Objects no ref or reflog reaches are not in that walk: a `.env` staged once and
unstaged (`git add -A` then `git reset`) stays a loose blob, a dropped stash a
dangling commit, and `find .git/objects` lists their ids. A revision that names an
object by its id (or through a pseudo-ref such as `ORIG_HEAD`, `FETCH_HEAD`, which
`--all` leaves out) is checked on its own (`unreached_object`): a commit must be
reachable from a ref or reflog, and anything else by id asks, as what it holds has
no file name to judge.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from pathlib import Path

from hello_tui.core.env_names import is_env_file
from hello_tui.core.git_layout import own_git_dirs, policy_git_env
from hello_tui.tools.shell.git_index import git_output

# Every name the env rule matches holds `.env` (`.env.local`, `prod.env`, `.env~`), in any
# folder; the listing is filtered by the rule itself, so this only needs to be a superset.
_ENV_PATHSPECS = (":(glob,icase)**/*.env*",)
_WALK_SECONDS = 10.0
# A walk's paths, or the reason it failed: a history too long to walk in time stays so
# until the refs change, and a command asks at once instead of waiting each time.
_CACHE: dict[tuple[object, ...], tuple[str, ...] | str] = {}
_LOCK = threading.Lock()


def env_files_in_history(repo: Path) -> tuple[str, ...]:
    """Repo paths of env files any commit reachable from a ref or reflog holds or held.

    Raises OSError, ValueError or subprocess.SubprocessError when history can't be read.
    """
    dirs = own_git_dirs(repo)
    if dirs is None:
        return ()
    git_dir, common = dirs
    key = _refs_state(git_dir, common)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is None:
        try:
            cached = _walk(repo, git_dir, common)
        except subprocess.TimeoutExpired:
            cached = f"its history is too long to check within {_WALK_SECONDS:g} s"
        with _LOCK:
            _CACHE[key] = cached
    if isinstance(cached, str):
        raise ValueError(cached)  # noqa: TRY004 - the callers' "history can't be read"
    return cached


def _walk(repo: Path, git_dir: str, common: str) -> tuple[str, ...]:
    if not _has_refs(common):
        return ()
    listed = git_output(
        ["log", "--all", "--reflog", "--format=", "--name-only", "-z", "--no-renames"]
        # Every commit: without --full-history a pathspec prunes the side of a merge that
        # is the same as the other for those paths (a branch that added and removed a
        # `.env`, a stash's untracked files). A merge's own files too (`-c`: an env file
        # added while resolving it is in no parent), and a root commit's.
        + ["--full-history", "-c", "--root", "--no-relative"]
        # Nothing a repository's config could turn on that starts a program (gpg for
        # log.showSignature; a diff driver, though a name listing compares no contents).
        + ["--no-show-signature", "--no-textconv", "--no-ext-diff"]
        # log.follow would follow the one pathspec (git fails on its magic) instead.
        + ["--no-follow", "--", *_ENV_PATHSPECS],
        cwd=repo,
        # The objects as stored, not as `refs/replace/` swaps them: a command may see
        # either (`git --no-replace-objects log -p`), and each replacement is itself the
        # tip of its ref under refs/replace/, which `--all` walks.
        env=policy_git_env(repo, git_dir) | {"GIT_NO_REPLACE_OBJECTS": "1"},
        timeout=_WALK_SECONDS,
    )
    names = (raw.decode("utf-8", "surrogateescape").strip("\n") for raw in listed.split(b"\0"))
    return tuple(sorted({name for name in names if name and is_env_file(name)}))


def _has_refs(common: str) -> bool:
    """Whether any ref could name a commit: `git log --all` in a fresh `git init` fails."""
    if os.path.exists(os.path.join(common, "packed-refs")):
        return True
    if os.path.isdir(os.path.join(common, "reftable")):
        return True
    for _folder, _dirs, files in os.walk(os.path.join(common, "refs")):
        if files:
            return True
    return False


def _refs_state(git_dir: str, common: str) -> tuple[object, ...]:
    """What changes whenever a ref or reflog does: the identity of each file git keeps
    them in, and each folder's (a loose ref is written by renaming into its folder)."""
    state: list[object] = [git_dir, common]
    for path in (
        os.path.join(git_dir, "HEAD"),
        os.path.join(git_dir, "logs", "HEAD"),
        os.path.join(common, "packed-refs"),
        os.path.join(common, "reftable", "tables.list"),
    ):
        state.append(_identity(path))
    for top in (os.path.join(common, "refs"), os.path.join(common, "logs", "refs")):
        for folder, dirs, files in os.walk(top):
            dirs.sort()
            state.append((folder, _identity(folder)))
            # An update in place (a reflog's append) keeps the folder's mtime.
            state.extend((name, _identity(os.path.join(folder, name))) for name in sorted(files))
    return tuple(state)


def _identity(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


# What git resolves as an object id: full or abbreviated, any case, and `describe` output,
# where whatever precedes `-g<hex>` is not looked up (`x-0-g1234abcd` is object 1234abcd,
# git's get_describe_name); and the pseudo-refs outside refs/ that `--all` does not walk:
# any name of capitals, `_` and `-` is looked up as `$GIT_DIR/<name>` (`ORIG_HEAD`,
# `FETCH_HEAD`, `AUTO_MERGE`, `MERGE_AUTOSTASH`...), HEAD aside, which `--all` walks.
_BY_ID = re.compile(r"[0-9a-fA-F]{4,64}|.*-g[0-9a-fA-F]{4,64}|(?!HEAD$)[A-Z_-]+")
# Where a revision's name ends: `~2`, `^{tree}`, `:path`, `@{1}`.
_SUFFIX = re.compile(r"[~^:@]")


def named_objects(revision: str) -> list[str]:
    """The names in one revision argument (`a..b`, `^a`, `a~2:path`) that git resolves by
    object id or pseudo-ref, not through refs the history walk covers."""
    names = []
    for part in re.split(r"\.{2,3}", revision):
        base = _SUFFIX.split(part.removeprefix("^"), maxsplit=1)[0]
        if _BY_ID.fullmatch(base):
            names.append(base)
    return names


def unreached_object(repo: Path, revision: str) -> str | None:
    """Why `revision` may reach an object the history walk did not see, or None.

    Raises OSError, ValueError or subprocess.SubprocessError when git can't be asked.
    """
    names = named_objects(revision)
    dirs = own_git_dirs(repo) if names else None
    if dirs is None:
        return None
    env = policy_git_env(repo, dirs[0])
    for name in names:
        if "\n" in name:
            return f"{name!r} holds a line break, so what git resolves it to can't be asked"
        # Names come on stdin, where one starting with `-` is no option.
        found = git_output(
            ["cat-file", "--batch-check"],
            cwd=repo,
            env=env,
            timeout=_WALK_SECONDS,
            stdin=name.encode("utf-8", "surrogateescape") + b"\n",
        )
        fields = found.decode("ascii", "replace").split()
        if len(fields) != 3 or fields[1] == "missing":
            continue  # no such object: git will say so and show nothing
        object_id, kind_name = fields[0], fields[1]
        if kind_name != "commit":
            return f"{name} names a git {kind_name} by its id, whose files can't be judged"
        unreached = git_output(
            ["rev-list", "-n", "1", object_id, "--not", "--all", "--reflog"],
            cwd=repo,
            env=env,
            timeout=_WALK_SECONDS,
        )
        if unreached.strip():
            return f"{name} names a commit that no branch, tag or reflog reaches"
    return None
