"""git for the terminal policy: which git commands only read, which repository git uses,
and whether that repository's config names a program git would run.

git runs code named by repository config (diff drivers, filters, pagers,
credential helpers, `!` aliases...). The repo's own top-level `.git` is the
user's; any other repository is not: a planted `evil.git/` with
`core.fsmonitor=./payload` would run as soon as git looks at it. So:

- git may only ever work on the repository's own `.git`: `--git-dir`, `--bare`,
  `--work-tree` and `GIT_DIR=`-style variables are refused; `-C DIR` is
  followed, and git run from (or `-C`'d into) a folder whose repository is
  not the repo's own (`core.git_layout.foreign_repository`: nested `.git`,
  bare and `commondir` layouts) is refused;
- `--exec-path=DIR` (programs from another folder) is refused; `--exec-path`
  alone only prints it;
- when the repo's own config (`config`, `config.worktree`, read by git
  itself) sets a key that names a program (`configured_programs`), the
  command asks, saying which key: nothing a clone brought along runs unasked;
  the same holds for every populated submodule (gitlink) git may enter, whose
  config git follows there.

The environment (`environment.py`) adds no system or global config, no
fsmonitor and no hooks for every git the terminal runs, and neutralises
pagers, editors, ssh, credential helpers, signature programs and transports
for read-only ones.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

from hello_tui.core.git_layout import config_files, own_git_dirs
from hello_tui.tools.env_files import reaches_env_file
from hello_tui.tools.shell.git_index import git_output, tracked
from hello_tui.tools.shell.parse import Word

GIT_READ_ONLY = frozenset(
    {"status", "diff", "log", "show", "blame", "ls-files", "grep", "rev-parse", "help", "version"}
)
_GIT_HARMLESS_GLOBAL = frozenset(
    [
        "--no-pager",
        "-P",
        "--no-replace-objects",
        "--literal-pathspecs",
        "--glob-pathspecs",
        "--noglob-pathspecs",
        "--icase-pathspecs",
        "--no-optional-locks",
        "--no-advice",
    ]
)
_GIT_INFO_GLOBAL = frozenset(
    {"--version", "--help", "--html-path", "--man-path", "--info-path", "--exec-path"}
)
_GIT_UNSAFE_GLOBAL = {
    "-c": "git -c changes configuration (pagers, external diff tools, hooks)",
    "--config-env": "git --config-env changes configuration",
    "-p": "git -p starts a pager",
    "--paginate": "git --paginate starts a pager",
}
# `--bare` is one of them: git sets GIT_DIR to the working folder, skipping `.git`, so a
# committed `HEAD`, `objects/`, `refs/` and `config` at the top become the repository.
_GIT_REPOSITORY_OPTIONS = (
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--bare",
)
_GIT_UNSAFE_LONG = {
    "ext-diff": "git --ext-diff runs an external diff program",
    "open-files-in-pager": "git grep --open-files-in-pager starts a pager",
    "textconv": "git --textconv runs conversion programs",
    # The tips come from other repositories' refs (objects/info/alternates): commits no ref
    # or reflog of this one reaches, whose trees may hold anything.
    "alternate-refs": "git --alternate-refs shows commits from other repositories' refs",
}
_GIT_OUTPUT = ("output",)
# `git help`'s options that print a list or the manual page as `man` does; any other (`-w`,
# `--web`, `-i`, `--info` or an abbreviation such as `--we`) starts a browser or `info`.
_HELP_LISTINGS = frozenset(
    {
        "-a",
        "--all",
        "-g",
        "--guides",
        "-c",
        "--config",
        "-m",
        "--man",
        "--verbose",
        "--no-verbose",
        "--external-commands",
        "--no-external-commands",
        "--aliases",
        "--no-aliases",
        "--user-interfaces",
        "--developer-interfaces",
    }
)
# Listing forms that change nothing: subcommand -> options that keep it a listing.
_LISTING_OPTIONS = {
    "branch": {
        "-a",
        "--all",
        "-r",
        "--remotes",
        "-v",
        "-vv",
        "--verbose",
        "-l",
        "--list",
        "--show-current",
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--sort",
        "--format",
        "--color",
        "--no-color",
        "--column",
        "--no-column",
        "-i",
        "--ignore-case",
        "--abbrev",
        "--no-abbrev",
        "-q",
        "--quiet",
    },
    "tag": {
        "-l",
        "--list",
        "-n",
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--sort",
        "--format",
        "--color",
        "--column",
        "--no-column",
        "-i",
        "--ignore-case",
    },
}
REPOSITORY_VARIABLE = (
    "points git at another repository or changes what git runs; "
    "git may only use the repository's own .git"
)


@dataclass
class GitCheck:
    unsafe: str | None  # ask
    refusal: str | None = None  # refuse
    paths: list[Word] = field(default_factory=list)
    writes: list[Word] = field(default_factory=list)
    # `-C DIR` options in order: git changes into each before it does anything.
    chdirs: list[Word] = field(default_factory=list)


def is_git_variable(name: str) -> bool:
    return name.startswith("GIT_")


def _listing(sub: str, rest: list[Word]) -> bool:
    """`git branch`, `git tag -l`, `git stash list`, `git remote -v`, `git config --get`..."""
    values = [w.value for w in rest]
    if sub in _LISTING_OPTIONS:
        allowed = _LISTING_OPTIONS[sub]
        options = [v.split("=", 1)[0] for v in values if v.startswith("-")]
        patterns = [v for v in values if not v.startswith("-")]
        if not all(o in allowed for o in options):
            return False
        # Without -l/--list a name creates a branch or tag; with it, it is a pattern.
        listing = any(o in ("-l", "--list", "-a", "-r", "--all", "--remotes") for o in options)
        return (
            not patterns
            or listing
            or any(
                o in ("--contains", "--merged", "--no-merged", "--points-at", "--no-contains")
                for o in options
            )
        )
    if sub == "remote":
        return not values or values in (["-v"], ["--verbose"]) or values[0] == "get-url"
    if sub == "config":
        reads = {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list"}
        scopes = {"--local", "--show-origin", "--show-scope", "--null", "-z", "--name-only"}
        given = {v for v in values if v.startswith("-")}
        return bool(given & reads) and given <= reads | scopes | {"--type", "--default"}
    return False


def check_git(args: list[Word]) -> GitCheck:
    """Options and subcommand of one git command line (the folder is judged apart)."""
    paths: list[Word] = []
    chdirs: list[Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        text = word.value
        if not text.startswith("-"):
            break
        i += 1
        name = text.split("=", 1)[0]
        if text == "-C":
            if i >= len(args):
                return GitCheck("git -C without a folder is not checked")
            chdirs.append(args[i])
            i += 1
            continue
        if name == "--exec-path" and "=" in text:
            return GitCheck(None, "git --exec-path= runs git's programs from another folder")
        if name == "--help":  # `git --help ARGS` is `git help ARGS`
            return _check_help(args[i:], chdirs)
        if name in _GIT_INFO_GLOBAL:
            return GitCheck(None, chdirs=chdirs)
        if name in _GIT_REPOSITORY_OPTIONS:
            return GitCheck(None, f"git {name} {REPOSITORY_VARIABLE}")
        if name in _GIT_UNSAFE_GLOBAL:
            return GitCheck(_GIT_UNSAFE_GLOBAL[name])
        if text not in _GIT_HARMLESS_GLOBAL:
            return GitCheck(f"git option {text} is not checked")
    if i >= len(args):
        return GitCheck(None, paths=paths, chdirs=chdirs)
    sub = args[i].value
    rest = args[i + 1 :]
    if sub == "help" or (rest and rest[0].value == "--help"):
        # `git CMD --help ARGS` is `git help CMD ARGS` (git rewrites it before CMD sees it).
        return _check_help(rest if sub == "help" else [args[i], *rest[1:]], chdirs)
    if sub == "stash" and rest and rest[0].value in ("list", "show"):
        # `stash list` takes log's options and `stash show` diff's: `--output`, `--ext-diff`.
        return _check_options(sub, rest[1:], chdirs)
    if sub not in GIT_READ_ONLY:
        if _listing(sub, rest):
            return GitCheck(None, chdirs=chdirs)
        return GitCheck(f"git {sub} is not a read-only git command", paths=paths, chdirs=chdirs)
    return _check_options(sub, rest, chdirs)


def _check_help(rest: list[Word], chdirs: list[Word]) -> GitCheck:
    options = [w.value for w in rest if w.value.startswith("-")]
    if any(o not in _HELP_LISTINGS for o in options):
        return GitCheck("git help with that option may open a web browser or the info viewer")
    # git hands `man` the page `git<name>` (a name starting with `git` as it is), and man
    # reads a name holding a `/` as a file to format and print: `git help gitx/../.env`
    # prints `.env` once a folder `gitx` exists. No git page has a `/` in its name.
    if any("/" in w.value for w in rest if not w.value.startswith("-")):
        return GitCheck("git help with a / in the name makes man print that file")
    return GitCheck(None, chdirs=chdirs)


def _check_options(sub: str, rest: list[Word], chdirs: list[Word]) -> GitCheck:
    """The options and operands of a read-only subcommand: what they run, read and write."""
    paths: list[Word] = []
    unsafe = None
    writes: list[Word] = []
    for index, word in enumerate(rest):
        text = word.value
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            if any(o.startswith(name) for o in _GIT_OUTPUT) and len(name) >= 2:
                if eq:
                    writes.append(_value(word, value))
                elif index + 1 < len(rest):
                    writes.append(rest[index + 1])
                continue
            matched = next((k for k in _GIT_UNSAFE_LONG if name and k.startswith(name)), None)
            if matched:
                unsafe = unsafe or _GIT_UNSAFE_LONG[matched]
            unsafe = unsafe or _enters_submodules(name, value if eq else None)
            if eq:
                paths.append(_value(word, value))
        elif text.startswith("-"):
            if sub == "grep" and "O" in text[1:]:
                unsafe = unsafe or "git grep -O starts a pager"
            attached = _attached_file(sub, text)
            if attached:
                paths.append(_value(word, attached))
        else:
            paths.append(word)
    return GitCheck(unsafe, paths=paths, writes=writes, chdirs=chdirs)


# Short options whose value is a file git reads (`blame -S <revs-file>`, `-O <orderfile>`,
# `grep -f <patterns>`, `ls-files -X <excludes>`), and, for commands whose options git's
# parse-options reads, every short option that takes a value: the value may follow its
# option in the same word (`-S.env`, `-nf../x`), where it is no argument the path check
# sees. The diff options (`-O<file>`) start their word.
_SHORT_FILE_OPTIONS = {
    "blame": "S",
    "grep": "f",
    "ls-files": "X",
    "diff": "O",
    "log": "O",
    "show": "O",
}
_SHORT_VALUED = {"blame": "LSCM", "grep": "efABCmO", "ls-files": "xX"}


def _attached_file(sub: str, text: str) -> str | None:
    """The file named in the same word as its short option (`-S.env` -> `.env`), or None."""
    files = _SHORT_FILE_OPTIONS.get(sub, "")
    if sub not in _SHORT_VALUED:
        return text[2:] if len(text) > 2 and text[1] in files else None
    letters = text[1:]
    for index, letter in enumerate(letters):
        if letter in _SHORT_VALUED[sub]:
            rest = letters[index + 1 :]
            return rest if letter in files and rest else None
    return None


def _enters_submodules(name: str, value: str | None) -> str | None:
    """Options that make git go into submodules, undoing the environment's
    `diff.ignoreSubmodules=all` (`name` may be abbreviated, as git allows)."""
    if name.startswith("recurse") and "recurse-submodules".startswith(name):
        return "git --recurse-submodules works in the submodules, whose config is not checked"
    if name.startswith("sub") and "submodule".startswith(name):
        return "git --submodule shows the submodules' history or runs git diff in them"
    ignore = name.startswith("ignore-su") and "ignore-submodules".startswith(name)
    if ignore and value not in (None, "all"):
        return f"git --ignore-submodules={value} runs git inside the submodules"
    return None


def _value(parent: Word, value: str) -> Word:
    return Word(
        value=value,
        source=parent.source,
        glob=parent.glob,
        brace=parent.brace,
        problems=list(parent.problems),
        uncertain=list(parent.uncertain),
    )


# What read-only git commands run with, whatever the config says: no external diff, no
# textconv (`git grep` knows only the second).
_DRIVERS_OFF = {
    "diff": ("--no-ext-diff", "--no-textconv"),
    "log": ("--no-ext-diff", "--no-textconv"),
    "show": ("--no-ext-diff", "--no-textconv"),
    "blame": ("--no-textconv",),
    "grep": ("--no-textconv",),
}


def with_drivers_off(argv: list[str]) -> list[str]:
    """`git [options] sub args` with `_DRIVERS_OFF` after the subcommand, for a read-only run."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] == "-C" else 1
    if i >= len(argv) or argv[i] not in _DRIVERS_OFF:
        return argv
    return [*argv[: i + 1], *_DRIVERS_OFF[argv[i]], *argv[i + 1 :]]


# ---------------------------------------------------------------- what the config runs

# Repository config keys that name a program (or code) git may run, from git-config(1),
# matched on git's canonical key: section and name lowercased, the subsection as written.
# Not here: core.fsmonitor and core.hooksPath, which every command's environment overrides.
_PROGRAM_KEYS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p), why)
    for p, why in [
        (r"diff\.external", "an external diff program"),
        (r"diff\..+\.(textconv|command)", "a diff driver's program"),
        (r"filter\..+\.(clean|smudge|process)", "a filter program"),
        (r"merge\..+\.driver", "a merge driver's program"),
        (r"core\.(pager|editor|sshcommand|askpass|gitproxy|alternaterefscommand)", "a program"),
        (r"core\.worktree", "a work tree elsewhere"),
        (r"sequence\.editor", "an editor"),
        (r"pager\..+", "a pager"),
        (r"include\.path|includeif\..+\.path", "more config from another file"),
        (r"credential\.(.+\.)?helper", "a credential helper"),
        (r"gpg\.((.+\.)?program|ssh\.defaultkeycommand)", "a signature program"),
        (r"uploadpack\.packobjectshook", "a pack program"),
        (r"protocol\.(.+\.)?allow", "which transports (ext:: runs commands) git may use"),
        (r"remote\..+\.(uploadpack|receivepack|vcs)", "a transport program"),
        (r"hook\..+\.command", "a hook"),
        (r"tar\..+\.command", "an archive filter"),
        (r"(difftool|mergetool)\..+\.(cmd|path)", "a diff or merge tool"),
        (r"(browser|man)\..+\.(cmd|path)|web\.browser|instaweb\..+", "a viewer"),
        # Which viewer `git help` starts (a browser, `info`) and what it opens.
        (r"help\.(format|htmlpath|browser)|man\.viewer", "a viewer"),
        (r"guitool\..+\.cmd|interactive\.difffilter|imap\.tunnel", "a program"),
        (r"sendemail\.(.+\.)?(smtpserver|tocmd|cccmd|headercmd)", "a mail program"),
        (r"trailer\..+\.(command|cmd)", "a trailer program"),
    ]
]
# `alias.x = !cmd` and `submodule.x.update = !cmd` run a shell command.
_SHELL_VALUE_KEYS = re.compile(r"alias\..+|submodule\..+\.update")


def program_key(key: str, value: str) -> str | None:
    """What `key = value` in a repository's config makes git run, or None if nothing."""
    for pattern, why in _PROGRAM_KEYS:
        if pattern.fullmatch(key):
            return why
    if _SHELL_VALUE_KEYS.fullmatch(key) and value.lstrip().startswith("!"):
        return "a shell command"
    return None


_CONFIG_CACHE: dict[tuple[str, int, int, int], list[tuple[str, str]]] = {}
_CONFIG_LOCK = threading.Lock()


def _config_entries(path: Path) -> list[tuple[str, str]]:
    """Every (key, value) of one config file, as git reads it (includes not followed)."""
    st = path.stat()
    cache_key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
    with _CONFIG_LOCK:
        cached = _CONFIG_CACHE.get(cache_key)
    if cached is not None:
        return cached
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CEILING_DIRECTORIES": "/",
        "HOME": "/nonexistent",
    }
    listed = git_output(
        ["config", "--file", str(path), "--null", "--list"], cwd="/", env=env, timeout=10
    )
    entries = []
    for record in listed.split(b"\0"):
        if not record:
            continue
        key, _, value = record.decode("utf-8", "surrogateescape").partition("\n")
        entries.append((key, value))
    with _CONFIG_LOCK:
        _CONFIG_CACHE[cache_key] = entries
    return entries


def _programs_in(repo: Path, *, submodule: bool = False) -> list[str] | str:
    """The program keys one repository's config sets, or why that can't be known."""
    found: list[str] = []
    for path in config_files(repo):
        try:
            entries = _config_entries(path)
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            return f"git can't read the repository's config ({exc}), so what it runs is unknown"
        for key, value in entries:
            if submodule and key == "core.worktree" and _is_folder(path.parent, value, repo):
                continue  # an absorbed submodule's git dir names its own folder: git's layout
            why = program_key(key, value) or printed_file_key(key, value, repo)
            if why:
                found.append(f"{key} ({why})")
    return found


# Keys naming a file whose lines git prints when they are not what it expects:
# `git blame` says "invalid object name: <line>" for each line of blame.ignoreRevsFile, and
# every command reading attributes (diff, log -p, status) "<word> is not a valid attribute
# name" for each word of core.attributesFile that is none (`KEY = s3cr+t` shows `s3cr+t`).
_PRINTED_FILE_KEYS = {
    "blame.ignorerevsfile": "whose lines git blame prints",
    "core.attributesfile": "whose words git prints when they are no attribute names",
}


def printed_file_key(key: str, value: str, repo: Path) -> str | None:
    """Why `key = value` makes git print a file it should not show: an env file, or one
    outside the repo (git opens a relative name from the work tree's top)."""
    prints = _PRINTED_FILE_KEYS.get(key.lower())
    if prints is None or not value:
        return None
    path = Path(os.path.expanduser(value)) if value.startswith("~") else repo / value
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(os.path.realpath(repo)):
        return f"a file outside the repo, {prints}"
    if reaches_env_file(path, repo):
        return f"an env file, {prints}"
    return None


def _is_folder(git_dir: Path, value: str, folder: Path) -> bool:
    """`core.worktree = value` (relative to the git dir) names `folder` itself."""
    return os.path.realpath(git_dir / value) == os.path.realpath(folder)


# Submodules of submodules are checked this deep; deeper nesting asks.
MAX_SUBMODULE_DEPTH = 4


def _submodules(repo: Path, top: Path, depth: int) -> str | None:
    """Why a populated submodule of `repo` (at any depth) may run a program, or None.

    git enters every gitlink in the index whose folder holds a `.git` (status and
    diff run git inside it; `.gitmodules` can turn that on whatever our config
    says), and git there follows that repository's own config and attributes.
    """
    try:
        gitlinks = tracked(repo).gitlinks
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return f"git can't list the index of {_shown(repo, top)} ({exc}), so its submodules are unknown"
    for link in gitlinks:
        folder = repo / link
        if not os.path.lexists(folder / ".git"):
            continue  # not populated: git has no repository to enter
        real = Path(os.path.realpath(folder))
        if not real.is_relative_to(os.path.realpath(top)):
            return f"the submodule {_shown(folder, top)} leads out of the repo"
        if depth >= MAX_SUBMODULE_DEPTH:
            return (
                f"submodules nest deeper than {MAX_SUBMODULE_DEPTH} levels ({_shown(folder, top)})"
            )
        found = _programs_in(folder, submodule=True)
        if isinstance(found, str):
            return found
        if found:
            shown = ", ".join(dict.fromkeys(found))
            return (
                f"the submodule {_shown(folder, top)}'s git config sets {shown}, which git may run"
            )
        deeper = _submodules(folder, top, depth + 1)
        if deeper:
            return deeper
    return None


def _shown(path: Path, top: Path) -> str:
    try:
        return path.relative_to(top).as_posix() or "."
    except ValueError:
        return str(path)


# A credential in the repository's config: a URL with a password (`https://u:token@host`,
# how a clone made with a token keeps it), an HTTP header git sends (`http.extraHeader =
# Authorization: ...`), or a key named for one.
# An HTTP URL's user alone is one too: git sends it as the Basic-auth login, and hosts take
# a token there (`https://<token>@github.com/o/r`), so over http(s) and ftp(s) any user
# counts; an ssh user (`ssh://git@host`) is a login name.
_URL_PASSWORD = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@|(?i:https?|ftps?)://[^/@\s:]+@"
)
_CREDENTIAL_KEY = re.compile(
    r"http\.(.+\.)?extraheader|.*(pass|password|token|secret|api[-_]?key|credentials?)"
)
# A value shaped like a token a service issues, whatever key holds it (`deploy.apikey`,
# `ci.login`): GitHub (ghp_, gho_, ghs_, ghu_, ghr_, github_pat_), GitLab (glpat-), Slack
# (xoxb- …), OpenAI-style (sk-), AWS access key ids, Google API keys.
_TOKEN_VALUE = re.compile(
    r"\b(?:gh[oprsu]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}"
    r"|xox[abprs]-[\w-]{10,}|sk-[\w-]{16,}|AKIA[0-9A-Z]{16}|AIza[\w-]{35})"
)
# What prints the config's values: `git config --list/--get...`, `git remote -v/get-url`.
_SHOWS_CONFIG = frozenset({"config", "remote"})


def config_credentials(repo: Path) -> str | None:
    """The first key of the repo's own config that holds a credential, or None."""
    for path in config_files(repo):
        found = file_credential(path)
        if found:
            return found
    return None


def any_config_credentials(repo: Path) -> str | None:
    """The first credential in any git config a recursive read of the repo's `.git` meets:
    its own, and those of the submodules git keeps under `modules/` (a submodule cloned
    with a token keeps it there, in `.git/modules/<name>/config`)."""
    found = config_credentials(repo)
    if found:
        return found
    for path in submodule_config_files(repo):
        found = file_credential(path)
        if found:
            return found
    return None


def submodule_config_files(repo: Path) -> list[Path]:
    """The config files of the git directories below the repo's `modules/` folder, at any
    depth (a submodule's name may hold slashes, and nested submodules live in
    `modules/<a>/modules/<b>`); object stores are not walked."""
    dirs = own_git_dirs(repo)
    if dirs is None:
        return []
    found: list[Path] = []
    for top, folders, files in os.walk(Path(dirs[1]) / "modules"):
        folders[:] = [f for f in folders if f not in ("objects", "refs", "logs")]
        found.extend(Path(top) / name for name in files if name in GIT_CONFIG_NAMES)
    return found


# The names git gives a repository's own config files.
GIT_CONFIG_NAMES = frozenset({"config", "config.worktree"})


def _without_password(match: re.Match[str]) -> str:
    scheme, _, userinfo = match.group().partition("://")
    user, colon, _password = userinfo.partition(":")
    return f"{scheme}://{user}:…@" if colon else f"{scheme}://…@"


def file_credential(path: Path) -> str | None:
    """The first key of one git config file that holds a credential, or None."""
    try:
        entries = _config_entries(path)
    except (OSError, ValueError, subprocess.SubprocessError):
        return "a config git can't list"  # unknown: as if it held one
    for key, value in entries:
        # A URL with its password can be the key itself: `[url "https://u:TOKEN@host/"]`.
        if _URL_PASSWORD.search(value) or _URL_PASSWORD.search(key):
            return _URL_PASSWORD.sub(_without_password, key)  # named, never shown
        if _CREDENTIAL_KEY.fullmatch(key.lower()) or _TOKEN_VALUE.search(value):
            return key
    return None


def config_true(repo: Path, key: str) -> bool:
    """Whether the repo's own config sets boolean `key` (lowercase) on; unreadable: True."""
    on = False
    for path in config_files(repo):
        try:
            entries = _config_entries(path)
        except (OSError, ValueError, subprocess.SubprocessError):
            return True
        for name, value in entries:
            if name.lower() == key:  # the last one wins, as in git
                on = value.strip().lower() not in ("false", "no", "off", "0")
    return on


def shown_credential(args: list[str], repo: Path) -> str | None:
    """The credential `git args` prints from the repository's config, or None: any of the
    config for `git config` and `git remote`, an alias's value for `git help <alias>`."""
    if shows_config(args):
        return config_credentials(repo) or legacy_remote_credential(repo)
    aliases = _help_operands(args)
    if not aliases:
        return None
    for path in config_files(repo):
        try:
            entries = _config_entries(path)
        except (OSError, ValueError, subprocess.SubprocessError):
            return "a config git can't list"
        for key, value in entries:
            section, _, name = key.partition(".")
            if section == "alias" and name.lower() in aliases and _holds_credential(value):
                return key
    return None


# The remotes git reads besides the config's (remote.c): `$GIT_COMMON_DIR/remotes/<name>`
# (`URL: <url>` lines) and `branches/<name>` (a URL), which `git remote get-url` prints.
_LEGACY_REMOTE_FOLDERS = ("remotes", "branches")
_LEGACY_REMOTE_LIMIT = 1 << 16


def legacy_remote_credential(repo: Path) -> str | None:
    """The first legacy remote file of the repository whose URL holds a credential."""
    dirs = own_git_dirs(repo)
    if dirs is None:
        return None
    for folder in _LEGACY_REMOTE_FOLDERS:
        top = Path(dirs[1]) / folder
        for where, _dirs, files in os.walk(top):
            for name in files:
                path = Path(where) / name
                try:
                    with path.open("rb") as handle:
                        text = handle.read(_LEGACY_REMOTE_LIMIT).decode("utf-8", "replace")
                except OSError:
                    return f"{folder}/{name} (a remote file git can't read)"
                if _URL_PASSWORD.search(text):
                    return f"the remote file {path.relative_to(top.parent).as_posix()}'s URL"
    return None


# What makes a value a credential when its key does not say so: a URL with a password or
# token user, an HTTP header that authenticates (`-c http.extraHeader=Authorization: ...`).
_AUTH_HEADER = re.compile(r"authorization\s*:|extraheader", re.IGNORECASE)


def _holds_credential(value: str) -> bool:
    return bool(_URL_PASSWORD.search(value) or _AUTH_HEADER.search(value))


def _help_operands(args: list[str]) -> set[str]:
    """The names `git help` (`git --help`, `git X --help`) is asked about, lowercased: git
    prints "'x' is aliased to '<value>'" for an alias."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--help":
        i += 2 if args[i] == "-C" else 1
    rest = args[i:]
    if rest[:1] == ["--help"] or rest[:1] == ["help"]:
        rest = rest[1:]
    elif len(rest) > 1 and rest[1] == "--help":
        rest = [rest[0]]
    else:
        return set()
    return {w.lower() for w in rest if not w.startswith("-")}


def shows_config(args: list[str]) -> bool:
    """Whether `git args` prints the repository config's values (or its remotes' URLs)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] == "-C" else 1
    return i < len(args) and args[i] in _SHOWS_CONFIG


def configured_programs(repo: Path) -> str | None:
    """Why git could run a program the config of the repo, or of a submodule git may enter,
    names; None when none is set."""
    found = _programs_in(repo)
    if isinstance(found, str):
        return found
    if found:
        shown = ", ".join(dict.fromkeys(found))
        return f"the repository's git config sets {shown}, which git may run"
    return _submodules(repo, repo, 0)
