"""The terminal policy: may a command run at once, must the user approve it, or is it refused?

`classify(command, repo, cwd, context)` parses the command with
tree-sitter-bash and judges every command of every pipeline and list on its
own (and every command nested in `$( )`, backticks, `<( )` or `sh -c`); the
strictest verdict wins:

- run: every part is a known read-only program used read-only, every path
  inside the repo (globs expanded by bash's rules, symbolic links judged by
  where they lead, also those a program follows while walking a tree);
- ask: anything else that stays inside the repo (the user decides),
  reading `.env` files, which hold keys (also under a second name: a hard
  link to one), text bash would evaluate as
  arithmetic that is not integers and known names (`arithmetic.py`: a
  subscript like `a[$(id)]` runs `id` even from single quotes), git
  where the repo's config (or a submodule's) names a program git would run
  (`git_guard.py`), and git whose output may hold an env file
  (`git_secrets.py`);
- refuse: privilege escalation, any path outside the repo (reads too, also
  through `~`, variables or symlinks), writes into `.git/` or the state
  folder, git pointed at another repository (whether a folder is one is
  `core.git_layout`'s rule), programs that need an
  interactive terminal, brace expansions that explode, NUL bytes and absurd
  nesting. Nobody can approve these.

The policy is the first line of defence; the OS sandbox (`sandbox.py`) is
the second. With the sandbox holding, variables expand to the values of the
command's allow-listed environment (`context.variables`); without it a
variable is a refusal, as its value could lead anywhere.

Pure classification: the only I/O is resolving paths (symlinks, globs) and
reading the repo's git config (through `git config --file`, which runs nothing) and
its index (`git ls-files --stage`, cached: tracked env files and submodules).
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import tree_sitter

from hello_tui.core.env_names import env_file_names, is_env_file
from hello_tui.core.git_layout import (
    foreign_repository,
    is_dot_git,
    is_git_content_path,
    is_git_control_path,
    own_git_dirs,
)
from hello_tui.tools.env_files import (
    RepoEnvFiles,
    env_folder_of,
    has_other_names,
)
from hello_tui.tools.shell import globbing
from hello_tui.tools.shell.arithmetic import (
    ARITHMETIC_TEST_OPERATORS,
    VARIABLE_TEST_OPERATORS,
    Lookup,
    expression_problem,
    reference_problem,
)
from hello_tui.tools.shell.folder_listings import listing
from hello_tui.tools.shell.git_guard import (
    GIT_CONFIG_NAMES,
    REPOSITORY_VARIABLE,
    any_config_credentials,
    check_git,
    configured_programs,
    file_credential,
    is_git_variable,
    shown_credential,
)
from hello_tui.tools.shell.git_secrets import exclusion, no_index, shown_env_file
from hello_tui.tools.shell.ignore_files import whitelisted_above, whitelists
from hello_tui.tools.shell.parse import (
    RANK,
    REDIRECT_NODES,
    RUNTIME_VALUE,
    STRUCTURE_NODES,
    SUBSTITUTION_NODES,
    Action,
    Variables,
    Word,
    brace_count,
    brace_depth,
    brace_expand,
    concatenated,
    depth,
    join_continuations,
    misread_text,
    parse,
    text_of,
    word_of,
)
from hello_tui.tools.shell.programs import ProgramCheck, check_read_only, pager_files

PRIVILEGED = frozenset({"sudo", "su", "doas", "pkexec", "runas"})
INTERACTIVE = frozenset(
    [
        "vim",
        "vi",
        "nvim",
        "view",
        "vimdiff",
        "nano",
        "emacs",
        "pico",
        "micro",
        "joe",
        "top",
        "htop",
        "btop",
        "atop",
        "ssh",
        "telnet",
        "ftp",
        "sftp",
        "mosh",
        "tmux",
        "screen",
        "watch",
        "mc",
    ]
)
PAGERS = frozenset({"less", "more", "most"})
# Builtins that set variables, options, aliases or how names and folders resolve.
SHELL_STATE_BUILTINS = {
    "read": "read sets shell variables",
    "declare": "declare sets shell variables",
    "typeset": "typeset sets shell variables",
    "export": "export sets environment variables",
    "local": "local sets shell variables",
    "readonly": "readonly sets shell variables",
    "let": "let sets shell variables",
    "mapfile": "mapfile sets shell variables",
    "readarray": "readarray sets shell variables",
    "getopts": "getopts sets shell variables",
    "unset": "unset removes shell variables",
    "set": "set changes shell options or parameters",
    "shopt": "shopt changes how bash expands words",
    "alias": "alias changes what a command name runs",
    "unalias": "unalias changes what a command name runs",
    "hash": "hash changes which program a name runs",
    "enable": "enable loads or switches builtins",
    "trap": "trap runs code on signals",
    "source": "source runs a script",
    ".": ". runs a script",
    "pushd": "pushd changes directory",
    "popd": "popd changes directory",
    "ulimit": "ulimit changes resource limits",
    "umask": "umask changes file permissions",
}
# Wrappers run their argument as a command; value: short options that take a value.
WRAPPERS: dict[str, str] = {
    "xargs": "adEILnPs",
    "env": "uSC",
    "nice": "n",
    "timeout": "sk",
    "nohup": "",
    "command": "",
    "exec": "a",
    "builtin": "",
    "time": "fo",
    "stdbuf": "ioe",
    "ionice": "cnp",
    "setsid": "",
    "chrt": "",
    "taskset": "",
    "strace": "eopsu",
    "ltrace": "eopsu",
    "unbuffer": "",
    "flock": "w",
    "chroot": "",
}
_WRAPPER_POSITIONAL_BEFORE_COMMAND = {"timeout": 1, "chrt": 1, "taskset": 1, "flock": 1}
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "ash"})
INTERPRETER = re.compile(
    r"^(python[0-9.]*|pypy[0-9.]*|node|nodejs|perl|ruby|php|lua|deno|bun|Rscript|pwsh|"
    r"osascript|tclsh|java|jshell|irb)$"
)
# Programs whose options make them follow symbolic links while copying or walking.
_LINK_FOLLOWING = {
    "cp": {"-L", "--dereference", "-H"},
    "tar": {"-h", "--dereference"},
    "rsync": {"-L", "--copy-links", "-k", "--copy-dirlinks"},
    "chmod": {"-L"},
    "chown": {"-L"},
    "chgrp": {"-L"},
}
# Why reading inside `.git/` asks: the object store is every file git was given, env files
# among them (compressed, which does not hide them), not only what the history shows.
GIT_FOLDER_READ = (
    "git's folder, whose objects hold every committed or staged file (env files among them)"
)
HOLDS = "holds a credential (a token in a remote's URL, an auth header)"
GIT_FOLDER_TEXT = "its objects (env files among them) or a credential in its config"
HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"})
# The devices that reopen a descriptor's file: harmless only while that is no file.
_STD_DEVICES = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_MAX_NESTING = 4
MAX_COMMAND_CHARS = 100_000
MAX_SYNTAX_DEPTH = 200
MAX_BRACE_DEPTH = 64
# bash builds every word of a brace expansion in memory: `{1..99}` four times is 96 million.
MAX_BRACE_WORDS = 10_000
# How much of a tree a link-following or recursive reader is walked to judge it.
MAX_WALK_ENTRIES = 20_000
# How many names a walk that only looks for env files (`rg`, `grep -r`) matches: listings
# are cached, so this is a bound on one cold walk (about 0.2 s), not on every command.
# Past it the command asks: what was not looked at may hold an env file it would read.
MAX_NAME_WALK_ENTRIES = 200_000
FILE_TESTS = frozenset(
    ["-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-p", "-r", "-s", "-t", "-u"]
    + ["-w", "-x", "-G", "-L", "-N", "-O", "-S"]
)
FILE_COMPARISONS = frozenset({"-nt", "-ot", "-ef"})
_TEST_OPERATOR_NODES = frozenset({"test_operator", "-nt", "-ot", "-ef"})
_TEST_WORD_NODES = frozenset({"expansion", "simple_expansion", "string", "concatenation"})
_RUNS_IN_TEXT = re.compile(r"\$[({\[]|`")


@dataclass(frozen=True)
class PartVerdict:
    """The verdict on one part of the command (a command, a redirection, a construct)."""

    text: str
    action: Action
    reason: str


@dataclass
class PolicyVerdict:
    action: Action
    reason: str
    parts: list[PartVerdict]
    # A single simple command with nothing for a shell to expand: run it without one.
    argv: list[str] | None = None
    # `cd DIR` as the first part (or the whole command): the session's next cwd.
    cd_target: Path | None = None
    cd_only: bool = False
    # `less FILE` alone: what runs instead (there is no terminal to page on).
    display_as: str | None = None


@dataclass(frozen=True)
class PolicyContext:
    """What the policy knows besides the command: the environment and the protected places."""

    # The command's environment when the OS sandbox holds; None: variables are refused.
    environment: dict[str, str] | None = None
    private_dir: Path | None = None  # the command's own HOME and TMPDIR: free to use
    state_dir: Path | None = None  # hello-tui's state folder: never written by commands


def strictest(actions: list[Action]) -> Action:
    return max(actions, key=lambda a: RANK[a], default="run")


def _pre_refusal(command: str) -> str | None:
    if not command.strip():
        return "the command is empty"
    if "\x00" in command:
        return "the command contains a NUL byte"
    if len(command) > MAX_COMMAND_CHARS:
        return f"the command is longer than {MAX_COMMAND_CHARS} characters"
    if brace_depth(command) > MAX_BRACE_DEPTH:
        return f"braces nest more than {MAX_BRACE_DEPTH} levels deep"
    return None


def classify(
    command: str, repo: Path, cwd: Path, context: PolicyContext | None = None
) -> PolicyVerdict:
    """Judge `command` as run from `cwd` inside `repo`."""
    repo = repo.resolve()
    cwd = cwd.resolve()
    context = context or PolicyContext()
    command = join_continuations(command)
    refusal = _pre_refusal(command)
    if refusal:
        return PolicyVerdict("refuse", refusal, [PartVerdict(command[:200], "refuse", refusal)])
    root = parse(command)
    if depth(root) > MAX_SYNTAX_DEPTH:
        reason = f"the command nests more than {MAX_SYNTAX_DEPTH} levels deep"
        return PolicyVerdict("refuse", reason, [PartVerdict(command[:200], "refuse", reason)])
    variables = None
    if context.environment is not None:
        assigned = assigned_names(command)
        # Then $PWD is not the starting folder: `cd`, also quoted or escaped (`c\d`, `c''d`).
        moves = assigned & {"cd", "pushd", "popd"} or _MOVES.search(_QUOTING.sub("", command))
        variables = Variables(
            values=context.environment, assigned=assigned, cwd="" if moves else str(cwd)
        )
    judge = _Judge(repo, [cwd], depth=0, context=context, variables=variables)
    judge.program(root)
    misread = misread_text(root, command)
    if misread is not None:
        judge.add(command[:200], "ask", misread)
    parts = judge.parts or [PartVerdict(command, "run", "nothing to run")]
    action = strictest([p.action for p in parts])
    reasons = list(dict.fromkeys(p.reason for p in parts if p.action == action))
    reason = "read-only, inside the repo" if action == "run" else "; ".join(reasons)
    verdict = PolicyVerdict(action, reason, parts)
    if not root.has_error:
        verdict.argv = _simple_argv(root, variables)
        if verdict.argv and verdict.argv[0] in PAGERS and action == "run":
            # The files the pager would show, as it reads its options: those were judged.
            words = [Word(value=a, source=a) for a in verdict.argv[1:]]
            files = [w.value for w in pager_files(verdict.argv[0], words, judged=False)]
            verdict.argv = ["cat", "--", *files]
            verdict.display_as = "cat " + " ".join(files)
        cd_node, cd_only = _leading_cd(root)
        if cd_node is not None and action != "refuse":
            verdict.cd_target = _cd_destination(cd_node, cwd, variables)
            verdict.cd_only = cd_only
    return verdict


_MOVES = re.compile(r"(?<![A-Za-z0-9_])(?:cd|pushd|popd)(?![A-Za-z0-9_])")
_QUOTING = re.compile(r"[\\'\"]")
_ASSIGNMENT = re.compile(r"(?<![\w$])([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=")
# ${X:=value} sets X, and ${X[0]:=value} its element (`$X` is element 0).
_DEFAULT_ASSIGNMENT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:\[.*?\])?:?=")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def assigned_names(command: str) -> frozenset[str]:
    """Names the command may set itself: `X=`, and every name it mentions as a plain word.

    Over-approximated on purpose: `read X`, `printf -v X`, `for X in`,
    `declare X` all mention X outside a `$X`, so any such name is treated as
    unknown rather than as its environment value.
    """
    names = {m.group(1) for m in _ASSIGNMENT.finditer(command)}
    names |= {m.group(1) for m in _DEFAULT_ASSIGNMENT.finditer(command)}
    for match in _NAME.finditer(command):
        start = match.start()
        before = command[start - 1] if start else ""
        before2 = command[max(0, start - 2) : start]
        if before == "$" or before2 == "${" or before2 == "{#":
            continue
        names.add(match.group(0))
    return frozenset(names)


class _Judge:
    def __init__(
        self,
        repo: Path,
        cwds: list[Path],
        depth: int,
        context: PolicyContext,
        variables: Variables | None,
    ) -> None:
        self.repo = repo
        self.cwds = cwds
        # The folders as bash's $PWD names them: `cd l/..` goes up from the link's name.
        self.pwds = [os.fspath(c) for c in cwds]
        self.depth = depth
        self.context = context
        self.variables = variables
        self.parts: list[PartVerdict] = []
        # What files the redirections of the statements being judged put on descriptors
        # 0, 1 and 2 (`< b.txt`): writing /dev/stdin then writes b.txt.
        self.std_redirects: list[list[tree_sitter.Node]] = []
        self.env = RepoEnvFiles(repo)  # the repo is walked for hard links once, if at all

    def linked_env(self) -> Callable[[str], bool] | None:
        """The test for a hard link to one of the repo's env files (None: the repo has no
        env file with a second name, so a walk needs no stat per file)."""
        return self.env.walk_check()

    def add(self, text: str, action: Action, reason: str) -> None:
        self.parts.append(PartVerdict(text.strip(), action, reason))

    def word(self, node: tree_sitter.Node) -> Word:
        return word_of(node, self.variables)

    # ------------------------------------------------------------ structure

    def program(self, root: tree_sitter.Node) -> None:
        if root.has_error:
            self.add(text_of(root), "ask", "the command does not parse cleanly as shell")
            self.scan_unparsed(text_of(root))
        self.node(root, piped_input=False)

    def scan_unparsed(self, text: str) -> None:
        """What could not be parsed may still name paths (`{cat,/etc/passwd}`, `1<> .git/x`):
        any that leave the repo or reach `.git/` are refused, whatever their role would be."""
        tokens = re.split(r"[\s{},;|&<>()'\"=`$]+", text)
        words = [Word(value=t, source=t, tilde=t.startswith("~")) for t in tokens if t]
        verdict = self.paths(words, write=True)
        if verdict is not None and verdict[0] == "refuse":
            self.add(text, *verdict)

    def node(self, node: tree_sitter.Node, piped_input: bool, extra: list | None = None) -> None:
        """Judge `node`. `extra` are the words tree-sitter put in a redirection after it
        (`a && cat 2>/dev/null .env` holds `.env` as a second target of `2>`): bash gives
        them to the last simple command, so they travel down to it, as arguments."""
        kind = node.type
        if kind in ("program", "list"):
            children = node.named_children
            last = _last_statement(children)
            for child in children:
                self.node(child, piped_input=False, extra=extra if child is last else None)
        elif kind == "pipeline":
            children = node.named_children
            last = _last_statement(children)
            for index, child in enumerate(children):
                self.node(child, index > 0, extra if child is last else None)
        elif kind == "redirected_statement":
            body = node.child_by_field_name("body")
            extra_words: list[tree_sitter.Node] = []
            redirects = [c for c in node.named_children if c.type in REDIRECT_NODES]
            own = [c for c in body.named_children if c.type in REDIRECT_NODES] if body else []
            self.std_redirects.append(redirects + own)
            try:
                for child in redirects:
                    extra_words.extend(self.redirect(child))
                if body is not None:
                    self.node(body, piped_input, extra_words + (extra or []))
            finally:
                self.std_redirects.pop()
        elif kind == "command":
            self.command(node, piped_input, extra or [])
        elif kind == "comment":
            return
        elif kind in SUBSTITUTION_NODES:
            self.substitution(node)
        elif kind == "variable_assignment":
            self.assignment(node)
            self.nested(node)
        elif kind == "declaration_command":
            self.declaration(node)
            self.nested(node)
        elif kind == "test_command":
            self.test_command(node)
        else:
            if kind != "ERROR":  # a parse error is already reported for the whole command
                self.add(text_of(node), "ask", f"uses shell syntax ({kind}) that is not checked")
            self.nested(node)
            for word in extra or []:  # `! cat a.txt 2>/dev/null ../x`: still named, and judged
                self.scan_unparsed(text_of(word))
        if extra and kind in ("test_command", "variable_assignment", "declaration_command"):
            self.add(text_of(node), "ask", "words after a redirection are not checked here")

    def nested(self, node: tree_sitter.Node) -> None:
        """Judge every command, redirection and substitution somewhere below `node`."""
        for child in node.named_children:
            if child.type in STRUCTURE_NODES or child.type in SUBSTITUTION_NODES:
                self.node(child, piped_input=False)
            elif child.type in REDIRECT_NODES:
                self.redirect(child)
            elif child.type == "variable_assignment":
                self.assignment(child)
                self.nested(child)
            else:
                self.nested(child)
            self.words_in(child)

    def words_in(self, node: tree_sitter.Node) -> None:
        """Brace expansions anywhere make bash build every word first: cap them."""
        if node.type in ("word", "concatenation", "brace_expression"):
            word = self.word(node)
            if word.brace:
                self.brace_limit(word, text_of(node))

    def brace_limit(self, word: Word, text: str) -> bool:
        count = brace_count(word.value, MAX_BRACE_WORDS)
        if count > MAX_BRACE_WORDS:
            self.add(
                text,
                "refuse",
                f"{word.source[:60]} expands to more than {MAX_BRACE_WORDS} words",
            )
            return False
        return True

    def assignment(self, node: tree_sitter.Node) -> None:
        name_node = node.child_by_field_name("name")
        name = text_of(name_node) if name_node is not None else text_of(node).split("=", 1)[0]
        if is_git_variable(name):
            self.add(text_of(node), "refuse", f"{name}= {REPOSITORY_VARIABLE}")
        else:
            self.add(text_of(node), "ask", "sets a shell variable")

    def declaration(self, node: tree_sitter.Node) -> None:
        keyword = node.children[0].type if node.children else "declare"
        self.add(text_of(node), "ask", SHELL_STATE_BUILTINS.get(keyword, "sets shell variables"))
        for child in node.named_children:
            if child.type == "variable_name" and is_git_variable(text_of(child)):
                self.add(text_of(node), "refuse", f"{text_of(child)} {REPOSITORY_VARIABLE}")

    def test_command(self, node: tree_sitter.Node) -> None:
        """`[ -d src ]`, `[[ -f x && $a == b ]]`: only the files it tests are paths, and
        what it compares as numbers or names as variables is arithmetic (`arithmetic`)."""
        self.nested(node)
        files: list[Word] = []
        text = text_of(node)
        stack = [node]
        while stack:
            current = stack.pop()
            stack.extend(current.named_children)
            operators = [c for c in current.children if c.type in _TEST_OPERATOR_NODES]
            operands = [c for c in current.named_children if c.type not in _TEST_OPERATOR_NODES]
            operator = text_of(operators[0]) if operators else ""
            if current.type == "unary_expression" and operands and operator in FILE_TESTS:
                files.append(self.word(operands[-1]))
            elif current.type == "binary_expression" and operator in FILE_COMPARISONS:
                files.extend(self.word(o) for o in operands)
            elif operator in ARITHMETIC_TEST_OPERATORS and current.type == "binary_expression":
                for operand in operands:
                    self.arithmetic_operand(self.word(operand), text)
            elif (
                operator in VARIABLE_TEST_OPERATORS
                and current.type == "unary_expression"
                and operands
            ):
                self.variable_operand(self.word(operands[-1]), text)
        for word in files + self.test_words(node):
            for action, reason in word.problems:
                if not reason.startswith("runs a nested command"):
                    self.add(text, action, reason)
        verdict = self.paths(files, write=False)
        if verdict is not None:
            self.add(text, *verdict)
        else:
            self.add(text, "run", "a test only looks at files")

    def test_words(self, node: tree_sitter.Node) -> list[Word]:
        """Every word a `[[ ]]` expands, compared ones too (`[[ $a == ${PWD#$(cmd)} ]]`):
        what bash runs in them (`word.problems`) is no file test's alone."""
        found: list[Word] = []
        stack = list(node.named_children)
        while stack:
            current = stack.pop()
            if current.type in _TEST_WORD_NODES:
                found.append(self.word(current))
            elif current.type == "regex" and _RUNS_IN_TEXT.search(
                re.sub(r"\\.", "", text_of(current), flags=re.DOTALL)
            ):
                # `[[ $a =~ (`cmd`) ]]`: bash expands the regex, tree-sitter sees text.
                why = f"the regex {text_of(current)[:40]} runs a command written in it"
                found.append(Word(text_of(current), text_of(current), problems=[("ask", why)]))
            else:
                stack.extend(current.named_children)
        return found

    def test_builtin(self, args: list[Word], text: str) -> None:
        """`test` and `[` as commands: their numeric and variable operands, as in `[[ ]]`."""
        values = [w.value for w in args]
        for index, value in enumerate(values):
            if value in ARITHMETIC_TEST_OPERATORS:
                for near in (index - 1, index + 1):
                    if 0 <= near < len(args):
                        self.arithmetic_operand(args[near], text)
            elif value in VARIABLE_TEST_OPERATORS and index + 1 < len(args):
                self.variable_operand(args[index + 1], text)

    def _lookup(self) -> Lookup | None:
        return self.variables.lookup if self.variables is not None else None

    def arithmetic_operand(self, word: Word, text: str) -> None:
        runtime = all(reason == RUNTIME_VALUE for _, reason in word.uncertain)
        if word.uncertain and runtime and not word.problems:
            return  # `[ $? -eq 0 ]`: a number, whatever it is
        if word.problems or word.uncertain:
            self.add(
                text,
                "ask",
                f"{word.source} is compared as a number, which bash evaluates "
                "as arithmetic, and its value can't be known before running",
            )
            return
        problem = expression_problem(word.value, self._lookup())
        if problem:
            self.add(text, "ask", problem)

    def variable_operand(self, word: Word, text: str) -> None:
        if word.problems or word.uncertain:
            self.add(
                text, "ask", f"{word.source} names a variable that can't be known before running"
            )
            return
        problem = reference_problem(word.value, self._lookup())
        if problem:
            self.add(text, "ask", problem)

    def descriptor_variable(self, redirect: tree_sitter.Node, text: str) -> None:
        """`{name}>file` stores the descriptor in `name`; an array element's subscript is
        evaluated as arithmetic (`{a[$(id)]}>f` runs id)."""
        before = redirect.prev_sibling
        while before is not None and before.type == "command" and before.named_children:
            before = before.named_children[-1]
        if before is None or before.end_byte != redirect.start_byte:
            return
        match = re.fullmatch(r"\{(.+)\}", text_of(before), re.DOTALL)
        if match is None or match.group(1).isdigit():
            return
        problem = reference_problem(match.group(1), self._lookup())
        if problem:
            self.add(
                text,
                "ask",
                f"the redirection stores its descriptor in {match.group(0)}: " + problem,
            )

    def substitution(self, node: tree_sitter.Node) -> None:
        opener = "<( )" if node.type == "process_substitution" else "$( ) or backticks"
        self.add(text_of(node), "ask", f"runs a nested command ({opener})")
        for child in node.named_children:
            self.node(child, piped_input=False)

    # ------------------------------------------------------------ redirects

    def descriptor_files(self, redirects: list[tree_sitter.Node]) -> dict[int, list[Word]]:
        """The files these redirections may put on descriptors 0, 1 and 2, read or written
        (`< b.txt`, `2<b.txt`, `1<>f`), directly or as a copy of another descriptor
        (`2>&1`, `> /dev/stderr`). Their order is not followed: any of them may come first.
        Linux reopens the file a descriptor holds when /dev/stdin, /dev/stdout or
        /dev/stderr is opened (`cat a.txt < b.txt > /dev/stdin` truncates b.txt)."""
        files: dict[int, list[Word]] = {}
        copies: list[tuple[int, int]] = []
        for node in redirects:
            if node.type != "file_redirect":
                continue  # here-documents and here-strings: bash's own temporary input
            operator = next((c.type for c in node.children if not c.is_named), "")
            number = next((c for c in node.named_children if c.type == "file_descriptor"), None)
            targets = [c for c in node.named_children if c.type != "file_descriptor"]
            if not targets:
                continue
            word = self.word(targets[0])
            duplicate = operator in (">&", "<&") and (
                _descriptor_number(targets[0]) or word.value == "-"
            )
            if number is not None:
                if not text_of(number).isdigit():
                    continue  # `{name}>f`: bash picks a descriptor above 9
                fds = [int(text_of(number))]
            elif operator in ("&>", "&>>") or (operator == ">&" and not duplicate):
                fds = [1, 2]
            else:
                fds = [0] if operator.startswith("<") else [1]
            if duplicate:
                if targets[0].type == "number" and word.value.isdigit():
                    copies += [(fd, int(word.value)) for fd in fds]
                continue
            std = _STD_DEVICES.get(word.value)
            if std is not None:
                copies += [(fd, std) for fd in fds]
                continue
            if word.value == "/dev/null":
                continue
            for fd in fds:
                files.setdefault(fd, []).append(word)
        changed = True
        while changed:
            changed = False
            for target, source in copies:
                for word in files.get(source, []):
                    if all(word is not w for w in files.get(target, [])):
                        files.setdefault(target, []).append(word)
                        changed = True
        return files

    def through_descriptor(self, device: str, text: str, what: str) -> None:
        """A write to /dev/stdin, /dev/stdout or /dev/stderr is a write to the files the
        command's redirections put on that descriptor."""
        fd = _STD_DEVICES.get(device)
        if fd is None or not self.std_redirects:
            return
        for target in self.descriptor_files(self.std_redirects[-1]).get(fd, []):
            self.write_target(target, text, f"{what} {device}, which is")

    def redirect(self, node: tree_sitter.Node) -> list[tree_sitter.Node]:
        """Judge one redirection; returns words tree-sitter put in it that belong to the command."""
        text = text_of(node)
        self.nested(node)
        self.descriptor_variable(node, text)
        if node.type == "heredoc_redirect":
            self.add(text.split("\n", 1)[0], "ask", "here-documents are not checked")
            return []
        if node.type == "herestring_redirect":
            # Its word is expanded as an argument is: what bash runs in it counts.
            for child in node.named_children:
                for action, reason in self.word(child).problems:
                    if not reason.startswith("runs a nested command"):
                        self.add(text, action, reason)
            return []
        operator = next((c.type for c in node.children if not c.is_named), "")
        targets = [c for c in node.named_children if c.type != "file_descriptor"]
        if not targets:
            self.add(text, "ask", "the redirection is not checked")
            return []
        target, extra = targets[0], targets[1:]
        word = self.word(target)
        if operator in (">&", "<&") and (_descriptor_number(target) or word.value == "-"):
            return extra  # duplicating or closing a descriptor touches no file
        writes = operator not in ("<",)
        if word.problems or word.uncertain:
            for action, reason in word.problems + word.uncertain:
                self.add(text, action, reason)
            return extra
        if writes and word.value in HARMLESS_DEVICES:
            self.through_descriptor(word.value, text, "writes to")
            return extra
        verdict = self.paths([word], write=writes)
        if verdict is not None:
            self.add(text, *verdict)
        elif writes and self._private(word.value):
            self.add(text, "run", "writes into the command's private folder")
        elif writes:
            self.add(text, "ask", f"writes to {word.value}")
        else:
            secret = self.env_files([word])
            if secret:
                self.add(text, "ask", secret)
            else:
                self.add(text, "run", "reads a file inside the repo")
        return extra

    # ------------------------------------------------------------ commands

    def command(self, node: tree_sitter.Node, piped_input: bool, extra: list) -> None:
        own = [c for c in node.named_children if c.type in REDIRECT_NODES]
        outer = self.std_redirects[-1] if self.std_redirects else []
        self.std_redirects.append(outer + [c for c in own if all(c != o for o in outer)])
        try:
            self.simple_command(node, piped_input, extra)
        finally:
            self.std_redirects.pop()

    def simple_command(self, node: tree_sitter.Node, piped_input: bool, extra: list) -> None:
        text = text_of(node)
        word_nodes: list[tree_sitter.Node] = []
        assignments: list[tree_sitter.Node] = []
        for child in node.named_children:
            if child.type == "command_name":
                word_nodes.append(child.named_children[0] if child.named_children else child)
            elif child.type == "variable_assignment":
                assignments.append(child)
                self.nested(child)
            elif child.type in REDIRECT_NODES:
                extra = extra + self.redirect(child)
            else:
                word_nodes.append(child)
        word_nodes.extend(extra)
        for child in word_nodes:
            if child.type in SUBSTITUTION_NODES:
                self.substitution(child)
            else:
                self.nested(child)
            self.words_in(child)
        for assignment in assignments:
            name_node = assignment.child_by_field_name("name")
            name = text_of(name_node) if name_node is not None else ""
            if is_git_variable(name):
                self.add(text, "refuse", f"{name}= {REPOSITORY_VARIABLE}")
        if assignments:
            self.add(text, "ask", "sets environment variables for the command")
        if word_nodes:
            self.argv(self.touching_joined(word_nodes), text, piped_input)

    def touching_joined(self, nodes: list[tree_sitter.Node]) -> list[Word]:
        """The words of a command; pieces with nothing between them are one word to bash,
        whatever tree-sitter made of them (it splits `.e[\\n]v` at the bracket)."""
        groups: list[list[tree_sitter.Node]] = []
        for node in nodes:
            if groups and groups[-1][-1].end_byte == node.start_byte:
                groups[-1].append(node)
            else:
                groups.append([node])
        words = []
        for group in groups:
            if len(group) == 1:
                words.append(self.word(group[0]))
            else:
                source = "".join(text_of(n) for n in group)
                words.append(concatenated([self.word(n) for n in group], source))
        return words

    def argv(self, words: list[Word], text: str, piped_input: bool) -> None:
        for word in words:
            for action, reason in word.problems:
                if not reason.startswith("runs a nested command"):  # judged on its own
                    self.add(text, action, reason)
        name_word, args = words[0], words[1:]
        if name_word.problems or name_word.uncertain or name_word.glob or name_word.brace:
            self.add(text, "ask", "the program name is not a plain word")
            self.generic_paths(words, text)  # `{cat,/etc/passwd}` expands to a path
            return
        name = name_word.value
        if "/" in name or name_word.tilde:
            self.program_path(name_word, args, text)
            return
        expanded = self.expanded_args(args, text)
        if expanded is None:
            return
        args = expanded
        if name in PRIVILEGED:
            self.add(text, "refuse", f"{name} runs commands with other privileges")
            return
        if name in PAGERS and piped_input and not pager_files(name, args):
            # Only its files are what it shows (`less -- -x` shows -x), and its options
            # are still its options (`less -o log`).
            pager = check_read_only(name, args)
            if pager is not None and pager.unsafe is None and not pager.paths:
                self.add(text, "run", f"{name} reading a pipe only copies it")
                return
        if name in INTERACTIVE:
            self.add(
                text, "refuse", f"{name} needs an interactive terminal, which is not available"
            )
            return
        if name == "cd":
            self.cd(args, text)
            return
        if name == "command" and args and args[0].value in ("-v", "-V"):
            self.add(text, "run", "command -v only looks a name up")
            return
        if name == "env" and not args:
            self.add(text, "run", "env without a command prints the environment")
            return
        if name in WRAPPERS:
            self.wrapper(name, args, text, piped_input)
            return
        if name in SHELLS or name == "eval":
            self.shell(name, args, text)
            return
        if name in SHELL_STATE_BUILTINS:
            self.add(text, "ask", SHELL_STATE_BUILTINS[name])
            self.git_variables(args, text)
            self.generic_paths(args, text)
            return
        if name == "git":
            self.git(args, text)
            return
        if name in ("test", "["):
            self.test_builtin(args, text)
        check = check_read_only(name, args)
        if check is None:
            reason = (
                f"{name} runs code (an interpreter)"
                if INTERPRETER.match(name)
                else f"{name} is not a known read-only program"
            )
            self.add(text, "ask", reason)
            self.generic_paths(args, text)
            self.link_following(name, args, text)
            return
        if name == "printf":
            self.git_variables(args, text)
        self.judge_check(name, args, check, text)

    def git_variables(self, args: list[Word], text: str) -> None:
        """`read GIT_DIR`, `printf -v GIT_WORK_TREE ...`, `export GIT_DIR=x`: refused."""
        for word in args:
            name = word.value.split("=", 1)[0].lstrip("-")
            if is_git_variable(name):
                self.add(text, "refuse", f"{name} {REPOSITORY_VARIABLE}")

    def judge_check(self, name: str, args: list[Word], check: ProgramCheck, text: str) -> None:
        if not check.prints_only:
            for word in args:
                for action, reason in word.uncertain:
                    if reason == RUNTIME_VALUE and not check.shows_contents:
                        continue  # `test $? -eq 0`, `ls x$!`: a name's metadata at most
                    self.add(text, action, reason)
        # Unquoted globs anywhere become file names (`grep /etc/* x`): check those too.
        candidates = list(check.paths)
        if not check.prints_only:
            candidates += [
                w for w in args if (w.glob or w.brace or w.tilde) and w not in check.paths
            ]
        # An unsafe use may change the files it names (`sed -i`): `.git/` counts as written.
        verdict = self.paths(candidates, write=check.unsafe is not None)
        if verdict is not None:
            self.add(text, *verdict)
            return
        for target in check.writes:
            self.write_target(target, text, f"{name} writes")
        if check.follow != "args" or check.recursive_read:
            walked = self.walk(candidates, check)
            if walked is not None:
                self.add(text, *walked)
        secret = self.env_files(candidates) if check.shows_contents else None
        if secret:
            self.add(text, "ask", secret)
        if check.unsafe:
            self.add(text, "ask", check.unsafe)
        elif not check.writes:
            self.add(text, "run", f"{name} is read-only")

    def write_target(self, target: Word, text: str, what: str) -> None:
        if target.problems or target.uncertain:
            for action, reason in target.problems + target.uncertain:
                self.add(text, action, reason)
            return
        if target.value in HARMLESS_DEVICES:
            self.through_descriptor(target.value, text, what)
            return
        verdict = self.paths([target], write=True)
        if verdict is not None:
            self.add(text, *verdict)
        elif self._private(target.value):
            self.add(text, "run", f"{what} into the command's private folder")
        else:
            self.add(text, "ask", f"{what} {target.value}")

    def git(self, args: list[Word], text: str) -> None:
        found = check_git(args)
        if found.refusal:
            self.add(text, "refuse", found.refusal)
            return
        cwds = self.git_cwds(found.chdirs, text)
        if cwds is None:
            return
        for cwd in cwds:
            foreign = foreign_repository(cwd, self.repo)
            if foreign is not None:
                where = _display(foreign, self.repo)
                self.add(
                    text,
                    "refuse",
                    f"git would use the repository in {where}, not the repo's own .git; "
                    "its config could run programs",
                )
                return
        programs = configured_programs(self.repo)
        if programs:
            self.add(text, "ask", programs)
        credential = shown_credential([w.value for w in args], self.repo)
        if credential:
            self.add(text, "ask", f"prints the repository's git config, whose {credential} {HOLDS}")
        outer, self.cwds = self.cwds, cwds
        try:
            verdict = self.paths(found.paths, write=False)
            if verdict is not None:
                self.add(text, *verdict)
                return
            # `git show HEAD:.env`, `git diff -- .env`: the file's contents, from the history too.
            # An exclusion (`':!.env'`) leaves the file out instead.
            named = [w.value.rsplit(":", 1)[-1] for w in found.paths if not exclusion(w.value)[0]]
            secret = next((n for n in named if is_env_file(n)), None)
            if secret:
                self.add(text, "ask", f"shows {secret}, which may hold keys")
            # What git reads from disk (`blame --contents F`, `diff --no-index A B`,
            # `--ignore-revs-file F`) is judged as `cat F` is: a link to an env file, a git
            # config holding a credential.
            on_disk = self.env_files(found.paths)
            if on_disk:
                self.add(text, "ask", on_disk)
            # `git diff --no-index -a a.txt .git/objects/..` prints an object's raw bytes, and
            # a folder of `.git` compared (`--no-index --binary .git x`) every object in it.
            stored = next(
                (
                    n
                    for n in named
                    for c in cwds
                    if self._in_git_folder(c / n, not (c / n).is_dir())
                ),
                None,
            )
            if stored:
                self.add(text, "ask", f"reads {stored} in {GIT_FOLDER_READ}")
            self.no_index_walk(args, found.paths, text)
            self.git_env_files([w.value for w in args], text)
            for target in found.writes:
                self.write_target(target, text, "git writes")
        finally:
            self.cwds = outer
        if found.unsafe:
            self.add(text, "ask", found.unsafe)
        elif not found.writes:
            self.add(text, "run", "git is read-only here")

    def no_index_walk(self, args: list[Word], paths: list[Word], text: str) -> None:
        """`git diff --no-index A B` with folders compares every file below them, dotfiles and
        `.git` included, as `diff -r` does (links are compared as links, not followed). git
        compares files on disk unasked too when a path it is given lies outside the work tree
        (`git diff "$TMPDIR" .`, `git diff /dev/null .`) or it finds no repository: a folder
        git does not track, or a `.git` it rejects (no HEAD, a HEAD or format version it
        does not know), which only git can tell; so two paths on disk are always walked."""
        values = [w.value for w in args]
        if "diff" not in values:
            return
        on_disk = len(paths) == 2 and all(self._exists(w) for w in paths)
        implicit = on_disk or self._outside_work_tree(paths)
        if not implicit and not any(no_index(v) for v in values):
            return
        text_mode = any(v in ("-a", "--text", "--binary") for v in values)
        check = ProgramCheck(None, paths, recursive_read=True, binary_as_text=text_mode)
        walked = self.walk(paths, check)
        if walked is not None:
            self.add(text, *walked)

    def _outside_work_tree(self, paths: list[Word]) -> bool:
        top = os.path.realpath(self.repo)
        return any(
            not Path(os.path.realpath(cwd / word.value)).is_relative_to(top)
            for word in paths
            for cwd in self.cwds
        )

    def _exists(self, word: Word) -> bool:
        return any(os.path.lexists(cwd / word.value) for cwd in self.cwds)

    def git_env_files(self, args: list[str], text: str) -> None:
        """`git diff`, `git grep KEY`...: asks when the output may hold a tracked env file
        (or, for `grep --no-index`, one on disk) that the command does not name."""
        for cwd in self.cwds:
            try:
                shown = shown_env_file(args, self.repo, cwd)
            except (OSError, ValueError, subprocess.SubprocessError) as exc:
                shown = (
                    f"git's index or history can't be read ({exc}), so whether it shows env "
                    "files is unknown"
                )
            if shown:
                self.add(text, "ask", shown)
                return

    def git_cwds(self, chdirs: list[Word], text: str) -> list[Path] | None:
        """The folders git works in after its `-C` options; None when one was refused."""
        cwds = list(self.cwds)
        for word in chdirs:
            if not word.static:
                for action, reason in word.problems + word.uncertain:
                    self.add(text, action, reason)
                if not (word.problems or word.uncertain):
                    self.add(text, "ask", f"git -C {word.source} is not a plain folder name")
                return None
            if not word.value:
                continue  # `-C ""` leaves git where it is
            verdict = self.paths([word], write=False)
            if verdict is not None:
                self.add(text, verdict[0], f"git -C {word.value} leaves the repo")
                return None
            cwds = [(cwd / word.value).resolve() for cwd in cwds]
        return cwds

    def program_path(self, name_word: Word, args: list[Word], text: str) -> None:
        verdict = self.paths([name_word], write=False)
        if verdict is not None:
            self.add(
                text,
                "refuse",
                f"runs a program outside the repo ({name_word.value}); "
                "call installed programs by name",
            )
            return
        self.add(text, "ask", f"runs {name_word.value} from the repo")
        self.generic_paths(args, text)

    def cd(self, args: list[Word], text: str) -> None:
        targets = _positionals(args)
        if not targets:
            self.add(text, "refuse", "cd without a directory goes to the home directory")
            return
        target = targets[0]
        if target.value == "-":
            self.add(text, "refuse", "cd - returns to a directory that can't be checked")
            return
        if target.problems:
            return  # already reported
        if target.uncertain:
            for action, reason in target.uncertain:
                self.add(text, action, reason)
            return
        if target.glob or target.brace:
            self.add(text, "ask", "cd to a pattern is not checked")
            return
        if self.variables is not None and "CDPATH" in self.variables.assigned:
            self.add(text, "ask", "CDPATH may be set by the command, so cd's target is unknown")
            return
        verdict = self.paths([target], write=False)
        if verdict is not None:
            self.add(text, verdict[0], f"cd {target.value} leaves the repo")
            return
        # Without -P, bash's cd goes to $PWD/target with each `..` taken off the text, not
        # through the link before it (`cd link/..` is where the link is, not its target's
        # parent); it falls back to the links' way when that folder does not exist.
        logical = [os.path.normpath(os.path.join(pwd, target.value)) for pwd in self.pwds]
        for path in logical:
            objection = self._locate(path, self.repo, write=False)
            if objection is not None:
                why = "bash takes each .. off the path as written"
                self.add(text, objection[0], f"cd {target.value} leaves the repo ({why})")
                return
        self.add(text, "run", "changes directory inside the repo")
        # Later parts may run from the new directory or (if cd failed) the old one.
        new = [(cwd / target.value).resolve() for cwd in self.cwds]
        new += [Path(path).resolve() for path in logical]
        self.cwds = list(dict.fromkeys(self.cwds + new))
        self.pwds = list(dict.fromkeys(self.pwds + logical + [os.fspath(n) for n in new]))

    def wrapper(self, name: str, args: list[Word], text: str, piped_input: bool) -> None:
        self.add(text, "ask", f"{name} runs another command")
        value_options = WRAPPERS[name]
        skip_positionals = _WRAPPER_POSITIONAL_BEFORE_COMMAND.get(name, 0)
        i = 0
        while i < len(args):
            value = args[i].value
            if value == "--":
                i += 1
                break
            if value.startswith("-") and len(value) > 1:
                i += 2 if (len(value) == 2 and value[1] in value_options) else 1
                continue
            if name == "env" and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", value):
                variable = value.split("=", 1)[0]
                if is_git_variable(variable):
                    self.add(text, "refuse", f"{variable}= {REPOSITORY_VARIABLE}")
                i += 1
                continue
            if skip_positionals:
                skip_positionals -= 1
                i += 1
                continue
            break
        self.generic_paths(args[:i], text)
        inner = args[i:]
        if inner:
            self.argv(inner, " ".join(w.source for w in inner), piped_input)

    def shell(self, name: str, args: list[Word], text: str) -> None:
        script: Word | None = None
        if name == "eval":
            script = Word(
                " ".join(w.value for w in args),
                text,
                problems=[p for w in args for p in w.problems],
                uncertain=[p for w in args for p in w.uncertain],
            )
        else:
            for index, word in enumerate(args):
                if (
                    word.value.startswith("-")
                    and "c" in word.value[1:]
                    and not word.value.startswith("--")
                ):
                    rest = [w for w in args[index + 1 :] if not w.value.startswith("-")]
                    script = rest[0] if rest else None
                    break
        if script is None:
            self.add(text, "ask", f"{name} runs a script")
            self.generic_paths(args, text)
            return
        self.add(text, "ask", f"{name} runs a shell script")
        if script.problems or script.uncertain or self.depth >= _MAX_NESTING:
            self.add(text, "ask", "the script can't be checked")
            return
        inner_root = parse(join_continuations(script.value))
        if depth(inner_root) > MAX_SYNTAX_DEPTH or "\x00" in script.value:
            self.add(text, "refuse", "the nested script is too deeply nested to check")
            return
        inner = _Judge(self.repo, list(self.cwds), self.depth + 1, self.context, self.variables)
        inner.pwds = list(self.pwds)
        if self.variables is not None:
            inner.variables = Variables(
                self.variables.values,
                self.variables.assigned | assigned_names(script.value),
                self.variables.cwd,
            )
        inner.program(inner_root)
        self.parts.extend(inner.parts)

    # ------------------------------------------------------------ paths

    def generic_paths(self, args: list[Word], text: str) -> None:
        """Path check for a program whose arguments are unknown: whatever looks like a path.

        Unknown programs may write, so `.git/` counts as a write target.
        """
        candidates: list[Word] = []
        for word in args:
            value = word.value
            if value.startswith("-"):
                if "=" in value:
                    candidates.append(_derived(word, value.split("=", 1)[1]))
                elif not value.startswith("--") and len(value) > 2 and _path_like(value[2:]):
                    candidates.append(_derived(word, value[2:]))
                continue
            candidates.append(word)
        verdict = self.paths(candidates, write=True)
        if verdict is not None:
            self.add(text, *verdict)

    def link_following(self, name: str, args: list[Word], text: str) -> None:
        """`cp -L`, `tar -h`, `chmod -R -L`: judge where the links they will follow lead."""
        options = _LINK_FOLLOWING.get(name)
        if not options:
            return
        given = {w.value for w in args if w.value.startswith("-")}
        clustered = {"-" + ch for w in given if not w.startswith("--") for ch in w[1:]}
        if not (given | clustered) & options:
            return
        check = ProgramCheck(None, [w for w in args if not w.value.startswith("-")], follow="tree")
        walked = self.walk(check.paths, check)
        if walked is not None:
            self.add(text, *walked)

    def paths(self, words: list[Word], write: bool) -> tuple[Action, str] | None:
        """The strictest objection to these path arguments, or None when all are fine."""
        worst: tuple[Action, str] | None = None
        for word in words:
            if word.problems or word.uncertain:
                continue  # reported with the word's own reason
            objection = self.path(word, write)
            if objection and (worst is None or RANK[objection[0]] > RANK[worst[0]]):
                worst = objection
        return worst

    def expanded_args(self, args: list[Word], text: str) -> list[Word] | None:
        """The arguments as the program gets them: bash expands braces, then globs, before
        the program parses its options, so `sort {a,-o,b}` and `sort *` (with a file named
        `-o`) are `sort a -o b`. None (after asking) when that can't be told here."""
        if not any(w.brace or w.glob for w in args):
            return args
        out: list[Word] = []
        for word in args:
            if not (word.brace or word.glob):
                out.append(word)
                continue
            values, problem = self._bash_words(word)
            if values is None:
                self.add(text, "ask", problem)
                return None
            for value, matched in values:
                glob = word.glob and not matched and globbing.has_glob(value)
                out.append(
                    dataclasses.replace(
                        word, value=value, brace=False, glob=glob, expanded_from=word.source
                    )
                )
        return out

    def _bash_words(self, word: Word) -> tuple[list[tuple[str, bool]] | None, str]:
        """The words bash makes of one argument, each with whether a glob matched it."""
        pieces = [word.value]
        if word.brace:
            if re.search(r"['\"\\]", word.source):
                return None, f"{word.source[:60]} mixes brace expansion with quoting"
            if brace_count(word.value, 256) > 256:
                return None, f"{word.source[:60]} expands to too many words to check"
            pieces = brace_expand(word.value) or []
            if not pieces:
                return None, f"{word.source[:60]} expands to too many words to check"
        if not word.brace:
            pieces = [word.glob_pattern]  # escapes kept: what bash matches
        words: list[tuple[str, bool]] = []
        for piece in pieces:
            if not (word.glob and globbing.has_glob(piece)):
                words.append((word.value if not word.brace else piece, False))
                continue
            found: list[list[str]] = []
            for cwd in self.cwds:
                try:
                    found.append(globbing.expand(piece, cwd))
                except globbing.GlobTooComplex as exc:
                    return None, f"{word.source[:60]}: {exc}"
            if any(f != found[0] for f in found):
                return None, f"{word.source[:60]} matches different files in each folder"
            # Without a match bash leaves the pattern as it is (a name that isn't there).
            cwd = self.cwds[0]
            matched = all(os.path.lexists(cwd / name) for name in found[0])
            if not matched:  # the word as it is, quotes removed
                found[0] = [word.value if not word.brace else found[0][0]]
            words.extend((name, matched) for name in found[0])
        return words, ""

    def expansions(self, word: Word) -> tuple[list[str] | None, str]:
        """Every value bash could give this word (braces, then globs); None: can't tell."""
        values = [word.value]
        if word.brace:
            if brace_count(word.value, 256) > 256:
                return None, f"{word.source[:60]} expands to too many words to check"
            expanded = brace_expand(word.value)
            if expanded is None:
                return None, f"{word.source} expands to too many words to check"
            values = expanded
        if not word.glob:
            return values, ""
        results: list[str] = []
        # Unexpanded braces leave the pattern as written (escapes kept: what bash matches).
        patterns = values if word.brace else [word.glob_pattern]
        for value, pattern in zip(values, patterns, strict=True):
            for cwd in self.cwds:
                # The literal text too: quoted glob characters stay as they are.
                results.append(value)
                if not globbing.has_glob(pattern):
                    continue
                try:
                    results.extend(globbing.expand(pattern, cwd))
                except globbing.GlobTooComplex as exc:
                    return None, f"{word.source}: {exc}"
                results.append(_glob_base(value))
        return list(dict.fromkeys(results)), ""

    def path(self, word: Word, write: bool) -> tuple[Action, str] | None:
        if word.tilde or (word.value.startswith("~") and "=~" in word.source):
            return "refuse", f"{word.value} is in the home directory, outside the repo"
        values, problem = self.expansions(word)
        if values is None:
            return "ask", problem
        for value in values:
            # What a glob or brace found is named by the pattern: the name of a file
            # outside the repo is not the model's to learn from a refusal.
            shown = word.expanded_from or (value if value == word.value else word.source)
            for cwd in self.cwds:
                objection = self._locate(value, cwd, write, shown)
                if objection:
                    return objection
        return None

    def _private(self, value: str) -> bool:
        private = self.context.private_dir
        if private is None or not os.path.isabs(value):
            return False
        return Path(os.path.realpath(value)).is_relative_to(private)

    def _locate(
        self, value: str, cwd: Path, write: bool, shown: str | None = None
    ) -> tuple[Action, str] | None:
        if value in HARMLESS_DEVICES:
            return None
        full = Path(value) if os.path.isabs(value) else cwd / value
        if _through_proc(os.fspath(full)):
            return "refuse", f"{shown or value} {THROUGH_PROC}"
        try:
            resolved = full.resolve()
        except (OSError, RuntimeError):
            return "ask", f"{shown or value} can't be resolved (a symbolic link loop?)"
        private = self.context.private_dir
        if private is not None and resolved.is_relative_to(private):
            return None
        value = shown or value
        if not resolved.is_relative_to(self.repo):
            lexical = Path(os.path.normpath(full))
            if lexical.is_relative_to(self.repo):
                return "refuse", f"{value} is a symbolic link leading outside the repo"
            return "refuse", f"{value} is outside the repo"
        if write:
            relative = resolved.relative_to(self.repo).as_posix()
            lexical_rel = os.path.relpath(os.path.normpath(full), self.repo)
            if is_git_control_path(relative) or is_git_control_path(lexical_rel):
                return "refuse", f"{value} is in .git/, which commands may not change"
            state = self.context.state_dir
            if state is not None and resolved.is_relative_to(state):
                return (
                    "refuse",
                    f"{value} is in hello-tui's state folder, which commands may not change",
                )
        return None

    def env_files(self, words: list[Word]) -> str | None:
        """Reading `.env` files needs the user: they hold keys. So does reading git's
        objects: they hold every committed or staged file (`git add .env` then
        `git reset` leaves the key in a loose object), only compressed."""
        for word in words:
            values, _ = self.expansions(word)
            for value in values or [word.value]:
                for cwd in self.cwds:
                    path = cwd / value
                    # By name, or through a link (`notes.txt -> .env`, or a hard link).
                    named = is_env_file(value) or path.is_symlink() or has_other_names(path)
                    if named and self.env.reaches(path) and path.is_file():
                        return f"reads {value}, which may hold keys"
                    folder = path.is_file() and self._env_folder(path, itself=False)
                    if folder:
                        return f"reads {value}, which is {ENV_FOLDER.format(folder)}"
                    if self._in_git_folder(path, contents=True) and path.is_file():
                        return f"reads {value} in {GIT_FOLDER_READ}"
                    credential = self._in_git_folder(path, False) and self._credential(path)
                    if credential:
                        return f"reads {value}, whose {credential} {HOLDS}"
        return None

    def _env_folder(self, path: Path, itself: bool, real: Path | None = None) -> str | None:
        return env_folder_of(path, self.repo, itself=itself, real=real)

    def _credential(self, path: Path) -> str | None:
        """The credential `path` holds when it is a git config inside a `.git` folder (the
        repo's own, a submodule's under `.git/modules/`, a nested repository's)."""
        real = Path(os.path.realpath(path))
        if real.name not in GIT_CONFIG_NAMES or not real.is_file():
            return None
        return file_credential(real)

    def _reads_git_folder(self, check: ProgramCheck) -> bool:
        """A recursive read entering a `.git` shows its objects when it prints binary files
        as text, and its configs (text) always: with a credential there, that counts."""
        return check.binary_as_text or any_config_credentials(self.repo) is not None

    def _in_git_folder(self, path: Path, contents: bool) -> bool:
        """`path` (absolute) is inside a `.git` of the repo (`contents`: a part of it that
        holds files' contents), as written or where it leads."""
        rule = is_git_content_path if contents else is_git_control_path
        for candidate in (os.path.normpath(path), os.path.realpath(path)):
            try:
                relative = Path(candidate).relative_to(self.repo).as_posix()
            except ValueError:
                continue
            if rule(relative):
                return True
        return False

    def walk(self, words: list[Word], check: ProgramCheck) -> tuple[Action, str] | None:
        """Judge the links a program follows below its folders, and the .env files it reads."""
        names_only = check.follow == "args"  # `_env_file_in_walk`: names, from cached listings
        budget = [MAX_NAME_WALK_ENTRIES if names_only else MAX_WALK_ENTRIES]
        for word in words:
            values, problem = self.expansions(word)
            if values is None:
                return "ask", problem
            for value in values:
                for cwd in self.cwds:
                    start = Path(value) if os.path.isabs(value) else cwd / value
                    found = self._walk_one(start, check, budget)
                    if found:
                        return found
        return None

    def _walk_one(
        self, start: Path, check: ProgramCheck, budget: list[int]
    ) -> tuple[Action, str] | None:
        if not start.is_dir():
            return None
        # A walk of any part of `.git` may reach its objects (`grep -r KEY .git`).
        if check.recursive_read and self._in_git_folder(start, contents=False):
            return "ask", f"reads {_display(start, self.repo)} in {GIT_FOLDER_READ}"
        if check.follow == "args":  # no link is followed: only env files are looked for
            return self._env_file_in_walk(start, check, budget)
        # Links are followed (`ls -L`, `find -L`, `grep -R`): each is judged where it leads.
        follow_all = check.follow == "tree"
        recursive = follow_all or check.recursive_read
        secret: tuple[Action, str] | None = None  # a .env: asked about unless a refusal comes
        seen: set[Path] = set()
        stack = [(start, 0, check.hidden or self._whitelisted_above(start))]
        while stack:
            folder, level, hidden = stack.pop()
            real = folder.resolve()
            if real in seen:
                continue
            seen.add(real)
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            budget[0] -= len(entries)
            if budget[0] < 0:
                return "ask", f"{_display(start, self.repo)} holds too many files to check"
            hidden = hidden or whitelists(os.fspath(folder), [e.name for e in entries])
            if check.recursive_read and secret is None and any(e.is_file() for e in entries):
                env_folder = self._env_folder(folder, itself=True, real=real)
                if env_folder:
                    where = _display(folder, self.repo)
                    secret = ("ask", f"reads the files in {where}, {ENV_FOLDER.format(env_folder)}")
            for entry in entries:
                if (
                    is_dot_git(entry.name)
                    and check.recursive_read
                    and hidden
                    and self._reads_git_folder(check)
                ):
                    where = _display(Path(entry.path), self.repo)
                    return "ask", f"reads {where} as text: {GIT_FOLDER_TEXT}"
                if entry.name == ".git" and not follow_all:
                    continue
                if entry.is_symlink():
                    objection = self._locate(entry.path, self.repo, write=False)
                    if objection:
                        return "refuse", (
                            f"{_display(Path(entry.path), self.repo)} is a symbolic link "
                            "leading outside the repo, and the command follows links"
                        )
                    if not follow_all:
                        continue
                    # A link into a `.git` (`docs/gitdir -> ../.git`) is that folder read
                    # under another name: its config's credentials, its objects.
                    link = Path(entry.path)
                    if check.recursive_read and self._in_git_folder(link, contents=False):
                        where = _display(link, self.repo)
                        return "ask", f"reads {where}, a link into {GIT_FOLDER_READ}"
                # A walk reads what it lists: hidden files only when it shows hidden ones
                # (`rg` reads `config.env` though it skips `.env`); links as their targets.
                shown = hidden or not entry.name.startswith(".")
                shown = shown or (check.typed and _typed_hidden(entry.name))
                reads_it = check.recursive_read and shown and entry.is_file()
                if reads_it and secret is None and self._env_entry(entry):
                    where = _display(Path(entry.path), self.repo)
                    secret = ("ask", f"reads {where}, which may hold keys")
                try:
                    is_dir = entry.is_dir(follow_symlinks=follow_all)
                except OSError:
                    continue
                descend = is_dir and recursive and (level == 0 or check.follow != "entries")
                if descend and (hidden or not entry.name.startswith(".")):
                    stack.append((Path(entry.path), level + 1, hidden))
        return secret

    def _env_file_in_walk(
        self, start: Path, check: ProgramCheck, budget: list[int]
    ) -> tuple[Action, str] | None:
        """The first env file a recursive read that follows no links reads (`rg`, `grep -r`):
        links are not read, nor `.git`, nor dotfiles unless the program shows them. Names
        are matched a folder at a time; 10,000 files take milliseconds. A `.git` it reads
        binary files as text in (`grep -ra`) prints git's objects, env files among them."""
        # rg shows the dotfiles an ignore file whitelists (`!.env`), here or in any folder above.
        shown = check.hidden or self._whitelisted_above(start)
        # The folders below are no links: whether one is in an env folder goes by names.
        stack = [(os.fspath(start), shown, self._env_folder(start, itself=True))]
        while stack:
            folder, hidden, env_folder = stack.pop()
            names, folders = listing(folder)  # reused while the folder is unchanged
            budget[0] -= len(names)
            if budget[0] < 0:
                # The sandbox lets it read the repo's env files: unlooked-at is unknown.
                return "ask", f"{_display(start, self.repo)} holds too many files to check"
            hidden = hidden or whitelists(folder, names)
            if env_folder and len(names) > len(folders):
                where = _display(Path(folder), self.repo)
                return "ask", f"reads the files in {where}, {ENV_FOLDER.format(env_folder)}"
            for name in _env_names_read(names, hidden, check.typed):
                path = os.path.join(folder, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    return "ask", f"reads {_display(Path(path), self.repo)}, which may hold keys"
            linked = self.linked_env()
            if linked is not None:  # an env file has a second name: which file is it?
                subfolders = set(folders)
                for name in names:
                    path = os.path.join(folder, name)
                    shown = hidden or not name.startswith(".")
                    plain_file = name not in subfolders and not os.path.islink(path)
                    if shown and plain_file and linked(path):
                        where = _display(Path(path), self.repo)
                        return "ask", f"reads {where}, a hard link to an env file"
            if hidden and any(is_dot_git(n) for n in folders) and self._reads_git_folder(check):
                where = _display(Path(folder), self.repo)
                return "ask", f"reads the .git in {where} as text: {GIT_FOLDER_TEXT}"
            stack += [
                (os.path.join(folder, name), hidden, env_folder or _env_name(name))
                for name in folders
                if name != ".git" and (hidden or not name.startswith("."))
            ]
        return None

    def _env_entry(self, entry: os.DirEntry[str]) -> bool:
        if is_env_file(entry.name):
            return True
        if entry.is_symlink() and self.env.reaches(Path(entry.path)):
            return True
        linked = self.linked_env()
        return linked is not None and linked(entry.path)

    def _whitelisted_above(self, start: Path) -> bool:
        dirs = own_git_dirs(self.repo)
        return whitelisted_above(start.resolve(), self.repo, dirs[0] if dirs else None)


# A folder named like an env file (`.env/production`) holds env files, whatever their names.
ENV_FOLDER = "in a folder named like an env file ({}), which may hold keys"


THROUGH_PROC = (
    "leads through /proc, whose links (/proc/self/cwd, /dev/fd/N) the command resolves in "
    "its own process, not where the policy is"
)
_MAX_LINKS = 40  # as the kernel: more links than this in one path is a loop


def _through_proc(path: str) -> bool:
    """Whether resolving `path` (absolute) passes through /proc, as written or through a
    symbolic link (`/dev/fd` -> /proc/self/fd). /proc/self is the process resolving it: in
    the policy that is not the command (`/proc/self/cwd/../x` is x beside the policy's
    folder, for the command beside its own), so where such a path leads can't be judged."""
    parts = path.split("/")[::-1]  # a stack: the next component last
    current = "/"
    links = 0
    while parts:
        part = parts.pop()
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)
            continue
        step = os.path.join(current, part)
        if step == "/proc" or step.startswith("/proc/"):
            return True
        try:
            target = os.readlink(step)
        except OSError:  # no link (or no file): the walk goes on lexically
            current = step
            continue
        links += 1
        if links > _MAX_LINKS:
            return False  # a loop: resolving it fails, and that is judged on its own
        if target.startswith("/"):
            current = "/"
        parts.extend(target.split("/")[::-1])
    return False


def _typed_hidden(name: str) -> bool:
    """A hidden file rg's builtin types may choose: their globs are `*.ext`, a few
    `*[.-]NAME*` and dotfile names (`.bashrc`), so a dotfile whose name goes on after a
    `.` or `-` (`.env.json`); `.env` or `.envrc` no builtin type names."""
    return name.startswith(".") and re.search(r"[.-]", name[1:]) is not None


def _env_names_read(names: list[str], hidden: bool, typed: bool) -> set[str]:
    """The env files among `names` a walk reads: dotfiles only when it shows them, or
    when a chosen type may match them (`rg -t json` reads `.env.json`)."""
    found = env_file_names(names, hidden=hidden)
    if typed and not hidden:
        found |= {n for n in env_file_names(names) if _typed_hidden(n)}
    return found


def _env_name(name: str) -> str | None:
    return name if is_env_file(name) else None


def _display(path: Path, repo: Path) -> str:
    """`path` as the model may see it: relative to the repo, never a name from outside it."""
    try:
        return path.relative_to(repo).as_posix() or "."
    except ValueError:
        return "a folder outside the repo"


def _glob_base(value: str) -> str:
    """The fixed folder a pattern starts from (`/etc` for `/etc/*`): bash reads it."""
    fixed = []
    for part in Path(value).parts:
        if globbing.has_glob(part):
            break
        fixed.append(part)
    return str(Path(*fixed)) if fixed else "."


def _positionals(args: list[Word]) -> list[Word]:
    return [w for w in args if not w.value.startswith("-") or w.value == "-"]


def _path_like(value: str) -> bool:
    return value.startswith(("/", "~")) or ".." in Path(value).parts


def _derived(word: Word, value: str) -> Word:
    return Word(
        value=value,
        source=word.source,
        glob=word.glob,
        tilde=False,
        brace=word.brace,
        problems=list(word.problems),
        uncertain=list(word.uncertain),
    )


def _descriptor_number(node: tree_sitter.Node) -> bool:
    """The target of `>&`/`<&` names a descriptor: digits only. tree-sitter's number token
    also takes bash's base notation (`2#x`), which bash reads after `>&` as a file name
    (`ls >&2#x` writes the file `2#x`)."""
    return node.type == "number" and text_of(node).isdigit()


def _last_statement(children: list[tree_sitter.Node]) -> tree_sitter.Node | None:
    """The statement of a list or pipeline that bash gives a trailing redirection to."""
    return next((c for c in reversed(children) if c.type != "comment"), None)


def _statements(root: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [c for c in root.named_children if c.type != "comment"]


def _simple_argv(root: tree_sitter.Node, variables: Variables | None) -> list[str] | None:
    statements = _statements(root)
    if len(statements) != 1 or statements[0].type != "command":
        return None
    if any(c.type == "&" for c in root.children):
        return None
    node = statements[0]
    words: list[Word] = []
    children = node.named_children
    if any(a.end_byte == b.start_byte for a, b in itertools.pairwise(children)):
        return None  # pieces tree-sitter split that bash reads as one word: bash runs it
    for child in children:
        if child.type == "command_name":
            words.append(word_of(child.named_children[0] if child.named_children else child))
        elif child.type in ("variable_assignment",) or child.type in REDIRECT_NODES:
            return None
        else:
            words.append(word_of(child))
    if not words or not all(w.static for w in words):
        return None
    return [w.value for w in words]


def _leading_cd(root: tree_sitter.Node) -> tuple[tree_sitter.Node | None, bool]:
    """The `cd` that starts the command, when what follows runs only after it (`&&`, `;`)."""
    statements = _statements(root)
    if not statements:
        return None, False
    first = statements[0]
    if first.type == "command":
        if _command_name(first) == "cd":
            trailing_amp = any(c.type == "&" for c in root.children[:2])
            return (None, False) if trailing_amp else (first, len(statements) == 1)
        return None, False
    node = first
    while node.type == "list":
        operator = next(c.type for c in node.children if not c.is_named)
        left = node.named_children[0]
        if left.type == "command":
            if operator == "&&" and _command_name(left) == "cd":
                return left, False
            return None, False
        node = left
    return None, False


def _command_name(node: tree_sitter.Node) -> str | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    return word_of(name.named_children[0] if name.named_children else name).value


def _cd_destination(node: tree_sitter.Node, cwd: Path, variables: Variables | None) -> Path | None:
    args = [word_of(c, variables) for c in node.named_children if c.type != "command_name"]
    targets = _positionals(args)
    if not targets or not targets[0].static:
        return None
    return (cwd / targets[0].value).resolve()
