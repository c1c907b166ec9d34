"""Shell grammar for the terminal policy: tree-sitter-bash parsing and word values.

Owns turning a command line into syntax nodes and each argument node into a
`Word` (its literal value as bash would see it, plus what makes that value
unknowable: variables, nested commands, globs, `~`). Variables expand to
the values the command's allow-listed environment gives them when the caller
knows that environment (`Variables`); otherwise a variable is a refusal. It
also counts brace expansions without making them (`brace_count`), measures
nesting (`depth`), and rewrites a checked command so that every pipeline
reports the exit status of each of its stages (`instrument`). No policy
decisions live here.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

import tree_sitter
import tree_sitter_bash

from hello_tui.tools.shell import arithmetic

Action = Literal["run", "ask", "refuse"]
RANK: dict[str, int] = {"run": 0, "ask": 1, "refuse": 2}

# Node kinds whose structure the policy understands; anything else is judged
# "not checked" (ask), though the commands inside are still judged.
STRUCTURE_NODES = frozenset({"program", "list", "pipeline", "redirected_statement", "command"})
REDIRECT_NODES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
SUBSTITUTION_NODES = frozenset({"command_substitution", "process_substitution"})
_GLOB_CHARS = re.compile(r"[*?\[]")
_MAX_BRACE_RESULTS = 256
# bash's own variables: their values are not in the environment, but harmless to print.
# `$_` is the last word of the command before (`echo .env; cat $_` reads .env), SHELL
# the user's login shell from the password database when the environment has none.
BASH_DYNAMIC = frozenset(
    [
        "_",
        "SHELL",
        "BASH_LOADABLES_PATH",
        "OPTERR",
        "BASH",
        "BASHOPTS",
        "BASHPID",
        "BASH_ARGC",
        "BASH_ARGV",
        "BASH_COMMAND",
        "BASH_LINENO",
        "BASH_REMATCH",
        "BASH_SOURCE",
        "BASH_SUBSHELL",
        "BASH_VERSINFO",
        "BASH_VERSION",
        "BASH_ALIASES",
        "BASH_CMDS",
        "BASH_EXECUTION_STRING",
        "BASH_ARGV0",
        "COLUMNS",
        "COPROC",
        "DIRSTACK",
        "EPOCHREALTIME",
        "EPOCHSECONDS",
        "EUID",
        "FUNCNAME",
        "GROUPS",
        "HISTCMD",
        "HOSTNAME",
        "HOSTTYPE",
        "IFS",
        "LINENO",
        "LINES",
        "MACHTYPE",
        "MAPFILE",
        "OLDPWD",
        "OPTARG",
        "OPTIND",
        "OSTYPE",
        "PIPESTATUS",
        "PPID",
        "PS4",
        "PWD",
        "RANDOM",
        "READLINE_LINE",
        "REPLY",
        "SECONDS",
        "SHELLOPTS",
        "SHLVL",
        "SRANDOM",
        "UID",
    ]
)
_SPLIT_OR_GLOB = re.compile(r"[ \t\n*?\[]")
# $? $$ $! $# $- and ${#name}: numbers and flags, never a path.
_NUMERIC_SPECIALS = frozenset("?$!#-")
# The ones bash sets as the command runs: the last status, its process id, the last
# background job's (empty before one: `cat .env$!` reads .env), the option flags (`hBc`:
# `cat .git/[$-]onfig` globs the config), and a variable's length. Unknown as a path or
# part of one; as arithmetic a number, or flags taken for an unset name: harmless.
RUNTIME_VALUE = "expands a number or flags bash sets as the command runs"
_RUNTIME_SPECIALS = frozenset("?$!-")


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse(command: str) -> tree_sitter.Node:
    return _parser().parse(command.encode("utf-8")).root_node


# Tokens a newline may be part of: quoted text, here-documents, comments, the newline
# itself, and what tree-sitter could not parse (asked about already).
_MAY_HOLD_NEWLINES = frozenset(
    {
        "raw_string",
        "string_content",
        "ansi_c_string",
        "translated_string",
        "heredoc_body",
        "heredoc_content",
        "heredoc_end",
        "heredoc_start",
        "comment",
        "\n",
        "ERROR",
    }
)


# What makes a `$` start an expansion to bash: a name, a digit, a special parameter.
_EXPANDS_AFTER_DOLLAR = re.compile(rb"[A-Za-z0-9_?$!#*@-]")
# A "name" tree-sitter reads from a digit on (`$1nv`): bash takes the one digit alone.
_DIGIT_LED_NAME = re.compile(r"[0-9].+")


def misread_text(root: tree_sitter.Node, command: str) -> str | None:
    """Why tree-sitter's words for `command` are not bash's, when it can tell, else None.

    Between tokens tree-sitter skips every character of JavaScript's `\\s` and a
    backslash before a blank; bash skips only spaces, tabs and newlines (continuations
    are joined before). A carriage return, vertical tab or form feed is part of a word to
    bash (`cat .[e<CR>]nv` is one glob matching .env, two harmless words to tree-sitter),
    and a backslash-space starts one: in `ls; true \\ #; id` tree-sitter sees a comment
    after `true`, bash the word ` #`, then `; id`. And tree-sitter's empty backquotes join
    the words around them across blanks (`.env `` a` is one word `.enva` to it), where
    bash splits: the pieces of one word always touch. Nor does a word hold a newline
    outside quotes: tree-sitter begins one with the newline before an escaped character
    (`cat .env<NL>\\>x` is `cat` of `.env` and `<NL>\\>x`, pieces that touch, so one
    harmless word), where bash ends the command there. And a `$` tree-sitter leaves
    bare before a name or digit (`.env$x$1`: `$` then the number 1) bash expands: `$1`
    is empty there, so bash opens `.env`), or reads as one name with the letters after
    a digit (`.e$x$1nv` is `.e` to it, `.env` to bash)."""
    source = command.encode("utf-8")
    leaves: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "concatenation" and any(
            a.end_byte != b.start_byte for a, b in itertools.pairwise(node.children)
        ):
            return f"bash splits {text_of(node)[:40]!r} into words the policy's parser joins"
        if node.type == "variable_name" and _DIGIT_LED_NAME.fullmatch(text_of(node)):
            holder = node.parent
            if holder is not None and holder.type == "simple_expansion":
                return f"bash expands one digit of {text_of(holder)[:40]!r} as a parameter"
        if node.child_count:
            stack.extend(node.children)
            continue
        leaves.append((node.start_byte, node.end_byte))
        after = source[node.end_byte : node.end_byte + 1]
        kind = node.parent.type if node.parent is not None else ""
        if node.type == "$" and kind != "simple_expansion" and _EXPANDS_AFTER_DOLLAR.match(after):
            return f"bash expands the $ in {text_of(node.parent or node)[:40]!r}"
        if node.type not in _MAY_HOLD_NEWLINES and b"\n" in source[node.start_byte : node.end_byte]:
            return f"bash ends a command at the newline in {text_of(node)[:40]!r}"
    leaves.sort()
    position = 0
    for start, end in [*leaves, (len(source), len(source))]:
        gap = source[position:start]
        if gap.strip(b" \t\n"):
            skipped = gap.decode("utf-8", "replace")[:40]
            return f"bash reads {skipped!r} as part of a word, where the policy's parser skips it"
        position = max(position, end)
    return None


# Where bash keeps a backslash-newline as it is: in single quotes, `$'…'`, a comment (which
# ends at the newline all the same) and a here-document (judged on its own).
_KEEPS_CONTINUATION = ("comment", "raw_string", "ansi_c_string", "heredoc")
_CONTINUATION = re.compile(rb"\\+\n")


def join_continuations(command: str) -> str:
    """`command` with bash's line continuations removed, as bash reads it.

    bash drops every unquoted (or double-quoted) backslash-newline before it splits
    words, so `cat .e\\<newline>nv` reads `.env`; tree-sitter takes the two halves for two
    words. A backslash that is itself escaped (`\\\\<newline>`) ends the line instead.
    """
    if "\\\n" not in command:
        return command
    data = command.encode("utf-8")
    kept: list[tuple[int, int]] = []
    stack = [parse(command)]
    while stack:
        node = stack.pop()
        if node.type.startswith(_KEEPS_CONTINUATION):
            kept.append((node.start_byte, node.end_byte))
        else:
            stack.extend(node.children)
    out, start = bytearray(), 0
    for match in _CONTINUATION.finditer(data):
        backslash = match.end() - 2
        if (match.end() - 1 - match.start()) % 2 == 0:
            continue  # `\\` then a newline: an escaped backslash, and the line ends
        if any(a <= backslash < b for a, b in kept):
            continue
        out += data[start:backslash]
        start = match.end()
    out += data[start:]
    return out.decode("utf-8")


def text_of(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


@dataclass
class Word:
    """One shell word: its value after quote removal and what makes it uncertain."""

    value: str
    source: str
    glob: bool = False  # unquoted * ? [ : bash expands it against the filesystem
    tilde: bool = False  # unquoted leading ~ : the user's home directory
    brace: bool = False  # unquoted {a,b} or {1..3}
    # Why the value cannot be known before running, and how strict that is.
    problems: list[tuple[Action, str]] = field(default_factory=list)
    # A value that is unknown but harmless while it is only printed (`echo ${X:-y}`).
    uncertain: list[tuple[Action, str]] = field(default_factory=list)
    # The word as written, for a word that brace or glob expansion made: what a message
    # names (a match may be a name outside the repo, not the model's to learn).
    expanded_from: str | None = None
    # The glob pattern bash matches, where quoted or escaped characters stay literal
    # (`.e[n\\]]v`, `a'*'*`); empty when it is the value itself.
    pattern: str = ""

    @property
    def glob_pattern(self) -> str:
        return self.pattern or self.value

    @property
    def static(self) -> bool:
        return not (self.glob or self.tilde or self.brace or self.problems or self.uncertain)


@dataclass(frozen=True)
class Variables:
    """What variables expand to: the command's environment, minus names it sets itself."""

    values: Mapping[str, str]
    assigned: frozenset[str] = frozenset()
    cwd: str = ""

    def lookup(self, name: str) -> str | None:
        """The value bash will use, or None when it cannot be known here."""
        if name in self.assigned:
            return None
        if name == "PWD":
            return self.cwd or None
        if name in BASH_DYNAMIC:
            return None
        if name == "0":
            return "bash"
        if name.isdigit() or name in ("@", "*"):
            return ""  # `bash -c` gets no positional parameters
        if name == "#":
            return "0"  # `bash -c` gets no positional parameters
        if name in _RUNTIME_SPECIALS:
            return None
        return self.values.get(name, "")  # not in the environment: unset, so empty


def _unescape_unquoted(raw: str) -> str:
    return re.sub(r"\\(.)", r"\1", raw.replace("\\\n", ""), flags=re.DOTALL)


def _unescape_double_quoted(raw: str) -> str:
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), raw)


def _has_unescaped(pattern: re.Pattern[str], raw: str) -> bool:
    return bool(pattern.search(re.sub(r"\\.", "", raw, flags=re.DOTALL)))


def _variable_problem(node: tree_sitter.Node) -> tuple[Action, str]:
    text = text_of(node)
    return (
        "refuse",
        (
            f"expands {text}: a variable's value can't be checked before running "
            "(and $HOME-like values lead out of the repo); write the value out"
        ),
    )


def _expansion_name(node: tree_sitter.Node) -> str | None:
    """`$NAME`, `${NAME}` (and `$?`, `$1`): the name; None for `${X:-y}` and the like."""
    names = [c for c in node.named_children if c.type in ("variable_name", "special_variable_name")]
    if len(names) != 1:
        return None
    if node.type == "expansion":
        inner = [c.type for c in node.children if c.type not in ("${", "}")]
        if inner == ["#", "variable_name"]:
            return "${#}"  # ${#X}: a length, set as the command runs
        if len(inner) != 1:
            return None
    return text_of(names[0])


def _piece_value(nodes: list[tree_sitter.Node], variables: Variables | None) -> str | None:
    """The text bash evaluates for these nodes (expanded); None when it can't be known."""
    pieces = []
    for child in nodes:
        if child.type in ("simple_expansion", "expansion", "string", "raw_string"):
            word = word_of(child, variables)
            if word.problems or word.uncertain:
                return None
            pieces.append(word.value)
        else:
            pieces.append(text_of(child))
    return "".join(pieces)


def arithmetic_problems(node: tree_sitter.Node, variables: Variables | None) -> list[str]:
    """Why the parts of `${...}` that bash evaluates as arithmetic could run a command:
    a subscript, the offset and length of `${x:1:2}`, the variable `${!x}` names."""
    lookup = variables.lookup if variables is not None else None
    source = text_of(node)
    if not source.endswith("}"):
        return [f"{source[:60]} does not parse as one expansion, so what it evaluates is unknown"]
    found: list[str | None] = []
    children = node.children
    kinds = [c.type for c in children]
    for child in node.named_children:
        if child.type == "subscript":
            inside = [c for c in child.children if c.type not in ("variable_name", "[", "]")]
            value = _piece_value(inside, variables)
            found.append(
                f"the subscript of {text_of(child)[:60]} can't be known before running"
                if value is None
                else arithmetic.subscript_problem(value, lookup)
            )
    if kinds[:2] == ["${", "!"] and len(children) > 3:
        found.append(_indirection_problem(children[2], children[3], source, lookup))
    if ":" in kinds:
        start = kinds.index(":")
        segment: list[tree_sitter.Node] = []
        for child in children[start + 1 :]:
            if child.type in (":", "}"):
                value = _piece_value(segment, variables)
                found.append(
                    f"the offset or length in {source[:60]} can't be known before running"
                    if value is None
                    else arithmetic.expression_problem(value, lookup)
                )
                segment = []
            else:
                segment.append(child)
    return [problem for problem in found if problem]


def _indirection_problem(
    named: tree_sitter.Node, after: tree_sitter.Node, source: str, lookup: arithmetic.Lookup | None
) -> str | None:
    """`${!x}`, and `${!x:-y}`, `${!_#a}`, `${!x[0]}`, `${!x@Q}` with any operator after the
    name: bash takes the value of `x` (of `$_`, of `$1`) as the name of the variable to
    expand, and evaluates a subscript in it as arithmetic (`a[$(id)]` runs id). Not
    `${!x*}`, `${!x@}` (the names starting with x) or `${!x[@]}` (an array's keys)."""
    if named.type == "subscript":
        index = [c for c in named.children if c.type not in ("variable_name", "[", "]")]
        if after.type == "}" and [text_of(c) for c in index] in (["@"], ["*"]):
            return None
        return f"{source[:60]} names a variable by an array element's value, which can't be known"
    if named.type not in ("variable_name", "special_variable_name") and not (
        named.type in _NUMERIC_SPECIALS and not named.is_named
    ):
        return f"{source[:60]} names a variable in a way that is not checked"
    if after.type == "*" or (
        after.type == "@" and after.next_sibling is not None and after.next_sibling.type == "}"
    ):
        return None
    value = lookup(text_of(named)) if lookup is not None else None
    if value is None:
        return f"{source[:60]} names a variable by a value that can't be known before running"
    if value.isdigit() or value in ("", "@", "*", "#", "?", "$", "!", "-"):
        return None  # a positional or special parameter (`${!#}`: the last argument), or none
    return arithmetic.reference_problem(value, lookup)


# `${x@OP}` transformations that only reshape the value. `@P` is not one of them: it
# expands the value as a prompt string, running every `$(...)` in it, so a folder named
# `$(sh p)` makes `echo ${PWD@P}` run the repo's script. An operator not listed asks.
_HARMLESS_TRANSFORMS = frozenset("QEAaKkuUL")


def _transform_problems(node: tree_sitter.Node) -> list[str]:
    children = node.children
    for at, child in enumerate(children[:-1]):
        if child.type == "@" and children[at + 1].type != "}":
            operator = text_of(children[at + 1])
            if operator not in _HARMLESS_TRANSFORMS:
                why = f"{text_of(node)[:60]} expands the value as a prompt (@{operator})"
                return [f"{why}, which runs the commands written in it"]
    return []


_HIDDEN_COMMAND = re.compile(r"`|[<>]\(")


def _backquote_problems(node: tree_sitter.Node) -> list[str]:
    """`${X:-`cmd`}`, `${X/a/`cmd`}`, `${X:-<(cmd)}`: bash runs backquoted commands and
    process substitutions in the words of an expansion, where tree-sitter leaves them as
    text (no substitution node to judge)."""
    source = text_of(node)
    if _has_unescaped(_HIDDEN_COMMAND, source):
        return [f"{source[:60]} runs a command written in it, which is not checked"]
    return []


_EXPANDED_IN_TEXT = re.compile(r"\$[({\[]|`")


def _hidden_expansions(node: tree_sitter.Node, quoted: bool) -> list[str]:
    """Expansions bash performs where tree-sitter sees only text, so no substitution node
    is there to judge: the pattern of `${x#pat}`, `${x%pat}`, `${x^pat}`, `${x,pat}`
    (`${PWD#$(cmd)}` runs cmd), and inside double quotes the single quotes of an
    expansion's word, which quote nothing there (`"${x:-'$(cmd)'}"`)."""
    stack = list(node.children)
    while stack:
        child = stack.pop()
        kind = child.type
        if (kind == "regex" or (quoted and kind == "raw_string")) and _has_unescaped(
            _EXPANDED_IN_TEXT, text_of(child)
        ):
            source = text_of(node)
            return [f"{source[:60]} expands {text_of(child)[:40]!r}, which is not checked"]
        stack.extend(child.children)
    return []


def _expand_variable(
    node: tree_sitter.Node, variables: Variables | None, quoted: bool = False
) -> Word:
    source = text_of(node)
    if variables is None:
        return Word(value=source, source=source, problems=[_variable_problem(node)])
    if node.type == "expansion":
        evaluated = (
            _backquote_problems(node)
            or _hidden_expansions(node, quoted)
            or arithmetic_problems(node, variables)
        ) or _transform_problems(node)
        if evaluated:
            return Word(value=source, source=source, problems=[("ask", evaluated[0])])
    name = _expansion_name(node)
    if name == "${#}" or (name is not None and name in _RUNTIME_SPECIALS):
        return Word(value=source, source=source, uncertain=[("ask", RUNTIME_VALUE)])
    value = variables.lookup(name) if name is not None else None
    if value is None:
        why = (
            f"expands {source}, which the command sets itself"
            if name in variables.assigned
            else f"expands {source}, whose value can't be known before running"
        )
        return Word(value=source, source=source, uncertain=[("ask", why)])
    if not quoted and (_SPLIT_OR_GLOB.search(value) or value.startswith("~")):
        # Unquoted, bash would split the value into several words and glob each.
        why = f"expands {source} unquoted to {value[:60]!r}, which bash splits or globs"
        return Word(value=value, source=source, uncertain=[("ask", why)])
    return Word(value=value, source=source)


def glob_escape(text: str) -> str:
    """`text` as a glob pattern that matches it alone (quoted characters are literal)."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def concatenated(parts: list[Word], source: str) -> Word:
    """One word of pieces written together (`a'b'"$c"`, or what tree-sitter split apart)."""
    return Word(
        value="".join(p.value for p in parts),
        source=source,
        glob=any(p.glob for p in parts),
        tilde=bool(parts) and parts[0].tilde,
        brace=any(p.brace for p in parts),
        problems=[problem for p in parts for problem in p.problems],
        uncertain=[problem for p in parts for problem in p.uncertain],
        pattern="".join(p.glob_pattern for p in parts),
    )


def word_of(node: tree_sitter.Node, variables: Variables | None = None) -> Word:
    """The value bash would give this argument node, as far as it can be known."""
    kind = node.type
    source = text_of(node)
    if kind == "word":
        return Word(
            value=_unescape_unquoted(source),
            source=source,
            pattern=source,
            glob=_has_unescaped(_GLOB_CHARS, source),
            tilde=source.startswith("~"),
            brace=_has_unescaped(re.compile(r"[{}]"), source),
        )
    if kind == "number":
        return Word(value=source, source=source)
    if kind == "raw_string":
        return Word(value=source[1:-1], source=source, pattern=glob_escape(source[1:-1]))
    if kind == "string":
        quoted = _double_quoted(node, variables)
        quoted.pattern = glob_escape(quoted.value)
        return quoted
    if kind == "concatenation":
        return concatenated([word_of(child, variables) for child in node.named_children], source)
    if kind == "brace_expression":
        return Word(value=source, source=source, brace=True)
    if kind in ("simple_expansion", "expansion"):
        return _expand_variable(node, variables)
    if kind in SUBSTITUTION_NODES:
        return Word(
            value=source, source=source, problems=[("ask", f"runs a nested command {source}")]
        )
    return Word(
        value=source, source=source, problems=[("ask", f"uses {source!r}, which is not checked")]
    )


def _double_quoted(node: tree_sitter.Node, variables: Variables | None) -> Word:
    """A "..." string: its text with variables expanded (no globbing, no splitting)."""
    source = text_of(node)
    raw = node.text or b""
    word = Word(value="", source=source)
    pieces: list[str] = []
    position = node.start_byte + 1
    for child in node.named_children:
        between = raw[position - node.start_byte : child.start_byte - node.start_byte]
        pieces.append(_unescape_double_quoted(between.decode("utf-8", errors="replace")))
        if child.type == "string_content":
            pieces.append(_unescape_double_quoted(text_of(child)))
        elif child.type in ("simple_expansion", "expansion"):
            part = _expand_variable(child, variables, quoted=True)
            pieces.append(part.value)
            word.problems += part.problems
            word.uncertain += part.uncertain
        elif child.type in SUBSTITUTION_NODES:
            pieces.append(text_of(child))
            word.problems.append(("ask", f"runs a nested command {text_of(child)}"))
        else:
            pieces.append(text_of(child))
            word.problems.append(("ask", f"uses {text_of(child)}, which is not checked"))
        position = child.end_byte
    tail = raw[position - node.start_byte : len(raw) - 1]
    pieces.append(_unescape_double_quoted(tail.decode("utf-8", errors="replace")))
    word.value = "".join(pieces)
    return word


def depth(root: tree_sitter.Node) -> int:
    """How deeply the syntax tree nests (counted without recursion)."""
    deepest = 0
    stack = [(root, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in node.children)
    return deepest


def brace_count(text: str, cap: int = 1 << 20) -> int:
    """How many words brace expansion makes of `text` (at most `cap` + 1), without making them.

    Groups one after the other multiply (`{a,b}{c,d}` is 4); the options of a
    group add up (`{a,{b,c}}` is 3). Iterative along the word, recursive only
    into a group's options, so a long word cannot exhaust the stack.
    """
    total, position = 1, 0
    while total <= cap:
        group = _first_group(text, position)
        if group is None:
            break
        _, end, options = group
        if isinstance(options, int):
            inside = options
        else:
            inside = 0
            for option in options:
                inside = min(inside + brace_count(option, cap), cap + 1)
        total = min(total * inside, cap + 1)
        position = end + 1
    return min(total, cap + 1)


def _first_group(text: str, position: int) -> tuple[int, int, list[str] | int] | None:
    """The first group at or after `position` that bash expands: (start, end, options or length)."""
    start = text.find("{", position)
    while start != -1:
        end = _matching_brace(text, start)
        if end == -1:
            return None
        inner = text[start + 1 : end]
        options = _split_top_level_commas(inner)
        if len(options) > 1:
            return start, end, options
        length = _sequence_length(inner)
        if length:
            return start, end, length
        start = text.find("{", start + 1)
    return None


def brace_depth(text: str) -> int:
    """How deeply braces nest in `text` (quotes and escapes ignored: an upper bound)."""
    deepest = level = 0
    for ch in text:
        if ch == "{":
            level += 1
            deepest = max(deepest, level)
        elif ch == "}":
            level = max(0, level - 1)
    return deepest


def _matching_brace(text: str, start: int) -> int:
    depth_ = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth_ += 1
        elif text[i] == "}":
            depth_ -= 1
            if depth_ == 0:
                return i
    return -1


# bash's sequence expressions: `{x..y[..step]}` with x, y integers (an optional sign; a
# leading zero pads every number to the wider end's width) or both single letters; the
# step's sign is ignored and 0 counts as 1. A sequence of one (`{n..n}`) is expanded too.
_INT_SEQUENCE = re.compile(r"([-+]?\d+)\.\.([-+]?\d+)(?:\.\.([-+]?\d+))?")
_CHAR_SEQUENCE = re.compile(r"([A-Za-z])\.\.([A-Za-z])(?:\.\.([-+]?\d+))?")


def _sequence_length(inner: str) -> int:
    """How many words the group's sequence makes; 0 when it is no sequence."""
    match = _INT_SEQUENCE.fullmatch(inner) or _CHAR_SEQUENCE.fullmatch(inner)
    if match is None:
        return 0
    a, b = (int(g) if g[-1].isdigit() else ord(g) for g in match.group(1, 2))
    step = abs(int(match.group(3) or 1)) or 1
    return abs(b - a) // step + 1


def brace_expand(text: str) -> list[str] | None:
    """bash brace expansion of `text`; None when it would produce too many words."""
    results = _brace_expand(text)
    return results if len(results) <= _MAX_BRACE_RESULTS else None


def _brace_expand(text: str) -> list[str]:
    start = text.find("{")
    while start != -1:
        depth, end = 0, -1
        for i in range(start, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    end = i
                    break
        if end == -1:
            return [text]
        inner, head, tail = text[start + 1 : end], text[:start], text[end + 1 :]
        options: list[str] | None = _split_top_level_commas(inner)
        sequence = options is not None and len(options) == 1
        if sequence:
            options = _sequence(inner)
        if options is not None and (len(options) > 1 or sequence):
            out: list[str] = []
            for option in options:
                for rest in _brace_expand(head + option + tail):
                    out.append(rest)
                    if len(out) > _MAX_BRACE_RESULTS:
                        return out
            return out
        start = text.find("{", start + 1)
    return [text]


def _split_top_level_commas(inner: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return parts


def _sequence(inner: str) -> list[str] | None:
    length = _sequence_length(inner)
    if not length:
        return None
    if length > _MAX_BRACE_RESULTS:
        return [inner] * (_MAX_BRACE_RESULTS + 1)  # too many: the caller gives up
    match = _INT_SEQUENCE.fullmatch(inner)
    step = abs(int((match or _CHAR_SEQUENCE.fullmatch(inner)).group(3) or 1)) or 1  # type: ignore[union-attr]
    if match is None:
        first, last = (ord(c) for c in inner.split("..")[:2])
        return [chr(first + i * step * (1 if last >= first else -1)) for i in range(length)]
    ends = match.group(1, 2)
    first, last = int(ends[0]), int(ends[1])
    padded = any(e.lstrip("+-").startswith("0") and len(e.lstrip("+-")) > 1 for e in ends)
    width = max(len(e.lstrip("+")) for e in ends) if padded else 0
    sign = 1 if last >= first else -1
    return [f"{first + i * step * sign:0{width}d}" for i in range(length)]


# ---------------------------------------------------------------- instrumenting

STATUS_FUNCTION = "__hello_tui_status"


@dataclass
class Instrumented:
    """A script that appends `<index>:<status> <status>...` per pipeline to a file."""

    script: str
    pipelines: list[list[str]]  # stage names of each pipeline, by index


def instrument(command: str, status_file: str) -> Instrumented | None:
    """Rewrite `command` so each pipeline of 2+ stages records every stage's status.

    Returns None when the command uses syntax this rewrite does not handle
    (here-documents, compound commands, comments); the caller then runs the
    command as written and reports only the final status.
    """
    root = parse(command)
    if root.has_error or not _plain_structure(root):
        return None
    pipelines: list[list[str]] = []
    body = _render(root, "", pipelines)
    quoted = "'" + status_file.replace("'", "'\\''") + "'"
    prelude = (
        f'{STATUS_FUNCTION}() {{ local s=("${{PIPESTATUS[@]}}"); '
        f'echo "$1:${{s[*]}}" >> {quoted}; return "${{s[-1]}}"; }}\n'
    )
    return Instrumented(script=prelude + body, pipelines=pipelines)


def _plain_structure(node: tree_sitter.Node) -> bool:
    """True when `node` is only lists, pipelines and simple commands with plain redirects."""
    if node.type in ("program", "list", "pipeline"):
        return all(
            child.type in STRUCTURE_NODES and _plain_structure(child)
            for child in node.named_children
        )
    if node.type == "redirected_statement":
        return all(
            (child.type in STRUCTURE_NODES and _plain_structure(child))
            or child.type in ("file_redirect", "herestring_redirect")
            for child in node.named_children
        )
    return node.type == "command" and not any(
        child.type == "heredoc_redirect" for child in node.named_children
    )


def _stage_name(node: tree_sitter.Node) -> str:
    while node.type == "redirected_statement" and node.child_by_field_name("body") is not None:
        node = node.child_by_field_name("body")  # type: ignore[assignment]
    if node.type == "command":
        name = node.child_by_field_name("name")
        if name is not None:
            return word_of(name.named_children[0] if name.named_children else name).value
    return text_of(node).split(" ", 1)[0]


def _render(node: tree_sitter.Node, suffix: str, pipelines: list[list[str]]) -> str:
    """Source text of `node` with `suffix` (trailing redirects) kept on its last command.

    tree-sitter attaches `a && b > f` redirects to the whole list; bash applies
    them to the last command only, so they travel down to it here.
    """
    kind = node.type
    if kind == "program":
        lines = []
        children = node.children
        for i, child in enumerate(children):
            if not child.is_named:
                continue
            background = i + 1 < len(children) and children[i + 1].type == "&"
            lines.append(_render(child, "", pipelines) + (" &" if background else ""))
        return "\n".join(lines) + "\n"
    if kind == "list":
        named = node.named_children
        operator = next(c.type for c in node.children if not c.is_named)
        return (
            _render(named[0], "", pipelines)
            + f" {operator} "
            + _render(named[1], suffix, pipelines)
        )
    if kind == "pipeline":
        stages = node.named_children
        operators = [c.type for c in node.children if not c.is_named]
        texts = [_render(s, "", pipelines) for s in stages[:-1]]
        texts.append(_render(stages[-1], suffix, pipelines))
        joined = texts[0]
        for operator, text in zip(operators, texts[1:]):
            joined += f" {operator} {text}"
        index = len(pipelines)
        pipelines.append([_stage_name(s) for s in stages])
        return f"{{ {joined}; {STATUS_FUNCTION} {index}; }}"
    if kind == "redirected_statement":
        body = node.child_by_field_name("body")
        if body is not None and body.type in ("list", "pipeline"):
            redirects = " ".join(text_of(c) for c in node.children if c.type in REDIRECT_NODES)
            return _render(body, (" " + redirects + suffix), pipelines)
    return text_of(node) + suffix
