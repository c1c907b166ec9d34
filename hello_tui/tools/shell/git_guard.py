"""git for the terminal policy: which git commands only read, and which repository git uses.

git runs code named by repository config (core.fsmonitor, hooks, pagers,
diff drivers). The repo's own top-level `.git` is the user's; any other
repository is not: a planted `evil.git/` with `core.fsmonitor=./payload`
would run as soon as git looks at it. So git may only ever work on the
repository's own `.git`:

- `-C`, `--git-dir`, `--work-tree` and `GIT_DIR=`-style variables are refused;
- so is any git command run from a folder that lies inside a nested
  repository (a `.git` below the repo root, or a bare repository);
- `--exec-path=DIR` (programs from another folder) is refused; `--exec-path`
  alone only prints it.

The environment (`environment.py`) adds no system or global config, no
fsmonitor and no hooks for every git the terminal runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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
        "--bare",
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
_GIT_REPOSITORY_OPTIONS = ("-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix")
_GIT_UNSAFE_LONG = {
    "ext-diff": "git --ext-diff runs an external diff program",
    "open-files-in-pager": "git grep --open-files-in-pager starts a pager",
    "textconv": "git --textconv runs conversion programs",
}
_GIT_OUTPUT = ("output",)
_HELP_VIEWERS = frozenset({"-w", "--web", "-i", "--info"})
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
    if sub == "stash":
        return bool(values) and values[0] in ("list", "show")
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
    i = 0
    while i < len(args):
        word = args[i]
        text = word.value
        if not text.startswith("-"):
            break
        i += 1
        name = text.split("=", 1)[0]
        if name == "--exec-path" and "=" in text:
            return GitCheck(None, "git --exec-path= runs git's programs from another folder")
        if name in _GIT_INFO_GLOBAL:
            return GitCheck(None)
        if name in _GIT_REPOSITORY_OPTIONS or (name.startswith("-C") and len(name) > 2):
            return GitCheck(None, f"git {name} {REPOSITORY_VARIABLE}")
        if name in _GIT_UNSAFE_GLOBAL:
            return GitCheck(_GIT_UNSAFE_GLOBAL[name])
        if text not in _GIT_HARMLESS_GLOBAL:
            return GitCheck(f"git option {text} is not checked")
    if i >= len(args):
        return GitCheck(None, paths=paths)
    sub = args[i].value
    rest = args[i + 1 :]
    if sub not in GIT_READ_ONLY:
        if _listing(sub, rest):
            return GitCheck(None)
        return GitCheck(f"git {sub} is not a read-only git command", paths=paths)
    unsafe = None
    if sub == "help" and any(w.value in _HELP_VIEWERS for w in rest):
        unsafe = "git help opens a web browser or the info viewer"
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
            if eq:
                paths.append(_value(word, value))
        elif text.startswith("-"):
            if sub == "grep" and "O" in text[1:]:
                unsafe = unsafe or "git grep -O starts a pager"
        else:
            paths.append(word)
    return GitCheck(unsafe, paths=paths, writes=writes)


def _value(parent: Word, value: str) -> Word:
    return Word(
        value=value,
        source=parent.source,
        glob=parent.glob,
        brace=parent.brace,
        problems=list(parent.problems),
        uncertain=list(parent.uncertain),
    )


# ---------------------------------------------------------------- which repository


def looks_like_git_dir(folder: Path) -> bool:
    """git's own test for a repository folder: HEAD, objects/ and refs/ (a bare repo)."""
    try:
        return (
            (folder / "HEAD").is_file()
            and (folder / "objects").is_dir()
            and ((folder / "refs").is_dir() or (folder / "commondir").is_file())
        )
    except OSError:
        return True  # can't tell: treat it as a repository


def nested_repository(cwd: Path, repo: Path) -> Path | None:
    """The nested repository git would use from `cwd`, or None when it is the repo's own.

    git looks for `.git` (folder or file) or a bare repository in the working
    folder and each parent; the first hit below the repo root wins.
    """
    try:
        current = cwd.resolve()
    except OSError:
        return cwd
    if not current.is_relative_to(repo):
        return current
    while current != repo:
        if (current / ".git").exists() or (current / ".git").is_symlink():
            return current
        if looks_like_git_dir(current):
            return current
        current = current.parent
    return None
