"""Whether a read-only git command could print an env file's contents without naming it.

`cat .env` and `git diff -- .env` name the file; `git diff`, `git show HEAD`,
`git log -p` and `git grep KEY` print every tracked file they touch, and
`git grep --no-index` / `--untracked` every file in the tree. Such a command
asks when an env file is among what it would read: a tracked one (from the
index, `git_index.tracked`) or, for the tree walks, one on disk. Its own
pathspecs may leave them out (`-- src`, `':!.env'`); a repo with no env file
costs one cached index lookup.

Asking was chosen over appending `:(exclude)` pathspecs: it holds for
commands run through a shell (`git diff | head`) too, and changes no output.
An env file only in history (removed from the index, still in old commits)
counts for the commands that read commits (`git_history`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hello_tui.tools.env_files import RepoEnvFiles
from hello_tui.tools.shell import globbing
from hello_tui.tools.shell.git_guard import config_true
from hello_tui.tools.shell.git_history import env_files_in_history, unreached_object
from hello_tui.tools.shell.git_index import tracked

CONTENT_COMMANDS = frozenset({"diff", "show", "log", "grep", "stash"})
# Options after which the next word is the option's value, never a pathspec.
_GREP_VALUED = frozenset(
    {"--max-count", "--max-depth", "--threads", "--regexp", "--file", "--context"}
    | {"--after-context", "--before-context"}
)
_GREP_SHORT_VALUED = "efABCm"  # git grep's short options that take a value
# log, show and diff: every option of git's revision parser (`parse_long_opt`), of its diff
# options and of log's own that takes the next word as its value when none is attached
# (`--line-prefix src`, `--exclude a.txt`). Not those whose value is optional, and so only
# ever `--opt=value` (`--abbrev leak`). The revision parser takes no abbreviations.
_LOG_VALUED = frozenset(
    {"-n", "--max-count", "--skip", "--max-age", "--min-age", "--since", "--since-as-filter"}
    | {"--after", "--before", "--until", "--author", "--committer", "--grep", "--grep-reflog"}
    | {"--encoding", "--date", "--exclude", "--exclude-hidden", "--glob", "--diff-merges"}
    | {"--stat-width", "--stat-name-width", "--stat-graph-width", "--stat-count"}
    | {"--ws-error-highlight", "--src-prefix", "--dst-prefix", "--line-prefix"}
    | {"--inter-hunk-context", "--output-indicator-new", "--output-indicator-old"}
    | {"--output-indicator-context", "--ignore-matching-lines", "--diff-algorithm"}
    | {"--anchored", "--word-diff-regex", "--color-moved-ws", "--rotate-to", "--skip-to"}
    | {"--find-object", "--output", "--decorate-refs", "--decorate-refs-exclude"}
)
# Their short options, read by git's option parser, bundle (`-pO a.txt`, `-sI x`): flags,
# options whose optional value is the rest of the word, and those that take the rest of
# the word or, when none is left, the next one.
_LOG_SHORT_FLAGS = "puszRabwWDq"
_LOG_SHORT_OPTIONAL = "UXBMC"
_LOG_SHORT_VALUED = "lISGOL"
# What makes diff/show print no patch, and log print one (or search contents).
_NO_PATCH = frozenset(
    {"stat", "numstat", "shortstat", "name-only", "name-status", "summary"}
    | {"dirstat", "raw", "no-patch", "quiet", "compact-summary"}
)
_PATCH_LONG = frozenset(
    {"patch", "unified", "cc", "word-diff", "color-words", "remerge-diff"}
    | {"diff-merges", "dd", "function-context", "patch-with-stat", "patch-with-raw"}
    | {"binary"}  # git's --binary implies --patch, whatever --stat said before it
    | {"check"}  # every added line with a whitespace error, whatever else is shown
)
_OTHER_EXACT = frozenset({"color"})
# git's revision options that add revisions besides the words naming them (spelled out in
# full: git's revision parser takes no abbreviations).
_REVISION_OPTION = re.compile(
    r"--(?:all|reflog|stdin|bisect|alternate-refs|indexed-objects|single-worktree"
    r"|walk-reflogs|glob|exclude-hidden|(?:branches|tags|remotes)(?:=.*)?)|--glob=.*|-g",
    re.DOTALL,
)
_PATCH_SHORT = re.compile(r"-[puUcmWLSG].*|-\w*[pu]\w*")
_MAX_WALK = 20000


def shown_env_file(args: list[str], repo: Path, cwd: Path) -> str | None:
    """Why the git command `args` (after `git`) may print an env file, or None."""
    i, literal, icase = 0, False, False
    while i < len(args) and args[i].startswith("-"):
        literal = literal or args[i].endswith("-pathspecs")
        icase = icase or args[i] == "--icase-pathspecs"  # every pathspec ignores case
        i += 2 if args[i] == "-C" else 1  # -C's folder is judged by the caller (`cwd`)
    if i < len(args) and args[i] == "status" and _status_verbose(args[i + 1 :]):
        # `git status -v` prints the staged changes as `git diff --cached` does (`-vv` the
        # unstaged ones too), of the whole index: its pathspecs limit the list, not the diff.
        return _shown("status -v", "diff", ["--cached"], repo, cwd)
    if i >= len(args) or args[i] not in CONTENT_COMMANDS:
        return None
    sub, rest = args[i], args[i + 1 :]
    label = " ".join(args[i : i + 2]) if sub == "stash" else sub
    if sub == "stash":
        # `stash show` is `show` of a stash (its patch with stash.showPatch, its untracked
        # files with stash.showIncludeUntracked), `stash list` takes log's options.
        if not rest or rest[0] not in ("show", "list"):
            return None
        sub, rest = ("show" if rest[0] == "show" else "log"), rest[1:]
    return _shown(label, sub, rest, repo, cwd, literal=literal, icase=icase)


def _shown(
    label: str,
    sub: str,
    rest: list[str],
    repo: Path,
    cwd: Path,
    *,
    literal: bool = False,
    icase: bool = False,
) -> str | None:
    """Why `git <sub> <rest>` (a content command) may print an env file, or None."""
    # `-s`, `--stat`, `--name-only` quiet a commit's patch, never a blob: `git show -s <id>`
    # prints the blob whole, so show's revisions are checked whatever its options say, and
    # `git show -s --indexed-objects` prints every blob of the index.
    given = _without_values(sub, rest)
    blobs = sub == "show" and "--indexed-objects" in given
    contents = blobs or _shows_contents(sub, given)
    if not (contents or sub == "show") or _blobs_only(sub, given):
        return None
    walks = sub == "grep" and any(_walks_tree(w) for w in rest)
    specs, revisions = _words(sub, rest, cwd)
    if any(w == "--stdin" for w in rest):
        return f"git {label} --stdin reads its revisions from stdin, which can't be checked"
    for revision in revisions:
        unreached = unreached_object(repo, revision)
        if unreached:
            return f"git {label}: {unreached}, and it may hold an env file"
    if not contents:
        return None
    candidates = set(tracked(repo).env_files)
    old: set[str] = set()  # only in commits
    # A file git reads from the work tree may be a hard link to an env file (tracked
    # `notes.txt` made a second name of `.env`): `git diff` would show the keys as changes.
    env = RepoEnvFiles(repo)
    if walks or env.walk_check() is not None:
        found = _env_files_on_disk(repo, env)
        if isinstance(found, str):
            return found
        candidates |= found
    elif _reaches_commits(sub, given, revisions):
        old = set(env_files_in_history(repo)) - candidates
        candidates |= old
    if not candidates:
        return None
    include, exclude = _pathspecs(specs)
    if sub == "log" and _follows(given, repo):
        include = []  # it follows the file back through renames: `git mv .env a.txt`
    if sub in ("log", "show") and "--full-diff" in given[: _separator(sub, given)]:
        # The pathspecs choose the commits, and each one's whole diff is shown.
        include, exclude = [], []
    try:
        here = cwd.relative_to(repo).as_posix().removeprefix(".")
    except ValueError:
        here = ""
    for path in sorted(candidates):
        if include and not any(_matches(s, path, here, icase=icase) for s in include):
            continue
        if not literal and any(_matches(s, path, here, exact=True) for s in exclude):
            continue
        where = " (from the history)" if path in old else ""
        return f"git {label} may show {path}{where}, which may hold keys"
    return None


def _without_values(sub: str, rest: list[str]) -> list[str]:
    """`rest` without the words that are an option's value (`--skip-to --raw` is one
    option, not `--raw`; `--since 1,1:a.txt` names no file), as git's parsers read them."""
    split = _separator(sub, rest)
    kept: list[str] = []
    skip = options_done = False
    for word in rest[:split]:
        if skip:
            skip = False
            continue
        kept.append(word)
        if word == "--end-of-options":
            options_done = True
        elif word.startswith("-") and not options_done:
            skip = _takes_next_word(sub, word)
    return kept + rest[split:]


def _status_verbose(rest: list[str]) -> bool:
    """`git status` with `-v`/`--verbose` in its long format. Of `-v` and `--no-verbose`,
    as of the formats (`-s`, `--porcelain[=v2]`, `--long`, their `--no-` forms, which leave
    the default, long), the last given wins; `-z` without a format is `--porcelain` (git
    refuses it with `--long`). Long options are abbreviated as git allows (`--verb`)."""
    state: dict[str, str | bool] = {"verbose": False, "format": "long", "null": False}
    for word in rest:
        if word == "--":
            break
        state.update(_status_settings(word))
    return bool(state["verbose"]) and state["format"] == "long" and not state["null"]


# git status's long options that decide whether `-v` prints the diff, and what each sets.
_STATUS_OPTIONS: tuple[tuple[str, tuple[str, str | bool]], ...] = (
    ("verbose", ("verbose", True)),
    ("no-verbose", ("verbose", False)),
    ("short", ("format", "short")),
    ("porcelain", ("format", "short")),
    ("long", ("format", "long")),
    ("no-short", ("format", "long")),
    ("no-porcelain", ("format", "long")),
    ("no-long", ("format", "long")),
    ("null", ("null", True)),
    ("no-null", ("null", False)),
)
_STATUS_SHORT: dict[str, tuple[str, str | bool]] = {
    "v": ("verbose", True),
    "s": ("format", "short"),
    "z": ("null", True),
}


def _status_settings(word: str) -> list[tuple[str, str | bool]]:
    """What a word of git status's options sets, in order: `-svz` bundles its flags, and
    `-u`'s value is the rest of its cluster (`-uall`)."""
    if word.startswith("--"):
        name = word[2:].split("=", 1)[0]
        found = [setting for option, setting in _STATUS_OPTIONS if option.startswith(name)]
        return found[:1] if name else []
    if not word.startswith("-"):
        return []
    settings = []
    for char in word[1:]:
        if char == "u":
            break
        if char in _STATUS_SHORT:
            settings.append(_STATUS_SHORT[char])
    return settings


def _follows(rest: list[str], repo: Path) -> bool:
    """`git log --follow`, or `log.follow` in the config (the last option wins)."""
    given = [w for w in rest if w in ("--follow", "--no-follow")]
    return given[-1] == "--follow" if given else config_true(repo, "log.follow")


def _shows_contents(sub: str, rest: list[str]) -> bool:
    if sub == "grep":
        return True  # even counts and names (-c, -l) tell what an env file holds
    options = [w for w in rest if w.startswith("-") and w != "--"]
    patch = any(_is_patch(w) for w in options)
    if sub == "log":
        return patch
    quiet = any(w == "-s" or w[2:].split("=", 1)[0] in _NO_PATCH for w in options)
    return patch or not quiet


def _walks_tree(word: str) -> bool:
    """`--no-index` or `--untracked`, also abbreviated as git allows (`--no-ind`, `--untr`)."""
    name = word[2:].split("=", 1)[0] if word.startswith("--") else ""
    return bool(name) and ("untracked".startswith(name) or no_index(word))


def no_index(word: str) -> bool:
    """`--no-index`, also abbreviated as git allows (`--no-ind`): files on disk, not git's."""
    name = word[2:].split("=", 1)[0] if word.startswith("--") else ""
    return len(name) >= 4 and "no-index".startswith(name)


def _blobs_only(sub: str, rest: list[str]) -> bool:
    """`git show HEAD:a.txt`: only the files named after `rev:`, which the caller checks
    for env files; `:/text` names a commit by its message, and shows its patch. An option
    that adds revisions (`--all`, `--branches`, `--stdin`, `--indexed-objects`...) shows
    those besides the files."""
    if sub != "show" or "--" in rest or any(_REVISION_OPTION.fullmatch(w) for w in rest):
        return False
    objects = [w for w in rest if not w.startswith("-")]
    return bool(objects) and all(names_a_path(w) and not _may_be_pathspec(w) for w in objects)


def _may_be_pathspec(word: str) -> bool:
    """Whether git may read `word` as a pathspec when it names no object: one with pathspec
    magic (`:!.env`, `:^x`, `:(exclude)x`, setup.c's check_filename) or a wildcard
    (looks_like_pathspec). `git show ':!.env'` is HEAD's whole patch but `.env`'s."""
    return word.startswith((":!", ":^", ":(")) or bool(re.search(r"[*?\[]", word))


def names_a_path(revision: str) -> bool:
    """Whether `revision` names a file in a tree or the index (`HEAD:a.txt`, `:a.txt`,
    `:0:a.txt`), as git's get_oid_with_context reads it: `:/text` names a commit by its
    message, and a colon inside braces belongs to the revision (`HEAD^{/fix: typo}`, a
    commit by its message; `HEAD@{12:00}`, one by its reflog date), not a path."""
    if revision.startswith(":"):
        return not revision.startswith(":/")
    depth = 0
    for char in revision:
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == ":" and not depth:
            return True
    return False


def _is_patch(word: str) -> bool:
    if word.startswith("--"):
        name = word[2:].split("=", 1)[0]
        if name in _OTHER_EXACT:
            return False  # `--color` is itself, not `--color-words` abbreviated
        return bool(name) and any(p.startswith(name) for p in _PATCH_LONG if len(name) >= 2)
    return bool(_PATCH_SHORT.fullmatch(word))


def _words(sub: str, rest: list[str], cwd: Path) -> tuple[list[str], list[str]]:
    """(pathspecs, revisions) of the command: without `--`, a word is a pathspec only when
    it exists on disk, as git decides, and a revision otherwise; git grep's first word is
    its pattern unless `-e` or `-f` gave one. After `--end-of-options` a word starting
    with `-` is an operand too (`--end-of-options -x-0-g1234abcd` is a revision)."""
    split = _separator(sub, rest)
    pattern_given = sub != "grep" or any(_gives_pattern(w) for w in rest[:split])
    specs = rest[split + 1 :]
    revisions: list[str] = []
    skip = options_done = False
    for word in rest[:split]:
        if skip:
            skip = False
            continue
        if word == "--end-of-options" and not options_done:
            options_done = True
            continue
        if word.startswith("-") and not options_done:
            skip = _takes_next_word(sub, word)
            continue
        if not pattern_given:
            pattern_given = True
            continue
        if split == len(rest) and os.path.lexists(cwd / word):
            specs.append(word)
        else:
            revisions.append(word)
    return specs, revisions


def _separator(sub: str, rest: list[str]) -> int:
    """Where the `--` that ends revisions is: git grep's option parser takes a `--` right
    after an option with a value for that value (`-e -- -e KEY leak`); git's revision
    parser refuses it as one (`--author --`), so there the first `--` is the end."""
    skip = False
    for i, word in enumerate(rest):
        if word == "--" and not skip:
            return i
        skip = not skip and sub == "grep" and word.startswith("-") and _takes_next_word(sub, word)
    return len(rest)


def _gives_pattern(word: str) -> bool:
    """Whether a word of git grep's options gives the pattern: `-e`/`-f` in a cluster of
    short options (`-ie`, `-vfpats`), or `--regexp`/`--file` (abbreviated too)."""
    if word.startswith("--"):
        name = word[2:].split("=", 1)[0]
        return bool(name) and ("regexp".startswith(name) or "file".startswith(name))
    flags, _ = _short_cluster(word)
    return "e" in flags or "f" in flags


def _short_cluster(word: str) -> tuple[str, bool]:
    """(its options, whether the last takes the next word) of a cluster of git grep's short
    options, read as git's option parser reads it: flags bundle (`-in`), a digit run is the
    context (`-3`), an option with a value takes the rest of the cluster (`-eKEY`, `-C3`)
    or, when none is left, the next word; `-O`'s optional value is only the rest."""
    if not word.startswith("-") or word.startswith("--"):
        return "", False
    flags = ""
    for i, char in enumerate(word[1:], 1):
        if char.isdigit():
            continue
        flags += char
        if char in _GREP_SHORT_VALUED:
            return flags, i == len(word) - 1
        if char == "O":
            break
    return flags, False


def _takes_next_word(sub: str, word: str) -> bool:
    """Whether option `word` takes the next word as its value."""
    if sub != "grep":
        return word in _LOG_VALUED or _log_cluster_takes_next(word)
    if word.startswith("--"):
        # git grep's parser takes a long option's unique abbreviation (`--max-dep 1`); one
        # that is several options' is an error.
        name = word[2:]
        return bool(name) and "=" not in name and any(o[2:].startswith(name) for o in _GREP_VALUED)
    return _short_cluster(word)[1]


def _log_cluster_takes_next(word: str) -> bool:
    """Whether a cluster of diff's short options ends in one taking the next word (`-pO`)."""
    if not word.startswith("-") or word.startswith("--"):
        return False
    for i, char in enumerate(word[1:], 1):
        if char in _LOG_SHORT_VALUED:
            return i == len(word) - 1
        if char not in _LOG_SHORT_FLAGS:
            return False
    return False


def _reaches_commits(sub: str, rest: list[str], revisions: list[str]) -> bool:
    """Whether the command reads commits, not only the index and the work tree: log and
    show always; diff with a revision or `--cached`/`--staged`/`--merge-base` (HEAD's side);
    grep with a revision."""
    if sub in ("log", "show"):
        return True
    if sub == "diff" and any(
        w.startswith(("--cach", "--stag", "--merge-b")) for w in rest if w != "--"
    ):
        return True
    return bool(revisions)


def _pathspecs(specs: list[str]) -> tuple[list[str], list[str]]:
    """(include, exclude) pathspecs, each exclusion without its magic."""
    include: list[str] = []
    exclude: list[str] = []
    for spec in specs:
        excluded, body = exclusion(spec)
        (exclude if excluded else include).append(body if excluded else spec)
    return include, exclude


def exclusion(spec: str) -> tuple[bool, str]:
    """(is it an exclusion, the pathspec without that magic)."""
    parsed = _magic(spec)
    if parsed is None or "exclude" not in parsed[0]:
        return False, spec
    kept, body = [w for w in parsed[0] if w != "exclude"], parsed[1]
    if kept or body.startswith(":"):
        return True, f":({','.join(kept)}){body}"
    return True, body


# git's short magic (`:/`, `:!`, `:^`), and the characters it keeps for more: a pathspec
# with one of those after its colon is an error.
_SHORT_MAGIC = {"/": "top", "!": "exclude", "^": "exclude"}
_MAGIC_CHARS = frozenset("!\"#%&',-/:;<=>@_`~^")


def _magic(spec: str) -> tuple[list[str], str] | None:
    """(magic words, pattern) of a pathspec as git reads it, or None when git refuses it.

    `:(top,icase)a`, and the short form: a colon, magic letters, an optional colon, the
    pattern (`:/a`, `:!a`, `:/!:a`). `:` and `:/` have an empty pattern: the current
    folder, the whole tree.
    """
    if not spec.startswith(":"):
        return [], spec
    if spec.startswith(":("):
        close = spec.find(")")
        if close < 0:
            return None
        return [w.strip() for w in spec[2:close].split(",")], spec[close + 1 :]
    magic: list[str] = []
    i = 1
    while i < len(spec) and spec[i] != ":":
        if spec[i] in _SHORT_MAGIC:
            magic.append(_SHORT_MAGIC[spec[i]])
        elif spec[i] in _MAGIC_CHARS:
            return None
        else:
            break
        i += 1
    return magic, spec[i + 1 :] if spec[i : i + 1] == ":" else spec[i:]


def _matches(spec: str, path: str, here: str, *, exact: bool = False, icase: bool = False) -> bool:
    """Whether pathspec `spec` (given in folder `here`) selects repo path `path`.

    Magic it does not know matches for an include and not for an exclusion
    (`exact`): when unsure, the env file counts as shown. A pattern ending in `/`
    (also `/.`, `//`) selects a folder and what is in it, never a file of that name.
    """
    parsed = _magic(spec)
    if parsed is None or set(parsed[0]) - {"top", "glob", "literal", "icase", ""}:
        return not exact
    magic, body = parsed
    if icase or "icase" in magic:  # `:(icase)`, `--icase-pathspecs`: `.E*` selects `.env`
        body, path, here = body.lower(), path.lower(), here.lower()
    joined = "/".join(p for p in ("" if "top" in magic else here, body) if p)
    full = os.path.normpath(joined) if joined else "."
    if full in (".", ""):
        return True
    if path.startswith(full + "/"):
        return True
    # git keeps a trailing `/` (`a/.` is `a/`); after `a/b/..` it may too: an exclusion
    # then counts as a folder's only.
    folder = joined.endswith(("/", "/.")) or (exact and joined.endswith("/.."))
    if path == full:
        return not folder
    if "literal" in magic:
        return False
    if folder:
        return not exact if re.search(r"[*?\[\\]", full) else False
    return _pattern_matches(full, path, glob="glob" in magic, exact=exact)


def _pattern_matches(full: str, path: str, *, glob: bool, exact: bool) -> bool:
    """git's wildmatch: `[...]` sets (`[.]env`, `.e[!x]v`) and `\\` escapes (`.en\\v`) too.
    Without glob magic `*` and `?` cross `/`, as bash's matcher does over a whole path."""
    if not glob:
        try:
            return globbing.matches(full, path)
        except globbing.GlobTooComplex:
            return not exact
    if re.search(r"[\[\\]", full):
        return not exact  # a set or an escape under glob magic: when unsure, it counts
    return bool(_wildcard(full, glob=True).fullmatch(path))


def _wildcard(pattern: str, *, glob: bool) -> re.Pattern[str]:
    """git's pathspec wildcards: `*` crosses `/` unless `glob` magic, where `**/` does."""
    out, i = [], 0
    while i < len(pattern):
        if glob and pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob and pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif pattern[i] == "*":
            out.append("[^/]*" if glob else ".*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]" if glob else ".")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _env_files_on_disk(repo: Path, env: RepoEnvFiles) -> set[str] | str:
    """Env files anywhere in the work tree (a link to one counts), or why it's unknown."""
    found: set[str] = set()
    budget = _MAX_WALK
    for folder, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        budget -= len(dirs) + len(files)
        if budget < 0:
            return "the repo holds too many files to check for env files"
        for name in files:
            path = Path(folder) / name
            if env.reaches(path):
                found.add(path.relative_to(repo).as_posix())
    return found
