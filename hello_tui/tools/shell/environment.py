"""The environment a command gets: an allow-list, never the user's whole environment.

The user's environment holds API keys, tokens, agent sockets and proxy
passwords; a deny-list always misses one. A command gets only:

- PATH (to find programs), LANG / LANGUAGE / LC_* and TZ (how text and time
  are shown), USER / LOGNAME (git and ssh look the user up by name);
- a private HOME and TMPDIR (TMP, TEMP) in a folder of its own, so no dotfile
  of the user's (.gitconfig, .netrc, .npmrc) is read and nothing is left behind;
- TERM=dumb, pagers that print (PAGER, GIT_PAGER = cat) and an editor that
  gives up (GIT_EDITOR=true), since no one can answer a prompt;
- LESSSECURE=1: `less` without shell escapes, log files or input filters;
- VIRTUAL_ENV when the active virtual environment's folder is readable;
- git's confinement: no system or global config, no system attributes, no
  fsmonitor, no hooks, no optional index locks, and no discovery of a
  repository above the repo (GIT_CEILING_DIRECTORIES).

Any allowed value that still contains the model key (or another secret) is
dropped: only secrets of at least `MIN_SECRET_LENGTH` characters count, since
a local server's dummy key (`k`, `x`, `EMPTY`) would otherwise take every
value holding that letter with it (`GIT_CONFIG_KEY_0` among them).

Read-only commands get more of git switched off (`read_only_git_environment`):
pagers, editors, ssh, askpass, credential helpers, signature programs and
every transport, whatever the repository's config says, and no recursion into
submodules; and a PATH that finds no program in the repo (`read_only_path`).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from hello_tui.tools.shell.git_index import tracked

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
PASSED_THROUGH = ("PATH", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME")
# git reads these as `git -c` settings, which override the repository's own config.
GIT_FORCED_CONFIG = (("core.fsmonitor", "false"), ("core.hooksPath", "/dev/null"))
# For read-only commands, also every program-naming setting that has a harmless value.
GIT_READ_ONLY_CONFIG = (
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
    ("core.sshCommand", "false"),
    ("core.askPass", "true"),
    ("credential.helper", ""),  # an empty helper empties the list the repo configured
    ("gpg.program", "gpg"),
    ("gpg.openpgp.program", "gpg"),
    ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("protocol.allow", "never"),
    # No recursion into submodules: each is a repository whose config (filters, drivers)
    # no one checked, and git's children for it inherit these entries. `.gitmodules`'
    # `submodule.<name>.ignore` still overrides the first, so the policy also checks
    # the config of every submodule git could enter (`git_guard.configured_programs`).
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("diff.submodule", "short"),
)
GIT_READ_ONLY_VARIABLES = {
    "GIT_SSH_COMMAND": "false",
    "GIT_ASKPASS": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    # Set (even empty), it overrides every protocol.*.allow: no transport, so no ext:: command.
    "GIT_ALLOW_PROTOCOL": "",
}
# Shorter values are not secrets but placeholders; dropping every value that holds one
# would take unrelated values with it.
MIN_SECRET_LENGTH = 8


def without_secrets(env: Mapping[str, str], secrets: tuple[str, ...]) -> dict[str, str]:
    """`env` without the values that contain one of `secrets` (those long enough to be one)."""
    real = [s for s in secrets if len(s) >= MIN_SECRET_LENGTH]
    return {k: v for k, v in env.items() if not any(s in v for s in real)}


def _forced_config(env: dict[str, str], settings: tuple[tuple[str, str], ...]) -> None:
    start = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    for offset, (key, value) in enumerate(settings):
        env[f"GIT_CONFIG_KEY_{start + offset}"] = key
        env[f"GIT_CONFIG_VALUE_{start + offset}"] = value
    env["GIT_CONFIG_COUNT"] = str(start + len(settings))


def git_environment(repo: Path) -> dict[str, str]:
    env = {
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_PAGER": "cat",
        "GIT_EDITOR": "true",  # a commit without -m aborts instead of waiting for an editor
        "GIT_CEILING_DIRECTORIES": str(repo.parent),
    }
    _forced_config(env, GIT_FORCED_CONFIG)
    return env


def read_only_git_environment(env: Mapping[str, str], repo: Path | None = None) -> dict[str, str]:
    """`env` (a command's environment) with git's programs switched off for a read-only run,
    and (given the repo) a PATH that finds no program in the repo (`read_only_path`)."""
    out = dict(env)
    out.update(GIT_READ_ONLY_VARIABLES)
    _forced_config(out, GIT_READ_ONLY_CONFIG)
    if repo is not None and "PATH" in out:
        out["PATH"] = read_only_path(out["PATH"], repo)
    return out


def read_only_path(path_value: str, repo: Path) -> str:
    """PATH without the folders that would find a program in the repo.

    The policy lets `ls`, `cat`, `git` run because they are the system's programs, and
    git, `file -z` and the like start others by name (`gpg`): with the repo's `bin/` on
    the user's PATH (direnv's `PATH_add bin`, a project's scripts folder), bash would run
    a committed `bin/ls` instead. So an entry inside the repo is dropped, and so are empty
    and relative ones, which bash looks up from the working folder (always in the repo
    here). A virtual environment's `bin` (beside a `pyvenv.cfg`) stays when the user made
    it (tools such as rg are installed there): not when its `pyvenv.cfg` or a file in its
    `bin/` is tracked, since then it came with the repository.
    """
    root = os.path.realpath(repo)
    below = root.rstrip("/") + "/"
    kept = []
    for entry in path_value.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        real = _real_folder(entry)
        if (real == root or real.startswith(below)) and not _users_venv(real, root):
            continue
        kept.append(entry)
    return os.pathsep.join(kept) or DEFAULT_PATH


def _users_venv(bin_folder: str, root: str) -> bool:
    """`bin_folder` (inside the repo at `root`) is the `bin` of a virtual environment the
    user made: beside a `pyvenv.cfg`, and nothing of it tracked. An index that can't be
    read counts as tracking it."""
    venv = os.path.dirname(bin_folder)
    if not os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        return False
    try:
        planted = tracked(Path(root)).venv_like
    except (OSError, ValueError, subprocess.SubprocessError):
        return False
    relative = os.path.relpath(venv, root).replace(os.sep, "/")
    return (relative if relative != "." else "") not in planted


def _real_folder(entry: str) -> str:
    """The folder `entry` names, as the kernel resolves it.

    Every command asks this of every PATH entry: one open and one readlink of its
    descriptor (the kernel walks the links) instead of `realpath`'s lstat of each
    component, a third of the cost. A missing entry (which a command may create later,
    so it is asked anew each time) is resolved as far as it exists, by `realpath`."""
    flags = getattr(os, "O_PATH", 0)
    if not flags:
        return os.path.realpath(entry)
    try:
        fd = os.open(entry, flags | os.O_CLOEXEC)
    except OSError:
        return os.path.realpath(entry)
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # no /proc
        return os.path.realpath(entry)
    finally:
        os.close(fd)


def private_dirs(private_dir: Path) -> tuple[Path, Path]:
    """(HOME, TMPDIR) inside a command's private folder, created if missing."""
    home, tmp = private_dir / "home", private_dir / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    return home, tmp


def command_environment(
    source: Mapping[str, str],
    repo: Path,
    private_dir: Path,
    *,
    secrets: tuple[str, ...] = (),
    readable: tuple[Path, ...] = (),
    folders: tuple[Path, Path] | None = None,
) -> dict[str, str]:
    """The whole environment of one command, built from `source` (usually os.environ).

    `readable` lists the folders the sandbox lets the command read; an active
    virtual environment is passed on only when it is among them. `folders`
    are HOME and TMPDIR when the caller made them already.
    """
    home, tmp = folders or private_dirs(private_dir)
    env = {name: source[name] for name in PASSED_THROUGH if source.get(name)}
    # The names alone are walked: reading every value of os.environ decodes them all.
    env.update({name: source[name] for name in source if name.startswith("LC_")})
    env.setdefault("PATH", DEFAULT_PATH)
    venv = source.get("VIRTUAL_ENV")
    if venv and any(Path(os.path.realpath(venv)).is_relative_to(r) for r in readable):
        env["VIRTUAL_ENV"] = venv
    env.update(
        HOME=str(home),
        TMPDIR=str(tmp),
        TMP=str(tmp),
        TEMP=str(tmp),
        TERM="dumb",
        PAGER="cat",
        LESSSECURE="1",
    )
    env.update(git_environment(repo))
    return without_secrets(env, secrets)


# A long-running tool server (MCP) is a program the user chose to start, not a command
# the model wrote: it keeps the same allow-list but the user's real HOME, TMPDIR and
# TERM, because such servers find their caches, runtimes and settings there.
SERVER_PASSED_THROUGH = (*PASSED_THROUGH, "HOME", "TMPDIR", "TERM")


def server_environment(
    source: Mapping[str, str], *, secrets: tuple[str, ...] = ()
) -> dict[str, str]:
    """The allow-listed environment a tool server starts with (its own `env` is added on top)."""
    env = {name: source[name] for name in SERVER_PASSED_THROUGH if source.get(name)}
    env.update({name: value for name, value in source.items() if name.startswith("LC_")})
    env.setdefault("PATH", DEFAULT_PATH)
    return without_secrets(env, secrets)
