"""The terminal policy: may a command run at once, must the user approve it, or is it refused?

`classify(command, repo, cwd)` parses the command with tree-sitter-bash and
judges every command of every pipeline and list on its own (and every command
nested in `$( )`, backticks, `<( )` or `sh -c`); the strictest verdict wins:

- run: every part is a known read-only program used read-only, every path
  inside the repo;
- ask: anything else that stays inside the repo (the user decides);
- refuse: privilege escalation, any path outside the repo (reads too, also
  through `~`, variables or symlinks), writes into `.git/`, programs that
  need an interactive terminal. Nobody can approve these.

Pure classification: the only I/O is resolving paths (symlinks, globs).
"""

from __future__ import annotations

import glob as globlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import tree_sitter

from hello_tui.tools.shell.parse import (
    RANK,
    REDIRECT_NODES,
    STRUCTURE_NODES,
    SUBSTITUTION_NODES,
    Action,
    Word,
    brace_expand,
    parse,
    text_of,
    word_of,
)
from hello_tui.tools.shell.programs import check_read_only

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
        "less",
        "more",
        "most",
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
HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr"})
_MAX_NESTING = 4


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


def strictest(actions: list[Action]) -> Action:
    return max(actions, key=lambda a: RANK[a], default="run")


def classify(command: str, repo: Path, cwd: Path) -> PolicyVerdict:
    """Judge `command` as run from `cwd` inside `repo`."""
    repo = repo.resolve()
    cwd = cwd.resolve()
    if not command.strip():
        return PolicyVerdict("refuse", "the command is empty", [])
    judge = _Judge(repo, [cwd], depth=0)
    root = parse(command)
    judge.program(root)
    parts = judge.parts or [PartVerdict(command, "run", "nothing to run")]
    action = strictest([p.action for p in parts])
    reasons = list(dict.fromkeys(p.reason for p in parts if p.action == action))
    if action == "run":
        reason = "read-only, inside the repo"
    else:
        reason = "; ".join(reasons)
    verdict = PolicyVerdict(action, reason, parts)
    if not root.has_error:
        verdict.argv = _simple_argv(root)
        cd_node, cd_only = _leading_cd(root)
        if cd_node is not None and action != "refuse":
            verdict.cd_target = _cd_destination(cd_node, cwd)
            verdict.cd_only = cd_only
    return verdict


class _Judge:
    def __init__(self, repo: Path, cwds: list[Path], depth: int) -> None:
        self.repo = repo
        self.cwds = cwds
        self.depth = depth
        self.parts: list[PartVerdict] = []

    def add(self, text: str, action: Action, reason: str) -> None:
        self.parts.append(PartVerdict(text.strip(), action, reason))

    # ------------------------------------------------------------ structure

    def program(self, root: tree_sitter.Node) -> None:
        if root.has_error:
            self.add(text_of(root), "ask", "the command does not parse cleanly as shell")
            self.scan_unparsed(text_of(root))
        self.node(root, piped_input=False)

    def scan_unparsed(self, text: str) -> None:
        """What could not be parsed may still name paths (`{cat,/etc/passwd}`): any that
        leave the repo are refused, whatever their role would have been."""
        tokens = re.split(r"[\s{},;|&<>()'\"=`$]+", text)
        words = [Word(value=t, source=t, tilde=t.startswith("~")) for t in tokens if t]
        verdict = self.paths([w for w in words if _path_like(w.value)], write=True)
        if verdict is not None:
            self.add(text, *verdict)

    def node(self, node: tree_sitter.Node, piped_input: bool, extra: list | None = None) -> None:
        kind = node.type
        if kind in ("program", "list"):
            for child in node.named_children:
                self.node(child, piped_input=False)
        elif kind == "pipeline":
            for index, child in enumerate(node.named_children):
                self.node(child, piped_input=index > 0)
        elif kind == "redirected_statement":
            body = node.child_by_field_name("body")
            extra_words: list[tree_sitter.Node] = []
            for child in node.named_children:
                if child.type in REDIRECT_NODES:
                    extra_words.extend(self.redirect(child))
            if body is not None:
                self.node(body, piped_input, extra_words)
        elif kind == "command":
            self.command(node, piped_input, extra or [])
        elif kind == "comment":
            return
        elif kind in SUBSTITUTION_NODES:
            self.substitution(node)
        elif kind == "variable_assignment":
            self.add(text_of(node), "ask", "sets a shell variable")
            self.nested(node)
        else:
            if kind != "ERROR":  # a parse error is already reported for the whole command
                self.add(text_of(node), "ask", f"uses shell syntax ({kind}) that is not checked")
            self.nested(node)

    def nested(self, node: tree_sitter.Node) -> None:
        """Judge every command, redirection and substitution somewhere below `node`."""
        for child in node.named_children:
            if child.type in STRUCTURE_NODES or child.type in SUBSTITUTION_NODES:
                self.node(child, piped_input=False)
            elif child.type in REDIRECT_NODES:
                self.redirect(child)
            else:
                self.nested(child)

    def substitution(self, node: tree_sitter.Node) -> None:
        opener = "<( )" if node.type == "process_substitution" else "$( ) or backticks"
        self.add(text_of(node), "ask", f"runs a nested command ({opener})")
        for child in node.named_children:
            self.node(child, piped_input=False)

    # ------------------------------------------------------------ redirects

    def redirect(self, node: tree_sitter.Node) -> list[tree_sitter.Node]:
        """Judge one redirection; returns words tree-sitter put in it that belong to the command."""
        text = text_of(node)
        self.nested(node)
        if node.type == "heredoc_redirect":
            self.add(text.split("\n", 1)[0], "ask", "here-documents are not checked")
            return []
        if node.type == "herestring_redirect":
            return []
        operator = next((c.type for c in node.children if not c.is_named), "")
        targets = [c for c in node.named_children if c.type != "file_descriptor"]
        if not targets:
            self.add(text, "ask", "the redirection is not checked")
            return []
        target, extra = targets[0], targets[1:]
        word = word_of(target)
        if operator in (">&", "<&") and (target.type == "number" or word.value == "-"):
            return extra  # duplicating or closing a descriptor touches no file
        writes = operator not in ("<",)
        if word.problems:
            for action, reason in word.problems:
                self.add(text, action, reason)
            return extra
        if writes and word.value in HARMLESS_DEVICES:
            return extra
        verdict = self.paths([word], write=writes)
        if verdict is not None:
            self.add(text, *verdict)
        elif writes:
            self.add(text, "ask", f"writes to {word.value}")
        else:
            self.add(text, "run", "reads a file inside the repo")
        return extra

    # ------------------------------------------------------------ commands

    def command(self, node: tree_sitter.Node, piped_input: bool, extra: list) -> None:
        text = text_of(node)
        word_nodes: list[tree_sitter.Node] = []
        assignments = False
        for child in node.named_children:
            if child.type == "command_name":
                word_nodes.append(child.named_children[0] if child.named_children else child)
            elif child.type == "variable_assignment":
                assignments = True
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
        if assignments:
            self.add(text, "ask", "sets environment variables for the command")
        if word_nodes:
            self.argv([word_of(n) for n in word_nodes], text, piped_input)

    def argv(self, words: list[Word], text: str, piped_input: bool) -> None:
        for word in words:
            for action, reason in word.problems:
                if not reason.startswith("runs a nested command"):  # judged on its own
                    self.add(text, action, reason)
        name_word, args = words[0], words[1:]
        if name_word.problems or name_word.glob or name_word.brace:
            self.add(text, "ask", "the program name is not a plain word")
            self.generic_paths(words, text)  # `{cat,/etc/passwd}` expands to a path
            return
        name = name_word.value
        if "/" in name or name_word.tilde:
            self.program_path(name_word, args, text)
            return
        if name in PRIVILEGED:
            self.add(text, "refuse", f"{name} runs commands with other privileges")
            return
        if name in PAGERS and piped_input and not _positionals(args):
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
        if name in WRAPPERS:
            self.wrapper(name, args, text, piped_input)
            return
        if name in SHELLS or name == "eval":
            self.shell(name, args, text)
            return
        check = check_read_only(name, args)
        if check is None:
            reason = (
                f"{name} runs code (an interpreter)"
                if INTERPRETER.match(name)
                else f"{name} is not a known read-only program"
            )
            self.add(text, "ask", reason)
            self.generic_paths(args, text)
            return
        # Unquoted globs anywhere become file names (`grep /etc/* x`): check those too.
        candidates = check.paths + [
            w for w in args if (w.glob or w.brace or w.tilde) and w not in check.paths
        ]
        if name in ("echo", "printf", "pwd", "which", "tr"):
            candidates = []
        verdict = self.paths(candidates, write=check.unsafe is not None)
        if verdict is not None:
            self.add(text, *verdict)
        if check.unsafe:
            self.add(text, "ask", check.unsafe)
        elif verdict is None:
            self.add(text, "run", f"{name} is read-only")

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
        if target.glob or target.brace:
            self.add(text, "ask", "cd to a pattern is not checked")
            return
        verdict = self.paths([target], write=False)
        if verdict is not None:
            self.add(text, verdict[0], f"cd {target.value} leaves the repo")
            return
        self.add(text, "run", "changes directory inside the repo")
        # Later parts may run from the new directory or (if cd failed) the old one.
        new = [(cwd / target.value).resolve() for cwd in self.cwds]
        self.cwds = list(dict.fromkeys(self.cwds + new))

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
        if script.problems or self.depth >= _MAX_NESTING:
            self.add(text, "ask", "the script can't be checked")
            return
        inner = _Judge(self.repo, list(self.cwds), self.depth + 1)
        inner.program(parse(script.value))
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

    def paths(self, words: list[Word], write: bool) -> tuple[Action, str] | None:
        """The strictest objection to these path arguments, or None when all are fine."""
        worst: tuple[Action, str] | None = None
        for word in words:
            if word.problems:
                continue  # reported with the word's own reason
            objection = self.path(word, write)
            if objection and (worst is None or RANK[objection[0]] > RANK[worst[0]]):
                worst = objection
        return worst

    def path(self, word: Word, write: bool) -> tuple[Action, str] | None:
        if word.tilde or (word.value.startswith("~") and "=~" in word.source):
            return "refuse", f"{word.value} is in the home directory, outside the repo"
        values = [word.value]
        if word.brace:
            expanded = brace_expand(word.value)
            if expanded is None:
                return "ask", f"{word.source} expands to too many words to check"
            values = expanded
        for value in values:
            for cwd in self.cwds:
                for target in self._expand_glob(value, cwd, word.glob):
                    objection = self._locate(target, cwd, write)
                    if objection:
                        return objection
        return None

    def _expand_glob(self, value: str, cwd: Path, is_glob: bool) -> list[str]:
        if not is_glob or not re.search(r"[*?\[]", value):
            return [value]
        # Whatever the pattern matches, plus the fixed directory it starts from.
        parts = Path(value).parts
        fixed = []
        for part in parts:
            if re.search(r"[*?\[]", part):
                break
            fixed.append(part)
        matches = globlib.glob(value, root_dir=cwd, include_hidden=True)
        base = str(Path(*fixed)) if fixed else "."
        # Older bash lets `.*` match `..`; Python's glob never does, so add it by hand.
        parent = [str(Path(base, ".."))] if re.search(r"(^|/)\.[^/]*[*?\[]", value) else []
        return [base, *parent, *matches]

    def _locate(self, value: str, cwd: Path, write: bool) -> tuple[Action, str] | None:
        if value in HARMLESS_DEVICES:
            return None
        full = Path(value) if os.path.isabs(value) else cwd / value
        try:
            resolved = full.resolve()
        except (OSError, RuntimeError):
            return "ask", f"{value} can't be resolved (a symbolic link loop?)"
        if not resolved.is_relative_to(self.repo):
            lexical = Path(os.path.normpath(full))
            if lexical.is_relative_to(self.repo):
                return "refuse", f"{value} is a symbolic link leading outside the repo"
            return "refuse", f"{value} is outside the repo"
        if write:
            relative = resolved.relative_to(self.repo)
            if relative.parts[:1] == (".git",):
                return "refuse", f"{value} is in .git/, which commands may not change"
        return None


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
    )


def _statements(root: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [c for c in root.named_children if c.type != "comment"]


def _simple_argv(root: tree_sitter.Node) -> list[str] | None:
    statements = _statements(root)
    if len(statements) != 1 or statements[0].type != "command":
        return None
    if any(c.type == "&" for c in root.children):
        return None
    node = statements[0]
    words: list[Word] = []
    for child in node.named_children:
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


def _cd_destination(node: tree_sitter.Node, cwd: Path) -> Path | None:
    args = [word_of(c) for c in node.named_children if c.type != "command_name"]
    targets = _positionals(args)
    if not targets or not targets[0].static:
        return None
    return (cwd / targets[0].value).resolve()
