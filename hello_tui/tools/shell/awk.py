"""awk for the terminal policy: a tokenizer for program text and what makes a program unsafe.

A regular expression search over awk source is fooled by `/#/ { system(...) }`
(the `#` is inside a regex literal, not a comment), by `"\"" ; system(...)`
and by a backslash-newline before `> file`. So the program is tokenized the
way awk reads it: string literals, regex literals (a `/` where an operand may
start), comments, line continuations and operators. Then a program is not
read-only when it

- calls `system`, or pipes to or from a command (`|`, `|&`);
- redirects print/printf output to a file (`>`, `>>`), except to /dev/stdout
  or /dev/stderr;
- reads another file with `getline < file` (whatever lvalue getline reads into:
  `getline $(1) < file`, `getline $$0 < file`, `getline a[i] < file`);
- changes ARGV, ARGC, ENVIRON or PROCINFO (assigning, incrementing, `split`
  or `sub` into them, passing the arrays to a function, `getline ARGV[1]`,
  `delete`, a for-in target): ARGV decides which files awk opens;
- names gawk's SYMTAB at all: it reaches every variable by name
  (`SYMTAB["ARGV"][1] = ".env"`), so what it changes can't be told;
- uses `@` (gawk's `@include`, `@load`, indirect calls such as `@f()`).

`check_awk(args)` also parses the options of awk, gawk, mawk, nawk and
busybox awk: program files, `--source`, extensions, profile and dump files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hello_tui.tools.shell.parse import Word

AWK_NAMES = frozenset({"awk", "gawk", "mawk", "nawk", "original-awk", "busybox-awk"})
SPECIAL_VARIABLES = frozenset({"ARGV", "ARGC", "ENVIRON", "PROCINFO"})
# mawk writes `print > "-"` to a file named -, so only the devices both awks share.
HARMLESS_OUTPUTS = frozenset({"/dev/stdout", "/dev/stderr"})
ASSIGNMENT_OPERATORS = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "^=", "**="})
_OPERATORS = sorted(
    [
        "**=",
        "&&",
        "||",
        "++",
        "--",
        "+=",
        "-=",
        "*=",
        "/=",
        "%=",
        "^=",
        "==",
        "<=",
        ">=",
        "!=",
        ">>",
        "|&",
        "**",
        "!~",
    ],
    key=len,
    reverse=True,
)
_SINGLE = set("{}()[];,+-*/%^!><|?:~$=")
# After these a `/` divides; anywhere else (after `$` too: `$/re/` is `$` of a match)
# it opens a regular expression. A `)` that closes the condition of if, while or for
# is followed by a statement, so a `/` there opens a regex too.
_OPERAND_END = frozenset({"name", "number", "string", "regex", ")", "]", "getline"})
_CONDITION_KEYWORDS = frozenset({"if", "while", "for"})
_KEYWORDS = frozenset(
    {
        "BEGIN",
        "END",
        "BEGINFILE",
        "ENDFILE",
        "function",
        "func",
        "if",
        "else",
        "while",
        "for",
        "do",
        "break",
        "continue",
        "next",
        "nextfile",
        "exit",
        "return",
        "delete",
        "getline",
        "print",
        "printf",
        "in",
    }
)


class AwkUnsure(Exception):
    """The program text could not be tokenized; nobody can say what it does."""


@dataclass(frozen=True)
class Token:
    kind: str  # name | keyword | number | string | regex | newline | op
    text: str

    @property
    def key(self) -> str:
        """What the checks compare: the operator or keyword itself, else the kind."""
        return self.text if self.kind in ("op", "keyword") else self.kind


def _scan_quoted(text: str, i: int, close: str, bracket: bool) -> int:
    """Index after the closing `close` of a string or regex starting after index i-1."""
    n = len(text)
    in_bracket = False
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if bracket and ch == "[" and not in_bracket:
            in_bracket = True
            i += 1
            if i < n and text[i] == "^":
                i += 1
            if i < n and text[i] == "]":
                i += 1  # a leading ] is a member, not the end
            continue
        if in_bracket:
            if ch == "[" and i + 1 < n and text[i + 1] in ":.=":
                end = text.find(text[i + 1] + "]", i + 2)
                i = end + 2 if end != -1 else i + 1
                continue
            if ch == "]":
                in_bracket = False
            i += 1
            continue
        if ch == close:
            return i + 1
        if ch == "\n" and close == '"':
            raise AwkUnsure("a string runs past the end of its line")
        i += 1
    raise AwkUnsure(f"an unterminated {'regex' if bracket else 'string'}")


def _track_condition(
    tokens: list[Token], ch: str, parens: list[bool], conditions: set[int]
) -> None:
    """Note, before token `ch` is appended, whether a `)` closes an if/while/for condition."""
    if ch == "(":
        parens.append(bool(tokens) and tokens[-1].key in _CONDITION_KEYWORDS)
    elif ch == ")" and parens and parens.pop():
        conditions.add(len(tokens))


def _ends_operand(tokens: list[Token], k: int, conditions: set[int]) -> bool:
    key = tokens[k].key
    if key == ")":
        return k not in conditions
    return key in _OPERAND_END


def _slash_divides(tokens: list[Token], conditions: set[int]) -> bool:
    """Is a `/` after these tokens a division (else it opens a regex)?

    The awks disagree after a postfix `++`/`--` (mawk reads `x++ /re/`, gawk divides)
    and after a bare `length` (mawk reads a regex), so the program is not checked there.
    """
    if not tokens:
        return False
    last = len(tokens) - 1
    key = tokens[last].key
    if key in ("++", "--"):
        if last > 0 and _ends_operand(tokens, last - 1, conditions):
            raise AwkUnsure(f"a / after a postfix {key} is read differently by the awks")
        return False
    if tokens[last].kind == "name" and tokens[last].text == "length":
        raise AwkUnsure("a / after a bare length is read differently by the awks")
    return _ends_operand(tokens, last, conditions)


def tokenize(program: str) -> list[Token]:
    tokens: list[Token] = []
    parens: list[bool] = []  # for each open `(`: does it open an if/while/for condition?
    conditions: set[int] = set()  # indices of the `)` tokens that close such a condition
    i, n = 0, len(program)
    while i < n:
        ch = program[i]
        if ch == "\\" and i + 1 < n and program[i + 1] == "\n":
            i += 2  # a line continuation is blank space
            continue
        if ch == "\\" and program[i + 1 : i + 3] == "\r\n":
            i += 3
            continue
        if ch in " \t\r":
            i += 1
            continue
        if ch == "\n":
            tokens.append(Token("newline", "\n"))
            i += 1
            continue
        if ch == "#":
            end = program.find("\n", i)
            i = n if end == -1 else end
            continue
        if ch == '"':
            end = _scan_quoted(program, i + 1, '"', bracket=False)
            tokens.append(Token("string", program[i:end]))
            i = end
            continue
        if ch == "/" and not _slash_divides(tokens, conditions):
            end = _scan_quoted(program, i + 1, "/", bracket=True)
            tokens.append(Token("regex", program[i:end]))
            i = end
            continue
        match = re.match(r"[A-Za-z_][A-Za-z0-9_]*", program[i:])
        if match:
            word = match.group(0)
            tokens.append(Token("keyword" if word in _KEYWORDS else "name", word))
            i += len(word)
            continue
        match = re.match(
            r"(?:0[xX][0-9A-Fa-f]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)", program[i:]
        )
        if match:
            tokens.append(Token("number", match.group(0)))
            i += len(match.group(0))
            continue
        op = next((o for o in _OPERATORS if program.startswith(o, i)), None)
        if op is not None:
            tokens.append(Token("op", op))
            i += len(op)
            continue
        if ch in _SINGLE or ch == "&":
            _track_condition(tokens, ch, parens, conditions)
            tokens.append(Token("op", ch))
            i += 1
            continue
        if ch == "@":
            tokens.append(Token("op", "@"))
            i += 1
            continue
        raise AwkUnsure(f"unexpected character {ch!r}")
    return tokens


def _string_value(token: Token) -> str:
    return re.sub(r"\\(.)", r"\1", token.text[1:-1], flags=re.DOTALL)


@dataclass
class AwkFindings:
    """What a program does beyond reading its input."""

    problem: str | None = None
    write_targets: list[str] = field(default_factory=list)  # literal `print > "file"` targets
    read_targets: list[str] = field(default_factory=list)  # literal `getline < "file"` files

    def flag(self, reason: str) -> None:
        self.problem = self.problem or reason


def _subscript_end(tokens: list[Token], j: int) -> int:
    """Index after `[ ... ]` starting at j (or j when there is no subscript)."""
    if j >= len(tokens) or tokens[j].key != "[":
        return j
    return _closing_end(tokens, j, "[", "]")


def _group_end(tokens: list[Token], j: int) -> int:
    """Index after the `)` matching the `(` at j."""
    return _closing_end(tokens, j, "(", ")")


def _closing_end(tokens: list[Token], j: int, opening: str, closing: str) -> int:
    """Index after the `closing` token that matches the `opening` one at j."""
    depth = 0
    while j < len(tokens):
        if tokens[j].key == opening:
            depth += 1
        elif tokens[j].key == closing:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return j


def _field_operand_end(tokens: list[Token], j: int) -> int:
    """Index after what `$` applies to, starting at j: `$(e)`, `$$0`, `$NF`, `$-1`, `$++i`."""
    while j < len(tokens) and tokens[j].key in ("$", "-", "+", "!", "++", "--"):
        j += 1
    if j >= len(tokens):
        return j
    if tokens[j].key == "(":
        return _group_end(tokens, j)
    if tokens[j].kind == "name":
        j += 1
        if j < len(tokens) and tokens[j].key == "(":
            return _group_end(tokens, j)  # a function call
        return _subscripts_end(tokens, j)
    return j + 1  # a number or a string


def _subscripts_end(tokens: list[Token], j: int) -> int:
    """Index after `[...]` subscripts starting at j (gawk chains them: `a[1][2]`)."""
    end = _subscript_end(tokens, j)
    while end > j:
        j, end = end, _subscript_end(tokens, end)
    return j


def _lvalue_end(tokens: list[Token], j: int) -> int:
    """Index after the variable getline reads into, starting at j (j when there is none)."""
    if j >= len(tokens):
        return j
    if tokens[j].key == "$":
        j = _field_operand_end(tokens, j + 1)
    elif tokens[j].kind == "name":
        j = _subscripts_end(tokens, j + 1)
    else:
        return j
    if j < len(tokens) and tokens[j].key in ("++", "--"):
        j += 1  # `getline $i++ < file`: the increment belongs to the field's index
    return j


def _enclosing_call(tokens: list[Token], i: int) -> tuple[str | None, int]:
    """(function name, argument index) when token i sits directly in a call's argument list."""
    depth = 0
    commas = 0
    k = i - 1
    while k >= 0:
        key = tokens[k].key
        if key in (")", "]"):
            depth += 1
        elif key in ("(", "["):
            if depth == 0:
                if key == "(" and k > 0 and tokens[k - 1].kind == "name":
                    return tokens[k - 1].text, commas
                return None, commas
            depth -= 1
        elif key == "," and depth == 0:
            commas += 1
        elif key in ("{", "}", ";", "newline") and depth == 0:
            return None, commas
        k -= 1
    return None, commas


def _special_write(tokens: list[Token], i: int) -> bool:
    """Does the use of a special variable at token i change it?"""
    end = _subscript_end(tokens, i + 1)
    subscripted = end > i + 1
    after = tokens[end].key if end < len(tokens) else ""
    before = tokens[i - 1].key if i > 0 else ""
    if after in ASSIGNMENT_OPERATORS or after in ("++", "--"):
        return True
    if before in ("++", "--", "getline", "delete"):
        return True
    if before == "(" and i > 1 and tokens[i - 2].key == "for" and after == "in":
        return True
    function, argument = _enclosing_call(tokens, i)
    if function in ("sub", "gsub") and argument >= 2:
        return True
    # An array passed to a function is passed by reference (split, asort, user code).
    return not subscripted and tokens[i].text != "ARGC" and before != "in" and function is not None


MAX_PROGRAM_CHARS = 50_000


def analyse(program: str) -> AwkFindings:
    found = AwkFindings()
    if len(program) > MAX_PROGRAM_CHARS:
        found.flag(f"the awk program is longer than {MAX_PROGRAM_CHARS} characters to check")
        return found
    try:
        tokens = tokenize(program)
    except AwkUnsure as exc:
        found.flag(f"the awk program could not be checked ({exc})")
        return found
    in_print = False
    depth = 0
    for i, token in enumerate(tokens):
        key = token.key
        if token.kind == "name" and token.text == "system":
            found.flag("awk's system() runs a shell command")
        elif key in ("|", "|&"):
            found.flag("awk pipes output to or from a command")
        elif key == "@":
            found.flag("awk @-directives load code or call functions indirectly")
        elif token.kind == "name" and token.text == "SYMTAB":
            found.flag("gawk's SYMTAB reaches every variable by name, ARGV among them")
        elif token.kind == "name" and token.text in SPECIAL_VARIABLES:
            if _special_write(tokens, i):
                found.flag(f"the awk program changes {token.text}, which decides what awk opens")
        elif key == "getline":
            j = _lvalue_end(tokens, i + 1)
            if j < len(tokens) and tokens[j].key == "<":
                found.flag("awk's getline < file reads another file")
                if j + 1 < len(tokens) and tokens[j + 1].kind == "string":
                    found.read_targets.append(_string_value(tokens[j + 1]))
        if key in ("print", "printf"):
            in_print, depth = True, 0
            continue
        if not in_print:
            continue
        if key in ("(", "["):
            depth += 1
        elif key in (")", "]"):
            depth -= 1
        elif key in (";", "}", "{") or (key == "newline" and _ends_statement(tokens, i)):
            in_print = False
        elif key in (">", ">>") and depth <= 0:
            target = tokens[i + 1] if i + 1 < len(tokens) else None
            literal = target is not None and target.kind == "string"
            value = _string_value(target) if literal and target else None
            if value is not None and _statement_ends_after(tokens, i + 1):
                if value in HARMLESS_OUTPUTS:
                    continue
                found.write_targets.append(value)
            found.flag("awk's print > file writes a file")
    return found


def _ends_statement(tokens: list[Token], i: int) -> bool:
    previous = tokens[i - 1].key if i > 0 else ""
    return previous not in (",", "&&", "||", "{")


def _statement_ends_after(tokens: list[Token], j: int) -> bool:
    following = tokens[j + 1].key if j + 1 < len(tokens) else "newline"
    return following in (";", "}", "newline")


# ---------------------------------------------------------------- command line


@dataclass
class AwkCheck:
    unsafe: str | None
    paths: list[Word]  # files it reads
    write_targets: list[str] = field(default_factory=list)
    read_targets: list[str] = field(default_factory=list)


_VALUE_OPTIONS = {"-F", "-v", "-f", "-e", "-E", "-i", "-l", "-W"}
_LONG_VALUE = {
    "field-separator": "-F",
    "assign": "-v",
    "file": "-f",
    "source": "-e",
    "exec": "-E",
    "include": "-i",
    "load": "-l",
}
_LONG_OPTIONAL_FILE = {"dump-variables", "pretty-print", "profile", "debug"}
_HARMLESS_FLAGS = set("bcCgGhLMnNOPrsStVy")
_HARMLESS_LONG = {
    "characters-as-bytes",
    "traditional",
    "copyright",
    "gen-pot",
    "help",
    "lint",
    "lint-old",
    "bignum",
    "use-lc-numeric",
    "non-decimal-data",
    "optimize",
    "no-optimize",
    "posix",
    "re-interval",
    "sandbox",
    "version",
    "csv",
}
_MAWK_W_HARMLESS = re.compile(
    r"^(version|v|dump|interactive|posix_space|usage|sprintf=\d+|random=\d+)$"
)


def _assigns_special(assignment: str) -> bool:
    name = assignment.split("=", 1)[0]
    return name in SPECIAL_VARIABLES


def check_awk(args: list[Word]) -> AwkCheck:
    """Options, program and operands of one awk command line."""
    programs: list[Word] = []
    reads_program_file = False
    unsafe: str | None = None
    i = 0
    while i < len(args):
        word = args[i]
        text = word.value
        if text == "--":
            i += 1
            break
        if not text.startswith("-") or text == "-":
            break
        i += 1
        if text.startswith("--"):
            name, eq, value = text[2:].partition("=")
            if name in _LONG_VALUE:
                if not eq:
                    value = args[i].value if i < len(args) else ""
                    carrier = args[i] if i < len(args) else word
                    i += 1
                else:
                    carrier = word
                short = _LONG_VALUE[name]
            elif name in _LONG_OPTIONAL_FILE:
                unsafe = unsafe or f"awk --{name} writes a file"
                continue
            elif name in _HARMLESS_LONG:
                continue
            else:
                unsafe = unsafe or f"awk option {text} is not checked"
                continue
        else:
            short = text[:2]
            if short not in _VALUE_OPTIONS:
                letters = text[1:]
                if short in ("-d", "-o", "-p", "-D"):
                    unsafe = unsafe or f"awk {short} writes a file"
                elif not set(letters) <= _HARMLESS_FLAGS:
                    unsafe = unsafe or f"awk option {text} is not checked"
                continue
            value = text[2:]
            carrier = word
            if not value:
                value = args[i].value if i < len(args) else ""
                carrier = args[i] if i < len(args) else word
                i += 1
        if short in ("-f", "-E", "-i"):
            reads_program_file = True
            unsafe = unsafe or "awk reads its program from a file, which is not checked"
        elif short == "-l":
            unsafe = unsafe or "awk -l loads an extension library"
        elif short == "-e":
            programs.append(carrier if carrier.value == value else Word(value, carrier.source))
        elif short == "-v" and _assigns_special(value):
            unsafe = unsafe or f"awk -v {value.split('=', 1)[0]}= changes what awk opens"
        elif short == "-W":
            if value.startswith(("exec", "e ")):
                reads_program_file = True
                unsafe = unsafe or "mawk -W exec reads its program from a file"
            elif not _MAWK_W_HARMLESS.match(value):
                unsafe = unsafe or f"mawk -W {value} is not checked"
    rest = args[i:]
    if not programs and not reads_program_file:
        if not rest:
            return AwkCheck("awk without a program is not checked", [])
        programs.append(rest[0])
        rest = rest[1:]
    found = AwkFindings()
    for program in programs:
        if program.problems:
            unsafe = unsafe or "the awk program could not be checked"
            continue
        result = analyse(program.value)
        unsafe = unsafe or result.problem
        found.write_targets += result.write_targets
        found.read_targets += result.read_targets
    paths: list[Word] = []
    for word in rest:
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word.value):
            if _assigns_special(word.value):
                unsafe = unsafe or f"the operand {word.value} changes what awk opens"
            continue
        paths.append(word)
    return AwkCheck(unsafe, paths, found.write_targets, found.read_targets)
