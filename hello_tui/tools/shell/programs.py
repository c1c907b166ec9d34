"""What the read-only programs of the terminal policy may do, program by program.

`check_read_only(name, args)` says whether a known read-only program is used
in a read-only way (`unsafe` names the first thing that is not) and which of
its arguments name files it reads (`paths`), so the policy can keep them
inside the repo. Options are parsed the way GNU getopt does, including
clustered short options (`-ni`) and abbreviated long ones (`--out=`), because
those are the usual ways around a naive check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hello_tui.tools.shell.parse import Word


@dataclass
class ProgramCheck:
    unsafe: str | None  # why this use is not read-only (the policy then asks)
    paths: list[Word] = field(default_factory=list)  # arguments naming files it reads


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


def parse_options(
    args: list[Word],
    short_values: str = "",
    long_values: frozenset[str] = frozenset(),
    short_optional: str = "",
) -> ParsedOptions:
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
            elif _long_matches(name, long_values) and i < len(args):
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
    unsafe_short: dict[str, str] = field(default_factory=dict)
    unsafe_long: dict[str, str] = field(default_factory=dict)
    file_options: frozenset[str] = frozenset()  # options whose value is a file it reads
    paths: str = "all"  # all | none | after_pattern
    pattern_options: frozenset[str] = frozenset()  # options that supply the pattern
    no_pattern_flags: frozenset[str] = frozenset()  # flags under which there is no pattern


_FOLLOWS = "follows symbolic links, which may lead out of the repo"
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
    unsafe_short={"R": "grep -R " + _FOLLOWS},
    unsafe_long={"dereference-recursive": "grep --dereference-recursive " + _FOLLOWS},
    file_options=frozenset({"-f", "file", "exclude-from"}),
    paths="after_pattern",
    pattern_options=frozenset({"-e", "regexp", "-f", "file"}),
)

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
    ),
    "tree": Spec(
        short_values="LPIoHT",
        long_values=frozenset(["charset", "filelimit", "timefmt", "sort"]),
        unsafe_short={
            "o": "tree -o writes its listing to a file",
            "R": "tree -R writes an HTML listing into every directory",
            "l": "tree -l " + _FOLLOWS,
        },
    ),
    "cat": Spec(),
    "head": Spec(short_values="nc", long_values=frozenset({"lines", "bytes"})),
    "tail": Spec(
        short_values="nc",
        long_values=frozenset(["lines", "bytes", "pid", "sleep-interval", "max-unchanged-stats"]),
    ),
    "wc": Spec(file_options=frozenset({"files0-from"})),
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
        unsafe_short={
            "o": "sort -o writes its output to a file",
            "T": "sort -T writes temporary files into another directory",
        },
        unsafe_long={
            "output": "sort --output writes its output to a file",
            "compress-program": "sort --compress-program runs another program",
            "temporary-directory": "sort --temporary-directory writes temporary files elsewhere",
        },
        file_options=frozenset({"files0-from", "random-source"}),
    ),
    "uniq": Spec(
        short_values="fsw", long_values=frozenset({"skip-fields", "skip-chars", "check-chars"})
    ),
    "cut": Spec(
        short_values="bcdf",
        long_values=frozenset(["bytes", "characters", "delimiter", "fields", "output-delimiter"]),
    ),
    "tr": Spec(paths="none"),
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
        unsafe_short={
            "L": "rg -L " + _FOLLOWS,
            "z": "rg -z runs decompression programs",
        },
        unsafe_long={
            "pre": "rg --pre runs a preprocessor command on every file",
            "follow": "rg --follow " + _FOLLOWS,
            "search-zip": "rg --search-zip runs decompression programs",
            "hostname-bin": "rg --hostname-bin runs another program",
        },
        file_options=frozenset({"-f", "file", "ignore-file"}),
        paths="after_pattern",
        pattern_options=frozenset({"-e", "regexp", "-f", "file"}),
        no_pattern_flags=frozenset({"files", "type-list"}),
    ),
    "file": Spec(
        short_values="mfFeP",
        long_values=frozenset(["magic-file", "files-from", "separator", "exclude", "parameter"]),
        unsafe_short={"C": "file -C writes a compiled magic file"},
        unsafe_long={"compile": "file --compile writes a compiled magic file"},
        file_options=frozenset({"-m", "magic-file", "-f", "files-from"}),
    ),
    "stat": Spec(short_values="c", long_values=frozenset({"format", "printf"})),
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
        unsafe_short={"L": "du -L " + _FOLLOWS},
        unsafe_long={"dereference": "du --dereference " + _FOLLOWS},
        file_options=frozenset({"-X", "exclude-from", "files0-from"}),
    ),
    "pwd": Spec(paths="none"),
    "echo": Spec(paths="none"),
    "printf": Spec(paths="none"),
    "which": Spec(paths="none"),
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
        # GNU diff dereferences the symlinks it meets while recursing.
        unsafe_short={"r": "diff -r " + _FOLLOWS},
        unsafe_long={"recursive": "diff --recursive " + _FOLLOWS},
        file_options=frozenset({"-X", "exclude-from", "from-file", "to-file"}),
    ),
}

READ_ONLY_PROGRAMS = frozenset(SPECS) | {"sed", "awk", "find", "git"}


def check_read_only(name: str, args: list[Word]) -> ProgramCheck | None:
    """None when `name` is not a known read-only program."""
    if name == "sed":
        return _check_sed(args)
    if name == "awk":
        return _check_awk(args)
    if name == "find":
        return _check_find(args)
    if name == "git":
        return _check_git(args)
    spec = SPECS.get(name)
    if spec is None:
        return None
    return _check_spec(name, spec, args)


def _check_spec(name: str, spec: Spec, args: list[Word]) -> ProgramCheck:
    parsed = parse_options(args, spec.short_values, spec.long_values)
    unsafe = None
    paths: list[Word] = []
    for opt, value in parsed.options:
        if opt.startswith("-"):
            reason = spec.unsafe_short.get(opt[1:])
        else:
            matched = _long_matches(opt, frozenset(spec.unsafe_long))
            reason = spec.unsafe_long.get(matched) if matched else None
        unsafe = unsafe or reason
        long_name = opt if opt.startswith("-") else _long_matches(opt, spec.file_options) or opt
        if value is not None and long_name in spec.file_options:
            paths.append(value)
    if spec.paths == "none":
        return ProgramCheck(unsafe, [])
    positionals = parsed.positionals
    if spec.paths == "after_pattern":
        given = {
            o if o.startswith("-") else (_long_matches(o, spec.pattern_options) or o)
            for o, _ in parsed.options
        }
        no_pattern = any(
            not o.startswith("-") and _long_matches(o, spec.no_pattern_flags)
            for o, _ in parsed.options
        )
        if not (given & spec.pattern_options) and not no_pattern:
            positionals = positionals[1:]
    if name == "uniq" and len(parsed.positionals) > 1:
        unsafe = unsafe or "uniq with two files writes its output to the second"
    return ProgramCheck(unsafe, paths + positionals)


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
            j = i + 1
            if j < n and script[j] == "^":
                j += 1
            if j < n and script[j] == "]":
                j += 1
            close = script.find("]", j)
            if close == -1:
                raise _Unsure
            i = close + 1
            continue
        if ch == delim:
            return i + 1
        i += 1
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


def sed_script_problem(script: str) -> str | None:
    """Why this sed script is not read-only, or None when every command only prints."""
    try:
        return _sed_problem(script)
    except (_Unsure, IndexError):
        return "the sed script could not be checked"


def _sed_problem(script: str) -> str | None:
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
            while i < n and script[i] not in ";\n":
                i += 1
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
                    return "sed's s///w flag writes a file"
                if flag == "e":
                    return "sed's s///e flag runs a shell command"
                if flag not in "gpiImM0123456789":
                    raise _Unsure
                i += 1
            continue
        if cmd == "y":
            delim = script[i]
            i = _skip_text(script, i + 1, delim)
            i = _skip_text(script, i, delim)
            continue
        if cmd in "wW":
            return "sed's w command writes a file"
        if cmd == "e":
            return "sed's e command runs a shell command"
        if cmd in "rR":
            return "sed's r command reads another file"
        raise _Unsure
    return None


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
        if positionals[0].problems:
            unsafe = unsafe or "the sed script could not be checked"
        positionals = positionals[1:]
    for script in scripts:
        unsafe = unsafe or sed_script_problem(script)
    return ProgramCheck(unsafe, positionals)


# ------------------------------------------------------------------------ awk


def _strip_awk_strings(program: str) -> str | None:
    out, i, n = [], 0, len(program)
    while i < n:
        ch = program[i]
        if ch == '"':
            i += 1
            while i < n and program[i] != '"':
                i += 2 if program[i] == "\\" else 1
            if i >= n:
                return None
            out.append('""')
            i += 1
            continue
        if ch == "#":
            end = program.find("\n", i)
            i = n if end == -1 else end
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def awk_program_problem(program: str) -> str | None:
    """Why this awk program is not read-only, or None."""
    stripped = _strip_awk_strings(program)
    if stripped is None:
        return "the awk program could not be checked"
    if re.search(r"\bsystem\s*\(", stripped):
        return "awk's system() runs a shell command"
    if "getline" in stripped:
        return "awk's getline reads from a command or another file"
    if "|" in stripped.replace("||", ""):
        return "awk pipes output to or from a command"
    if "@" in stripped:
        return "awk @-directives load extensions"
    for statement in re.split(r"[;{}\n]", stripped):
        match = re.search(r"\bprintf?\b", statement)
        if not match:
            continue
        depth = 0
        for ch in statement[match.end() :]:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch == ">" and depth <= 0:
                return "awk's print > file writes a file"
    return None


def _check_awk(args: list[Word]) -> ProgramCheck:
    i, unsafe = 0, None
    while i < len(args):
        text = args[i].value
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        if text in ("-F", "-v"):
            i += 2
            continue
        if text.startswith(("-F", "-v")):
            i += 1
            continue
        if text.startswith("-f"):
            unsafe = unsafe or "awk -f reads its program from a file, which is not checked"
            i += 1 if len(text) > 2 else 2
            continue
        unsafe = unsafe or f"awk option {text} is not checked"
        i += 1
    rest = args[i:]
    reads_program_file = any(w.value.startswith("-f") for w in args[:i])
    if not reads_program_file:
        if not rest:
            return ProgramCheck("awk without a program is not checked")
        if rest[0].problems:
            unsafe = unsafe or "the awk program could not be checked"
        unsafe = unsafe or awk_program_problem(rest[0].value)
        rest = rest[1:]
    paths = [w for w in rest if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w.value)]
    return ProgramCheck(unsafe, paths)


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
_FIND_FILE_VALUES = frozenset({"-newer", "-anewer", "-cnewer", "-samefile", "-files0-from"})
_FIND_UNSAFE = {
    "-exec": "find -exec runs a command",
    "-execdir": "find -execdir runs a command",
    "-ok": "find -ok runs a command",
    "-okdir": "find -okdir runs a command",
    "-delete": "find -delete deletes files",
    "-fprint": "find -fprint writes a file",
    "-fprint0": "find -fprint0 writes a file",
    "-fprintf": "find -fprintf writes a file",
    "-fls": "find -fls writes a file",
    "-follow": "find -follow " + _FOLLOWS,
}


def _check_find(args: list[Word]) -> ProgramCheck:
    paths: list[Word] = []
    unsafe = None
    i = 0
    while i < len(args) and (
        args[i].value in ("-H", "-L", "-P", "-D") or args[i].value.startswith("-O")
    ):
        if args[i].value in ("-H", "-L"):
            unsafe = unsafe or f"find {args[i].value} " + _FOLLOWS
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
            elif token in ("-fprint", "-fprint0", "-fls"):
                i += 1
            elif token == "-fprintf":
                i += 2
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
    return ProgramCheck(unsafe, paths)


# ------------------------------------------------------------------------ git

GIT_READ_ONLY = frozenset(
    {"status", "diff", "log", "show", "blame", "ls-files", "grep", "rev-parse"}
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
    ]
)
_GIT_UNSAFE_GLOBAL = {
    "-c": "git -c changes configuration (pagers, external diff tools, hooks)",
    "--config-env": "git --config-env changes configuration",
    "--exec-path": "git --exec-path runs programs from another directory",
    "-p": "git -p starts a pager",
    "--paginate": "git --paginate starts a pager",
}
_GIT_UNSAFE_LONG = {
    "output": "git --output writes a file",
    "ext-diff": "git --ext-diff runs an external diff program",
    "open-files-in-pager": "git grep --open-files-in-pager starts a pager",
}


def _check_git(args: list[Word]) -> ProgramCheck:
    paths: list[Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        text = word.value
        if not text.startswith("-"):
            break
        i += 1
        name = text.split("=", 1)[0]
        if name in _GIT_UNSAFE_GLOBAL:
            return ProgramCheck(_GIT_UNSAFE_GLOBAL[name])
        if name == "-C" or name in ("--git-dir", "--work-tree", "--namespace"):
            if "=" in text:
                paths.append(_value_word(word, text.split("=", 1)[1]))
            elif i < len(args):
                paths.append(args[i])
                i += 1
            continue
        if text not in _GIT_HARMLESS_GLOBAL:
            return ProgramCheck(f"git option {text} is not checked")
    if i >= len(args):
        return ProgramCheck(None, paths)
    sub = args[i].value
    if sub not in GIT_READ_ONLY:
        return ProgramCheck(f"git {sub} is not a read-only git command", paths)
    unsafe = None
    for word in args[i + 1 :]:
        text = word.value
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            matched = _long_matches(name, frozenset(_GIT_UNSAFE_LONG))
            if matched:
                unsafe = unsafe or _GIT_UNSAFE_LONG[matched]
            if eq:
                paths.append(_value_word(word, value))
        elif text.startswith("-"):
            if sub == "grep" and "O" in text[1:]:
                unsafe = unsafe or "git grep -O starts a pager"
        else:
            paths.append(word)
    return ProgramCheck(unsafe, paths)
