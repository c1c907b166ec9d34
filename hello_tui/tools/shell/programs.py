"""What the read-only programs of the terminal policy may do, program by program.

`check_read_only(name, args)` says whether a known read-only program is used
in a read-only way (`unsafe` names the first thing that is not), which of its
arguments name files it reads (`paths`) or writes (`writes`: `sort -o`,
`tree -o`, `find -fprint`, sed's `w`, awk's `print >`), and how it treats
symbolic links (`follow`): only those named on its command line, the entries
of the folders it lists (`ls -L`), or every link of a whole tree (`find -L`,
`grep -R`, `rg -L`, `du -L`, `diff -r`, `tree -l`), so the policy can judge
where the links really lead. Programs that take the names of the files they
read from a file or stdin (`--files0-from`, `file -f`) are never read-only:
those names cannot be checked. Options are parsed the way GNU getopt does,
including clustered short options (`-ni`) and abbreviated long ones
(`--out=`), because those are the usual ways around a naive check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from hello_tui.tools.shell.awk import AWK_NAMES, check_awk
from hello_tui.tools.shell.parse import Word

Follow = Literal["args", "entries", "tree"]
_FOLLOW_RANK = {"args": 0, "entries": 1, "tree": 2}


@dataclass
class ProgramCheck:
    unsafe: str | None  # why this use is not read-only (the policy then asks)
    paths: list[Word] = field(default_factory=list)  # arguments naming files it reads
    writes: list[Word] = field(default_factory=list)  # arguments naming files it writes
    follow: Follow = "args"  # which symbolic links it resolves
    # Reads the contents of every file below the folders in `paths` (grep -r).
    recursive_read: bool = False
    # Only prints its arguments: a value that can't be known is harmless.
    prints_only: bool = False
    # `less file`: runs as `cat file` (no terminal to page on).
    pager: bool = False
    # A recursive read sees dotfiles (.env): not rg, unless --hidden or -uu.
    hidden: bool = True
    # It prints what is in the files it reads (cat, grep), or something computed from it
    # (wc's counts), not only names and metadata (ls, du, stat).
    shows_contents: bool = True
    # A recursive read prints binary files as text (`grep -a`): git's compressed objects.
    binary_as_text: bool = False
    # rg with file types chosen (`-t json`): a type's glob whitelists the hidden files it
    # matches, as an ignore file's `!` does (`-t json` reads `.env.json`).
    typed: bool = False


def _more_follow(a: Follow, b: Follow) -> Follow:
    return a if _FOLLOW_RANK[a] >= _FOLLOW_RANK[b] else b


@dataclass
class ParsedOptions:
    options: list[tuple[str, Word | None]]  # ("-i", None), ("output", value) — long names bare
    positionals: list[Word]


def _value_word(parent: Word, value: str) -> Word:
    return Word(
        value=value,
        source=parent.source,
        glob=parent.glob,
        tilde=value.startswith("~") and "=~" in parent.source,
        brace=parent.brace,
        problems=list(parent.problems),
    )


def _long_matches(given: str, names: frozenset[str] | set[str]) -> str | None:
    """GNU getopt accepts any unambiguous prefix; treat any prefix as a match (stricter)."""
    if given in names:
        return given
    return next((n for n in sorted(names) if given and n.startswith(given)), None)


def _long_value(
    name: str, long_values: frozenset[str], long_flags: frozenset[str], exact_long: bool
) -> str | None:
    """The value-taking long option `--name` is, if any."""
    if name in long_flags or exact_long:
        return name if name in long_values else None
    return _long_matches(name, long_values)


def parse_options(
    args: list[Word],
    short_values: str = "",
    long_values: frozenset[str] = frozenset(),
    short_optional: str = "",
    long_flags: frozenset[str] = frozenset(),
    exact_long: bool = False,
) -> ParsedOptions:
    """GNU getopt's reading of `args`. A long name the program knows exactly is that option
    (`long_flags`: grep's `--binary` is no abbreviation of `--binary-files`); other names
    abbreviate a longer one, unless the program takes none (`exact_long`: rg)."""
    options: list[tuple[str, Word | None]] = []
    positionals: list[Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        text = word.value
        i += 1
        if text == "--":
            positionals.extend(args[i:])
            break
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            if eq:
                options.append((name, _value_word(word, value)))
            elif _long_value(name, long_values, long_flags, exact_long) and i < len(args):
                options.append((name, args[i]))
                i += 1
            else:
                options.append((name, None))
            continue
        if text.startswith("-") and len(text) > 1:
            for j, ch in enumerate(text[1:], start=1):
                rest = text[j + 1 :]
                if ch in short_optional:
                    options.append(("-" + ch, _value_word(word, rest) if rest else None))
                    break
                if ch in short_values:
                    if rest:
                        options.append(("-" + ch, _value_word(word, rest)))
                    elif i < len(args):
                        options.append(("-" + ch, args[i]))
                        i += 1
                    else:
                        options.append(("-" + ch, None))
                    break
                options.append(("-" + ch, None))
            continue
        positionals.append(word)
    return ParsedOptions(options, positionals)


@dataclass(frozen=True)
class Spec:
    """Table entry for a read-only program."""

    short_values: str = ""
    long_values: frozenset[str] = frozenset()
    # getopt's `::` options: a value only when attached (`-Idate`); never the next word.
    short_optional: str = ""
    # Long flags named by the start of a longer option's name (grep `--binary`,
    # `--binary-files`): given whole, they are themselves, not an abbreviation.
    long_flags: frozenset[str] = frozenset()
    # The program takes long names only whole (rg): `--ignore` is a flag of its own.
    exact_long: bool = False
    unsafe_short: dict[str, str] = field(default_factory=dict)
    unsafe_long: dict[str, str] = field(default_factory=dict)
    file_options: frozenset[str] = frozenset()  # options whose value is a file it reads
    write_options: frozenset[str] = frozenset()  # options whose value is a file it writes
    paths: str = "all"  # all | none | after_pattern
    pattern_options: frozenset[str] = frozenset()  # options that supply the pattern
    no_pattern_flags: frozenset[str] = frozenset()  # flags under which there is no pattern
    # Options (short letters or long names) after which it follows symbolic links.
    follow_entries: frozenset[str] = frozenset()  # links among the entries it lists
    follow_tree: frozenset[str] = frozenset()  # links anywhere in the trees it walks
    recursive: frozenset[str] = frozenset()  # options that make it walk whole trees
    reads_contents: bool = False  # it reads the files it walks (not only their names)
    always_recursive: bool = False  # rg: folders are always searched through
    prints_only: bool = False
    pager: bool = False
    shows_contents: bool = True


_FOLLOWS = "follows symbolic links, which may lead out of the repo"
_NAMES_FROM_FILE = (
    "takes the names of the files to read from {value}, and those names can't be checked"
)
_GREP = Spec(
    short_values="efmABCdD",
    long_values=frozenset(
        [
            "regexp",
            "file",
            "max-count",
            "after-context",
            "before-context",
            "context",
            "label",
            "include",
            "exclude",
            "exclude-from",
            "exclude-dir",
            "directories",
            "devices",
            "binary-files",
        ]
    ),
    long_flags=frozenset({"binary"}),
    file_options=frozenset({"-f", "file", "exclude-from"}),
    paths="after_pattern",
    pattern_options=frozenset({"-e", "regexp", "-f", "file"}),
    follow_tree=frozenset({"R", "dereference-recursive"}),
    recursive=frozenset({"r", "R", "recursive", "dereference-recursive"}),
    reads_contents=True,
)
_PAGER = Spec(
    short_values="bhjkoOpPtTxyz#",
    long_values=frozenset(
        [
            "log-file",
            "LOG-FILE",
            "lesskey-file",
            "pattern",
            "tag",
            "tag-file",
            "tabs",
            "window",
            "shift",
            "max-back-scroll",
            "max-forw-scroll",
            "buffers",
            "prompt",
        ]
    ),
    unsafe_short={"o": "less -o writes a log file", "O": "less -O writes a log file"},
    unsafe_long={
        "log-file": "less --log-file writes a log file",
        "LOG-FILE": "less --LOG-FILE writes a log file",
    },
    file_options=frozenset({"-k", "lesskey-file"}),
    pager=True,
)
# util-linux more: getopt_long (options anywhere), only `-n`/`--lines` takes a value;
# `-p` is a flag (`more -p .env` shows .env), and `+N`, `+/re` are options anywhere.
_MORE = Spec(short_values="n", long_values=frozenset({"lines"}), pager=True)

SPECS: dict[str, Spec] = {
    "ls": Spec(
        short_values="ITw",
        long_values=frozenset(
            [
                "ignore",
                "hide",
                "tabsize",
                "width",
                "format",
                "sort",
                "time-style",
                "block-size",
                "quoting-style",
                "indicator-style",
            ]
        ),
        follow_entries=frozenset({"L", "dereference"}),
        recursive=frozenset({"R", "recursive"}),
        shows_contents=False,
    ),
    # `--fromfile` (and `--fromtabfile`) is a flag: the names given are then files whose
    # lines tree prints as a listing. `--hintro`/`--houtro` copy a file into the HTML it
    # prints, `--infofile` prints comments from one; `--gitfile` reads one as .gitignore.
    "tree": Spec(
        short_values="LPIoHT",
        long_values=frozenset(
            ["charset", "filelimit", "timefmt", "sort", "hintro", "houtro", "infofile", "gitfile"]
        ),
        unsafe_short={"R": "tree -R writes an HTML listing into every directory"},
        unsafe_long={
            "fromfile": "tree --fromfile prints the lines of the files it names",
            "fromtabfile": "tree --fromtabfile prints the lines of the files it names",
            "hintro": "tree --hintro copies a file into its output",
            "houtro": "tree --houtro copies a file into its output",
            "infofile": "tree --infofile prints comments from a file",
        },
        file_options=frozenset({"hintro", "houtro", "infofile", "gitfile"}),
        write_options=frozenset({"-o"}),
        follow_tree=frozenset({"l"}),
        recursive=frozenset({"l"}),
        shows_contents=False,
    ),
    "cat": Spec(),
    "head": Spec(short_values="nc", long_values=frozenset({"lines", "bytes"})),
    "tail": Spec(
        short_values="nc",
        long_values=frozenset(["lines", "bytes", "pid", "sleep-interval", "max-unchanged-stats"]),
    ),
    # wc reads what it counts: a key's length (`wc -L`) or its word count is about the key.
    "wc": Spec(long_values=frozenset({"files0-from"})),
    "sort": Spec(
        short_values="ktoST",
        long_values=frozenset(
            [
                "key",
                "field-separator",
                "output",
                "buffer-size",
                "temporary-directory",
                "compress-program",
                "parallel",
                "batch-size",
                "files0-from",
                "sort",
                "random-source",
            ]
        ),
        unsafe_long={"compress-program": "sort --compress-program runs another program"},
        file_options=frozenset({"random-source"}),
        write_options=frozenset({"-o", "output", "-T", "temporary-directory"}),
    ),
    "uniq": Spec(
        short_values="fsw", long_values=frozenset({"skip-fields", "skip-chars", "check-chars"})
    ),
    "cut": Spec(
        short_values="bcdf",
        long_values=frozenset(["bytes", "characters", "delimiter", "fields", "output-delimiter"]),
    ),
    "tr": Spec(paths="none", prints_only=True),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "rg": Spec(
        short_values="efgmtTABCMjrEd",
        long_values=frozenset(
            [
                "regexp",
                "file",
                "glob",
                "iglob",
                "type",
                "type-not",
                "type-add",
                "type-clear",
                "max-count",
                "after-context",
                "before-context",
                "context",
                "max-columns",
                "threads",
                "replace",
                "encoding",
                "max-depth",
                "max-filesize",
                "pre",
                "pre-glob",
                "ignore-file",
                "sort",
                "sortr",
                "color",
                "colors",
                "context-separator",
                "field-context-separator",
                "field-match-separator",
                "path-separator",
                "engine",
                "dfa-size-limit",
                "regex-size-limit",
                "hostname-bin",
                "hyperlink-format",
                "generate",
            ]
        ),
        # rg takes long names only whole: `--ignore` is a flag, no `--ignore-file`.
        exact_long=True,
        unsafe_short={"z": "rg -z runs decompression programs"},
        unsafe_long={
            "pre": "rg --pre runs a preprocessor command on every file",
            "search-zip": "rg --search-zip runs decompression programs",
            "hostname-bin": "rg --hostname-bin runs another program",
        },
        file_options=frozenset({"-f", "file", "ignore-file"}),
        paths="after_pattern",
        pattern_options=frozenset({"-e", "regexp", "-f", "file"}),
        no_pattern_flags=frozenset({"files", "type-list"}),
        follow_tree=frozenset({"L", "follow"}),
        reads_contents=True,
        always_recursive=True,
    ),
    # `-m` takes a list of magic files (`a:b`), each also tried as `a.mgc`, a folder as its
    # every file; what they hold is printed in the warnings about their lines. `-z` starts
    # the decompressors libmagic was built without (`zstd -cd`, `lz4`...), found on PATH.
    "file": Spec(
        short_values="mfFeP",
        long_values=frozenset(["magic-file", "files-from", "separator", "exclude", "parameter"]),
        unsafe_short={
            "C": "file -C writes a compiled magic file",
            "z": "file -z runs decompression programs",
            "Z": "file -Z runs decompression programs",
        },
        unsafe_long={
            "compile": "file --compile writes a compiled magic file",
            "uncompress": "file --uncompress runs decompression programs",
            "uncompress-noreport": "file --uncompress-noreport runs decompression programs",
        },
        file_options=frozenset({"-m", "magic-file"}),
    ),
    "stat": Spec(
        short_values="c", long_values=frozenset({"format", "printf"}), shows_contents=False
    ),
    "du": Spec(
        short_values="BdXt",
        long_values=frozenset(
            [
                "block-size",
                "max-depth",
                "exclude-from",
                "exclude",
                "threshold",
                "time-style",
                "files0-from",
            ]
        ),
        # `--time[=WORD]`: a value only attached, so `du --time ..` lists the folder above.
        long_flags=frozenset({"time"}),
        file_options=frozenset({"-X", "exclude-from"}),
        follow_tree=frozenset({"L", "dereference"}),
        recursive=frozenset({"L", "dereference"}),
        shows_contents=False,
    ),
    "diff": Spec(
        short_values="CUDIFSWxX",
        long_values=frozenset(
            [
                "ignore-matching-lines",
                "show-function-line",
                "starting-file",
                "width",
                "exclude",
                "exclude-from",
                "ifdef",
                "label",
                "from-file",
                "to-file",
                "line-format",
                "old-line-format",
                "new-line-format",
                "unchanged-line-format",
                "old-group-format",
                "new-group-format",
                "changed-group-format",
                "unchanged-group-format",
                "tabsize",
                "horizon-lines",
                "palette",
            ]
        ),
        # `-l`: the output goes through `pr`, a program diff starts (found on PATH).
        unsafe_short={"l": "diff -l runs pr on its output"},
        unsafe_long={"paginate": "diff --paginate runs pr on its output"},
        file_options=frozenset({"-X", "exclude-from", "from-file", "to-file"}),
        # GNU diff dereferences the symlinks it meets while recursing.
        follow_tree=frozenset({"r", "recursive"}),
        recursive=frozenset({"r", "recursive"}),
        reads_contents=True,
    ),
    "less": _PAGER,
    "more": _MORE,
    "most": _MORE,
    "pwd": Spec(paths="none", prints_only=True),
    "echo": Spec(paths="none", prints_only=True),
    "printf": Spec(short_values="v", paths="none", prints_only=True),
    "which": Spec(paths="none", prints_only=True),
    "type": Spec(paths="none", prints_only=True),
    "printenv": Spec(paths="none", prints_only=True),
    "true": Spec(paths="none", prints_only=True),
    "false": Spec(paths="none", prints_only=True),
    "basename": Spec(
        short_values="s", long_values=frozenset({"suffix"}), paths="none", prints_only=True
    ),
    "dirname": Spec(paths="none", prints_only=True),
    "seq": Spec(
        short_values="fs",
        long_values=frozenset({"format", "separator"}),
        paths="none",
        prints_only=True,
    ),
    "whoami": Spec(paths="none", prints_only=True),
    "id": Spec(paths="none", prints_only=True),
    "uname": Spec(paths="none", prints_only=True),
    "nproc": Spec(paths="none", prints_only=True),
    # `-I[FMT]`, `--iso-8601[=FMT]`: the format only attached, so `-I -f FILE` reads FILE.
    "date": Spec(
        short_values="dfrs",
        long_values=frozenset({"date", "file", "reference", "set", "rfc-3339"}),
        short_optional="I",
        unsafe_short={"s": "date -s sets the system clock"},
        unsafe_long={"set": "date --set sets the system clock"},
        file_options=frozenset({"-f", "file", "-r", "reference"}),
        paths="none",
    ),
    "realpath": Spec(long_values=frozenset({"relative-to", "relative-base"}), shows_contents=False),
    "readlink": Spec(shows_contents=False),
    "test": Spec(shows_contents=False),
    "[": Spec(shows_contents=False),
}

READ_ONLY_PROGRAMS = frozenset(SPECS) | {"sed", "find", "git"} | AWK_NAMES
# Options that name a list of the files to read, whatever the program (GNU spellings).
_NAMES_FROM = ("files0-from", "files-from")


def check_read_only(name: str, args: list[Word]) -> ProgramCheck | None:
    """None when `name` is not a known read-only program (git is judged in git_guard)."""
    if name == "sed":
        return _check_sed(args)
    if name in AWK_NAMES:
        found = check_awk(args)
        writes = [_literal(w) for w in found.write_targets]
        reads = [_literal(r) for r in found.read_targets if r != "-"]
        return ProgramCheck(found.unsafe, found.paths + reads, writes)
    if name == "find":
        return _check_find(args)
    spec = SPECS.get(name)
    if spec is None:
        return None
    check = _check_spec(name, spec, args)
    if name == "diff" and not check.recursive_read:
        check.paths += [entry for word in check.paths for entry in _folder_entries(word)]
    return check


# Every name directly inside a folder, dotfiles too (never `.` or `..`), as bash globs them.
_ENTRY_PATTERNS = ("*", ".[!.]*", "..?*")


def _folder_entries(word: Word) -> list[Word]:
    """diff of two folders (no -r) reads every same-named file directly inside both, and
    with -N also those on one side only, following links: judge each as an argument. For
    an operand that is a file the patterns match nothing."""
    base = word.value if word.glob else re.sub(r"([][*?\\])", r"\\\1", word.value)
    base = base.rstrip("/")
    return [
        Word(
            value=f"{base}/{pattern}",
            source=f"{word.source.rstrip('/')}/{pattern}",
            glob=True,
            tilde=word.tilde,
            brace=word.brace,
            problems=list(word.problems),
            uncertain=list(word.uncertain),
        )
        for pattern in _ENTRY_PATTERNS
    ]


def _literal(value: str) -> Word:
    return Word(value=value, source=value)


def _option_key(opt: str) -> str:
    """ "-o" -> "o" (a short letter); long names stay as they are."""
    return opt.removeprefix("-")


def _check_spec(name: str, spec: Spec, args: list[Word]) -> ProgramCheck:
    parsed = parse_options(
        args,
        spec.short_values,
        spec.long_values,
        spec.short_optional,
        spec.long_flags,
        spec.exact_long,
    )
    unsafe = None
    paths: list[Word] = []
    writes: list[Word] = []
    follow: Follow = "args"
    recursive = spec.always_recursive
    hidden_flags = 0
    binary_as_text = False
    typed = False
    for opt, value in parsed.options:
        if opt.startswith("-"):
            reason = spec.unsafe_short.get(opt[1:])
            long_name = opt
        else:
            matched = _long_matches(opt, frozenset(spec.unsafe_long))
            reason = spec.unsafe_long.get(matched) if matched else None
            known = spec.long_values | spec.follow_tree | spec.follow_entries | spec.recursive
            long_name = opt  # given whole (`--binary`), or where abbreviations are none (rg)
            if opt not in spec.long_flags and not spec.exact_long:
                names = known | spec.file_options | spec.write_options
                long_name = _long_matches(opt, names) or opt
            # The option's full name: itself when the program knows it, else what it abbreviates.
            known_names = spec.long_values | spec.no_pattern_flags
            full = opt if opt in known_names else _long_matches(opt, known_names | set(_NAMES_FROM))
            if full in _NAMES_FROM:
                where = value.value if value is not None else "stdin"
                reason = reason or f"{name} --{opt} " + _NAMES_FROM_FILE.format(value=where)
                if value is not None and value.value != "-":
                    paths.append(value)  # the list itself is read: it must be inside too
        unsafe = unsafe or reason
        if value is not None and long_name in spec.file_options:
            paths.extend(_magic_files(value) if name == "file" else [value])
        if long_name in spec.write_options:
            if value is not None:
                writes.append(value)
            else:
                unsafe = unsafe or f"{name} {opt} writes a file"
        key = _option_key(long_name)
        if key in spec.follow_tree:
            follow = "tree"
        elif key in spec.follow_entries:
            follow = _more_follow(follow, "entries")
        if key in spec.recursive:
            recursive = True
        if key in ("hidden", "u", "."):
            hidden_flags += 2 if key in ("hidden", ".") else 1
        if name == "rg" and key in ("g", "glob", "iglob", "ignore-file", "type-add"):
            # A glob overrides rg's hidden-file rule (`-g .env` reads it), and so may an
            # ignore file's whitelist (`!.env`, `ignore_files`) or a type's own globs
            # (`--type-add 'x:.env' -tx`).
            hidden_flags += 2
        if name == "rg" and key in ("t", "type"):
            typed = True
        if name == "grep" and key in ("d", "directories") and _grep_recurses(value):
            recursive = True
        if name == "file" and key in ("f", "files-from"):
            where = value.value if value is not None else "stdin"
            unsafe = unsafe or "file -f " + _NAMES_FROM_FILE.format(value=where)
        if name == "printf" and key == "v":
            unsafe = unsafe or "printf -v sets a shell variable"
        if name in _BINARY_AS_TEXT and _binary_as_text(key, value):
            binary_as_text = True
    if follow == "entries" and recursive:
        follow = "tree"
    if spec.paths == "none":
        return ProgramCheck(unsafe, paths, writes, prints_only=spec.prints_only and not paths)
    positionals = parsed.positionals
    if spec.paths == "after_pattern":
        given = {
            o if o.startswith("-") else (_long_matches(o, spec.pattern_options) or o)
            for o, _ in parsed.options
        }
        # Only a flag the program reads as one (`--files`): `--type` is no `--type-list`.
        no_pattern = any(
            not o.startswith("-") and _long_name(spec, o, spec.no_pattern_flags)
            for o, _ in parsed.options
        )
        if not (given & spec.pattern_options) and not no_pattern:
            positionals = positionals[1:]
    if spec.pager:
        positionals = pager_files(name, args)
    if name == "uniq" and len(parsed.positionals) > 1:
        writes.append(parsed.positionals[1])
        positionals = parsed.positionals[:1]
    if (recursive or follow != "args") and not positionals and spec.paths != "none":
        positionals = [_literal(".")]  # grep -r, rg and ls -L work on the working folder
    return ProgramCheck(
        unsafe,
        paths + positionals,
        writes,
        follow=follow,
        recursive_read=recursive and spec.reads_contents,
        hidden=hidden_flags >= 2 or name != "rg",
        pager=spec.pager,
        shows_contents=spec.shows_contents,
        binary_as_text=binary_as_text,
        typed=typed,
    )


def _magic_files(value: Word) -> list[Word]:
    """The files `file -m a:b` reads as magic: every name of the colon-separated list, its
    compiled `NAME.mgc`, and each file inside one that is a folder. file itself expands no
    glob, brace or `~` in them: bash has made the word already."""
    found: list[Word] = []
    for index, piece in enumerate(value.value.split(":")):
        if not piece:
            continue
        for name in (piece, piece + ".mgc"):
            word = Word(
                value=name,
                source=value.source,
                tilde=value.tilde and index == 0,
                problems=list(value.problems),
                uncertain=list(value.uncertain),
            )
            found.append(word)
            if name == piece:
                found.extend(_folder_entries(word))
    return found


def _less_files(args: list[Word], values: bool) -> list[Word]:
    """The files less shows: less reads options (`-x`, `+cmd`) only up to its first file
    or `--`; every word after that is a file, whatever it starts with
    (`less a.txt -p .env` shows .env). With `values`, also the word after an abbreviated
    long option: less skips an abbreviation it can't resolve (`--ta`: --tabs, --tag or
    --tag-file?) alone, and the word after it is then a file (`less --ta .env`)."""
    i = 0
    taken: list[Word] = []
    while i < len(args):
        text = args[i].value
        if text == "--":
            return taken + args[i + 1 :]
        if text.startswith("+"):
            i += 1
            continue
        if not text.startswith("-") or text == "-":
            return taken + args[i:]
        words = _option_words(args[i:], _PAGER)
        abbreviated = text.startswith("--") and text[2:] not in _PAGER.long_values
        if values and words == 2 and abbreviated:
            taken.append(args[i + 1])
        i += words
    return taken


def _option_words(args: list[Word], spec: Spec) -> int:
    """How many words the option word `args[0]` takes: 2 when its value is the next word."""
    text = args[0].value
    if text.startswith("--"):
        name, eq, _ = text[2:].partition("=")
        return 2 if not eq and _long_matches(name, spec.long_values) and len(args) > 1 else 1
    for j, ch in enumerate(text[1:], start=1):
        if ch in spec.short_values:
            return 2 if j == len(text) - 1 and len(args) > 1 else 1
    return 1


def pager_files(name: str, args: list[Word], *, judged: bool = True) -> list[Word]:
    """The files a pager shows. less stops reading options at its first file; util-linux
    more reads them anywhere (getopt), and `+N`, `+/re` are options to both. As `more`
    (or `most`) may be less under another name, what is judged (`judged`) is every word
    either of them takes as a file; what more itself shows is its own parse's files."""
    less = _less_files(args, values=judged)
    if name == "less":
        return less
    end = next((i for i, w in enumerate(args) if w.value == "--"), len(args))
    parsed = parse_options(args[:end], _MORE.short_values, _MORE.long_values)
    more = [w for w in parsed.positionals if not w.value.startswith("+")] + args[end + 1 :]
    if not judged:
        return more
    return less + [w for w in more if all(w is not o for o in less)]


def _long_name(spec: Spec, given: str, names: frozenset[str]) -> str | None:
    """The one of `names` the long option `--given` is, as the program reads long names:
    whole only (rg), or any prefix of only that name among the program's own."""
    if spec.exact_long or given in spec.long_flags:
        return given if given in names else None
    if given in names:
        return given
    known = spec.long_values | spec.no_pattern_flags | spec.long_flags | names
    matches = [n for n in known if n.startswith(given)]
    return matches[0] if len(matches) == 1 and matches[0] in names else None


def _grep_recurses(value: Word | None) -> bool:
    """`-d recurse`, as GNU argmatch takes it: any prefix (`-d rec`; `r`, `re` are errors)."""
    return value is not None and "recurse".startswith(value.value)


# Programs that skip or summarise binary files ("Binary file matches") unless told to print
# them as text: grep and diff (`-a`, `--text`, grep's `--binary-files=text`), rg (`-a`).
_BINARY_AS_TEXT = frozenset({"grep", "egrep", "fgrep", "rg", "diff"})


def _binary_as_text(key: str, value: Word | None) -> bool:
    if key == "a" or (len(key) >= 3 and "text".startswith(key)):
        return True
    return key == "binary-files" and value is not None and value.value == "text"


# ------------------------------------------------------------------------ sed


class _Unsure(Exception):
    pass


def _skip_regex(script: str, i: int, delim: str) -> int:
    """Index just past the closing `delim` of a regex starting at `i`."""
    n = len(script)
    while i < n:
        ch = script[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = _skip_bracket(script, i)
            continue
        if ch == delim:
            return i + 1
        i += 1
    raise _Unsure


def _skip_bracket(script: str, i: int) -> int:
    """Index just past the bracket expression at `i` ('['), by POSIX rules: a `]` first
    (after `^`) is a member, `[:alpha:]`, `[=a=]` and `[.].]` are units, a backslash is
    itself; a newline or an unclosed unit is not something to guess about."""
    n = len(script)
    j = i + 1
    if j < n and script[j] == "^":
        j += 1
    if j < n and script[j] == "]":
        j += 1
    while j < n:
        ch = script[j]
        if ch == "\n":
            raise _Unsure
        if ch == "[" and j + 1 < n and script[j + 1] in ":=.":
            end = script.find(script[j + 1] + "]", j + 2)
            if end == -1 or "\n" in script[j:end]:
                raise _Unsure
            j = end + 2
            continue
        if ch == "]":
            return j + 1
        j += 1
    raise _Unsure


def _skip_text(script: str, i: int, delim: str) -> int:
    n = len(script)
    while i < n:
        if script[i] == "\\":
            i += 2
            continue
        if script[i] == delim:
            return i + 1
        i += 1
    raise _Unsure


def _skip_address(script: str, i: int, second: bool) -> int:
    n = len(script)
    if i >= n:
        return i
    ch = script[i]
    if second and ch in "+~":
        i += 1
        while i < n and script[i].isdigit():
            i += 1
        return i
    if ch.isdigit():
        while i < n and (script[i].isdigit() or script[i] == "~"):
            i += 1
        return i
    if ch == "$":
        return i + 1
    if ch in "/\\":
        if ch == "\\":
            if i + 1 >= n:
                raise _Unsure
            delim, i = script[i + 1], i + 2
        else:
            delim, i = "/", i + 1
        i = _skip_regex(script, i, delim)
        while i < n and script[i] in "IM":
            i += 1
    return i


@dataclass
class SedScript:
    """What a sed script does besides printing: the files it writes and reads."""

    problem: str | None = None
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)


def analyse_sed(script: str) -> SedScript:
    found = SedScript()
    try:
        _sed_walk(script, found)
    except (_Unsure, IndexError):
        found.problem = found.problem or "the sed script could not be checked"
    return found


def sed_script_problem(script: str) -> str | None:
    """Why this sed script is not read-only (file targets aside), or None."""
    found = analyse_sed(script)
    if found.problem:
        return found.problem
    if found.writes:
        return "sed's w command writes a file"
    return None


def _file_argument(script: str, i: int) -> tuple[str, int]:
    """GNU sed: a file name runs to the end of the line (`;` and `}` included)."""
    while i < len(script) and script[i] in " \t":
        i += 1
    end = script.find("\n", i)
    end = len(script) if end == -1 else end
    name = script[i:end]
    if not name:
        raise _Unsure
    return name, end


_SED_HARMLESS_OUTPUTS = frozenset({"/dev/stdout", "/dev/stderr"})


_SED_LABEL_ENDS = frozenset(" \t\n;#}")


def _skip_label(script: str, i: int) -> int:
    """GNU sed's label: blanks skipped, then up to a blank, `;`, newline, `#` or `}`; the
    next command starts right there (`:a e cmd` runs `e cmd`)."""
    n = len(script)
    while i < n and script[i] in " \t":
        i += 1
    while i < n and script[i] not in _SED_LABEL_ENDS:
        i += 1
    return i


def _sed_walk(script: str, found: SedScript) -> None:
    i, n = 0, len(script)
    while i < n:
        ch = script[i]
        if ch in " \t\n;":
            i += 1
            continue
        if ch == "#":
            end = script.find("\n", i)
            i = n if end == -1 else end + 1
            continue
        i = _skip_address(script, i, second=False)
        if i < n and script[i] == ",":
            i = _skip_address(script, i + 1, second=True)
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            raise _Unsure
        cmd = script[i]
        i += 1
        if cmd in "{}=dDgGhHnNpPxzF":
            continue
        if cmd in "lqQL":
            while i < n and (script[i] in " \t" or script[i].isdigit()):
                i += 1
            continue
        if cmd in "btT:":
            i = _skip_label(script, i)
            continue
        if cmd in "aic":
            # text up to the end of an unescaped line
            while i < n and script[i] != "\n":
                i += 2 if script[i] == "\\" else 1
            continue
        if cmd == "s":
            delim = script[i]
            if delim in "\n\\":
                raise _Unsure
            i = _skip_regex(script, i + 1, delim)
            i = _skip_text(script, i, delim)
            while i < n and script[i] not in ";\n} \t":
                flag = script[i]
                if flag in "wW":
                    name, i = _file_argument(script, i + 1)
                    if name not in _SED_HARMLESS_OUTPUTS:
                        found.writes.append(name)
                    break
                if flag == "e":
                    found.problem = found.problem or "sed's s///e flag runs a shell command"
                elif flag not in "gpiImM0123456789":
                    raise _Unsure
                i += 1
            continue
        if cmd == "y":
            delim = script[i]
            i = _skip_text(script, i + 1, delim)
            i = _skip_text(script, i, delim)
            continue
        if cmd in "wW":
            name, i = _file_argument(script, i)
            if name not in _SED_HARMLESS_OUTPUTS:
                found.writes.append(name)
            continue
        if cmd in "rR":
            name, i = _file_argument(script, i)
            if name != "/dev/stdin":
                found.reads.append(name)
            continue
        if cmd == "e":
            found.problem = found.problem or "sed's e command runs a shell command"
            end = script.find("\n", i)
            i = n if end == -1 else end
            continue
        raise _Unsure


def _check_sed(args: list[Word]) -> ProgramCheck:
    parsed = parse_options(
        args, "efl", frozenset({"expression", "file", "line-length"}), short_optional="i"
    )
    scripts: list[str] = []
    unsafe = None
    for opt, value in parsed.options:
        long_name = _long_matches(opt, frozenset({"expression", "file", "in-place"})) or opt
        if opt == "-i" or long_name == "in-place":
            unsafe = unsafe or "sed -i edits files in place"
        elif opt == "-e" or long_name == "expression":
            scripts.append(value.value if value else "")
        elif opt == "-f" or long_name == "file":
            unsafe = unsafe or "sed -f reads its script from a file, which is not checked"
    positionals = parsed.positionals
    if not scripts and not any(o in ("-f", "file") for o, _ in parsed.options):
        if not positionals:
            return ProgramCheck("sed without a script is not checked")
        scripts.append(positionals[0].value)
        if positionals[0].problems or positionals[0].uncertain:
            unsafe = unsafe or "the sed script could not be checked"
        positionals = positionals[1:]
    writes: list[Word] = []
    reads: list[Word] = []
    for script in scripts:
        found = analyse_sed(script)
        unsafe = unsafe or found.problem
        writes += [_literal(w) for w in found.writes]
        reads += [_literal(r) for r in found.reads]
    return ProgramCheck(unsafe, positionals + reads, writes)


# ----------------------------------------------------------------------- find

_FIND_FLAGS = frozenset(
    [
        "-print",
        "-print0",
        "-ls",
        "-prune",
        "-quit",
        "-true",
        "-false",
        "-empty",
        "-readable",
        "-writable",
        "-executable",
        "-nouser",
        "-nogroup",
        "-depth",
        "-d",
        "-mount",
        "-xdev",
        "-noleaf",
        "-ignore_readdir_race",
        "-noignore_readdir_race",
        "-daystart",
        "-not",
        "-and",
        "-or",
        "-a",
        "-o",
        "(",
        ")",
        "!",
        ",",
        "-help",
        "--help",
        "-version",
    ]
)
_FIND_VALUES = frozenset(
    [
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-lname",
        "-ilname",
        "-type",
        "-xtype",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-used",
        "-perm",
        "-user",
        "-group",
        "-uid",
        "-gid",
        "-links",
        "-inum",
        "-maxdepth",
        "-mindepth",
        "-printf",
        "-fstype",
        "-regextype",
        "-context",
    ]
)
_FIND_FILE_VALUES = frozenset({"-newer", "-anewer", "-cnewer", "-samefile"})
_FIND_WRITES = frozenset({"-fprint", "-fprint0", "-fprintf", "-fls"})
_FIND_UNSAFE = {
    "-exec": "find -exec runs a command",
    "-execdir": "find -execdir runs a command",
    "-ok": "find -ok runs a command",
    "-okdir": "find -okdir runs a command",
    "-delete": "find -delete deletes files",
}


def _check_find(args: list[Word]) -> ProgramCheck:
    paths: list[Word] = []
    writes: list[Word] = []
    unsafe = None
    follow: Follow = "args"
    i = 0
    while i < len(args) and (
        args[i].value in ("-H", "-L", "-P", "-D") or args[i].value.startswith("-O")
    ):
        if args[i].value == "-L":
            follow = "tree"
        i += 2 if args[i].value == "-D" else 1
    while i < len(args) and not (
        args[i].value.startswith("-") or args[i].value in ("(", ")", "!", ",")
    ):
        paths.append(args[i])
        i += 1
    while i < len(args):
        token = args[i].value
        i += 1
        if token in _FIND_UNSAFE:
            unsafe = unsafe or _FIND_UNSAFE[token]
            if token in ("-exec", "-execdir", "-ok", "-okdir"):
                while i < len(args) and args[i].value not in (";", "+"):
                    i += 1
                i += 1
            continue
        if token in _FIND_WRITES:
            if i < len(args):
                writes.append(args[i])
            i += 2 if token == "-fprintf" else 1
            continue
        if token == "-files0-from":
            where = args[i].value if i < len(args) else "stdin"
            unsafe = unsafe or "find -files0-from " + _NAMES_FROM_FILE.format(value=where)
            i += 1
            continue
        if token == "-follow":
            follow = "tree"
            continue
        if token in _FIND_FLAGS:
            continue
        if token in _FIND_VALUES:
            i += 1
            continue
        if token in _FIND_FILE_VALUES or (token.startswith("-newer") and len(token) == 8):
            if i < len(args) and not token.endswith("t"):
                paths.append(args[i])
            i += 1
            continue
        unsafe = unsafe or f"find {token} is not checked"
    if not paths:
        paths.append(_literal("."))
    return ProgramCheck(unsafe, paths, writes, follow=follow, shows_contents=False)
