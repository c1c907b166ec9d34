"""The policy against the ways it was fooled, and the false alarms it raised.

Every attack class of the red team has rows here (and its variants: other awk
spellings, other file-list options, other variable-setting builtins, other
glob syntax, other link-following flags); tests/tools/test_red_team.py runs
the same classes for real through `hello-tui exec`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from hello_tui.core.git_layout import foreign_repository
from hello_tui.tools.shell import globbing
from hello_tui.tools.shell.awk import analyse, tokenize
from hello_tui.tools.shell.parse import brace_count
from hello_tui.tools.shell.policy import PolicyContext, assigned_names, classify
from tests.tools.helpers import policy_world

RUN, ASK, REFUSE = "run", "ask", "refuse"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    world = policy_world(tmp_path_factory.mktemp("attacks"))
    repo, outside = world["repo"], world["outside"]
    (repo / "bin").mkdir()
    (repo / "bin" / "ls").write_text("#!/bin/sh\necho pwned\n")
    os.symlink(outside, repo / "link")
    os.symlink(outside / "secret.txt", repo / "report.xml")
    # An embedded bare repository whose config would run a program.
    bare = repo / "evil.git"
    (bare / "objects").mkdir(parents=True)
    (bare / "refs").mkdir()
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    (bare / "config").write_text("[core]\n\tfsmonitor = ./payload.sh\n")
    (repo / "vendor" / "lib" / ".git").mkdir(parents=True)
    (repo / ".helloagents").mkdir()
    return world | {"repo": repo.resolve()}


def context(world) -> PolicyContext:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(world["private"] / "home"),
        "TMPDIR": str(world["private"] / "tmp"),
        "LANG": "C.UTF-8",
    }
    return PolicyContext(
        environment=env, private_dir=world["private"], state_dir=world["repo"] / ".helloagents"
    )


def verdict_of(world, command: str, cwd: Path | None = None):
    return classify(command, world["repo"], cwd or world["repo"], context(world))


OUT = "{out}"  # replaced by the outside folder

ATTACKS: list[tuple[str, str]] = [
    # --- commands in an expansion's words, which tree-sitter leaves as text
    ("echo ${X:-`cat .env`}", ASK),
    ("echo ${X:-<(cat .env)}", ASK),
    ("echo ${PWD/#/`cat .env`}", ASK),
    # --- awk: the program text is tokenized, not searched
    ("awk '/#/ { system(\"id\") }' a.txt", ASK),
    ('awk \'/"/ { system("id") }\' a.txt', ASK),
    ('awk \'{ print "x" \\\n > "out.txt" }\' a.txt', ASK),
    ('awk \'{ print "x" \\\n > "' + OUT + "/x\" }' a.txt", REFUSE),
    ("awk 'BEGIN { ARGV[1] = \"" + OUT + "/secret.txt\"; ARGC = 2 } { print }'", ASK),
    ("awk 'BEGIN { ARGV[ARGC++] = \"/proc/1/environ\" } { print }' a.txt", ASK),
    ("awk 'BEGIN { split(\"" + OUT + "/secret.txt\", ARGV) } { print }' a.txt", ASK),
    ("awk 'BEGIN { sub(/a/, \"" + OUT + "\", ARGV[1]) } { print }' a.txt", ASK),
    ("awk 'function f(a) { a[1] = \"x\" } BEGIN { f(ARGV) } { print }' a.txt", ASK),
    ("awk 'BEGIN { getline ARGV[1] < \"-\" } { print }' a.txt", ASK),
    ("awk 'BEGIN { for (ARGV[1] in x) ; } { print }' a.txt", ASK),
    ("awk 'BEGIN { ENVIRON[\"X\"] = 1 }'", ASK),
    ("awk '{ print }' /proc/1/environ", REFUSE),
    ("gawk '/x/ { system(\"id\") }' a.txt", ASK),
    ("mawk '{ print | \"sh\" }' a.txt", ASK),
    ("nawk '{ \"id\" |& getline }' a.txt", ASK),
    ("gawk -e 'BEGIN { system(\"id\") }'", ASK),
    ("gawk --source='BEGIN { system(\"id\") }'", ASK),
    ("awk -f prog.awk a.txt", ASK),
    ("gawk -l filefuncs 'BEGIN { }'", ASK),
    ("gawk '@load \"filefuncs\"; BEGIN { }'", ASK),
    ('gawk \'BEGIN { f = "system"; @f("id") }\'', ASK),
    ("awk -v ARGV=x '{ print }' a.txt", ASK),
    ("awk '{ print }' ARGC=5 a.txt", ASK),
    ("awk 'BEGIN { while ((getline l < \"" + OUT + "/secret.txt\") > 0) print l }'", REFUSE),
    ("awk 'BEGIN { while ((getline l < \"a.txt\") > 0) print l }'", ASK),
    ("gawk --profile=prof.txt '{ print }' a.txt", ASK),
    ("awk '{ print > \"/dev/stderr\" }' a.txt", RUN),
    ("awk '$1 ~ /#/ { n++ } END { print n / 2 }' a.txt", RUN),
    ("awk 'BEGIN { for (i = 1; i < ARGC; i++) print ARGV[i] }' a.txt", RUN),
    # --- names of the files to read taken from a file or stdin
    ("printf '" + OUT + "/secret.txt\\0' | sort --files0-from=-", ASK),
    ("sort --files0=list a.txt", ASK),
    ("find . -files0-from list", ASK),
    ("printf 'x\\0' | wc --files0-from=-", ASK),
    ("du --files0-from=- < /dev/null", ASK),
    ("printf 'x\\n' | file -f -", ASK),
    ("sort --files0-from=" + OUT + "/list", REFUSE),
    # --- builtins that set variables or change how names resolve
    ("printf -v PATH bin ; ls", ASK),
    ("printf -vPATH bin ; ls", ASK),
    ("printf -v HOME cfg ; git status", ASK),
    ("printf -v CDPATH /tmp ; cd src", ASK),
    ("read PATH <<< bin ; ls", ASK),
    ("declare PATH=bin ; ls", ASK),
    ("export HOME=cfg ; git status", ASK),
    ("typeset -x PATH=bin; ls", ASK),
    ("mapfile PATH < a.txt; ls", ASK),
    ("hash -p bin/ls ls ; ls", ASK),
    ("alias ls=cat ; ls", ASK),
    ("shopt -s dotglob ; cat src/*", ASK),
    ("CDPATH=/tmp cd src", ASK),
    ("PATH=bin ls", ASK),
    ("enable -f ./x.so x", ASK),
    ("source ./env.sh", ASK),
    # --- bash's whole glob syntax, expanded by bash's rules
    ("cat lin[[:alpha:]]/secret.txt", REFUSE),
    ("cat lin[!x]/secret.txt", REFUSE),
    ("cat lin[^x]/secret.txt", REFUSE),
    ("cat l[a-z]nk/secret.txt", REFUSE),
    ("cat li?k/s*", REFUSE),
    ("cat [l]ink/*", REFUSE),
    ("cat l*/secret.txt", REFUSE),
    ("cat **/secret.txt", REFUSE),
    ("cat report.[x]ml", REFUSE),
    ("cat @(a|b).txt", ASK),  # extended globs are not expanded: never guessed
    ("cat @(link)/secret.txt", REFUSE),  # does not parse; a piece of it leaves the repo
    ("cat src/[[:lower:]]*.py", RUN),
    # --- options that follow symbolic links: judged by where the links lead
    ("ls -RL", REFUSE),
    ("ls -L", REFUSE),
    ("ls -R --dereference", REFUSE),
    ("find -L . -name secret.txt", REFUSE),
    ("find . -follow -name x", REFUSE),
    ("du -L .", REFUSE),
    ("du --dereference -s .", REFUSE),
    ("grep -R outside .", REFUSE),
    ("grep --dereference-recursive x .", REFUSE),
    ("rg -L outside", REFUSE),
    ("rg --follow outside", REFUSE),
    ("tree -l", REFUSE),
    ("cp -L link/secret.txt src/", REFUSE),
    ("cp -rL link src/copy", REFUSE),
    ("tar -ch -f out.tar .", REFUSE),
    ("ls -L src", RUN),
    ("find -L src -name '*.py'", RUN),
    ("grep -R hi src", RUN),
    # --- git only ever on the repo's own .git
    ("git -C evil.git status", REFUSE),
    ("git --git-dir=evil.git status", REFUSE),
    ("git --git-dir evil.git log", REFUSE),
    ("git --work-tree=/ status", REFUSE),
    ("GIT_DIR=evil.git git status", REFUSE),
    ("GIT_CONFIG_GLOBAL=evil.git/config git log", REFUSE),
    ("env GIT_DIR=evil.git git status", REFUSE),
    ("export GIT_DIR=evil.git; git status", REFUSE),
    ("read GIT_DIR <<< evil.git; git log", REFUSE),
    ("printf -v GIT_DIR evil.git; git log", REFUSE),
    ("cd evil.git && git status", REFUSE),
    ("cd vendor/lib && git log", REFUSE),
    ("cd .git && git log", REFUSE),
    ("bash -c 'git -C evil.git status'", REFUSE),
    ("git --exec-path=. status", REFUSE),
    ("git --exec-path", RUN),
    # --- explosions and malformed input are refusals, not crashes
    ("echo {1..99}{1..99}{1..99}{1..99}", REFUSE),
    ("echo {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", REFUSE),
    ("cat a.txt\x00", REFUSE),
    ("echo " + "$(" * 150 + "x" + ")" * 150, REFUSE),
    ("echo {1..20}", RUN),
    ("cat " + "{a,b}" * 3000, REFUSE),
    ("cat " + "{" * 100 + "a" + "}" * 100, REFUSE),
    ("cat " + "*" * 2000, ASK),
    ("echo " + "&& echo x " * 300, REFUSE),
    # --- write targets outside or in .git are refused outright
    ("sort -o " + OUT + "/x a.txt", REFUSE),
    ("sort --out=" + OUT + "/x a.txt", REFUSE),
    ("sort -o .git/x a.txt", REFUSE),
    ("sort -T " + OUT + " a.txt", REFUSE),
    ("find . -fprint " + OUT + "/x", REFUSE),
    ("find . -fprintf .git/x %p", REFUSE),
    ("sed 'w " + OUT + "/x' a.txt", REFUSE),
    ("sed -n 's/h/j/w .git/x' a.txt", REFUSE),
    ("awk '{ print > \".git/hooks/pre-commit\" }' a.txt", REFUSE),
    ("awk '{ print >> \"" + OUT + "/x\" }' a.txt", REFUSE),
    ("git log --output=" + OUT + "/x", REFUSE),
    ("git diff --out=.git/x", REFUSE),
    ("tree -o " + OUT + "/x", REFUSE),
    ("cat a.txt 1<> " + OUT + "/x", REFUSE),
    ("cat a.txt 1<> .git/x", REFUSE),
    ("echo x > .helloagents/notes.md", REFUSE),
    ("sed 'w out.txt' a.txt", ASK),
    ("echo x > $TMPDIR/scratch", RUN),
    # --- .env holds keys: reading it needs the user
    ("cat .env", ASK),
    ("head -n 1 .e*", ASK),
    ("grep -r KEY .", ASK),
    ("grep KEY < .env", ASK),
    # A count or a digest of a key is a leak too: a short key is guessed from its digest,
    # `wc -L` gives its length, `cmp` the first byte that differs.
    ("wc -L .env", ASK),
    ("wc -c .env", ASK),
    ("wc -lw .e*", ASK),
    ("cksum .env", ASK),
    ("md5sum .env", ASK),
    ("sha256sum .env", ASK),
    ("cmp .env a.txt", ASK),
    ("diff -q .env a.txt", ASK),
    ("wc -l a.txt", RUN),
    ("stat .env", RUN),
    ("ls -la", RUN),
    # --- false alarms no more
    ("git --version", RUN),
    ("git branch", RUN),
    ("git branch -a -v", RUN),
    ("git tag", RUN),
    ("git tag -l 'v*'", RUN),
    ("git stash list", RUN),
    ("git remote -v", RUN),
    ("git config --get user.name", RUN),
    ("git help log", RUN),
    ("git help -w log", ASK),
    # Abbreviated, or through git's `--help` rewriting (`git CMD --help ARGS` is `git help
    # CMD ARGS`, and so is `git --help ARGS`): the same viewers.
    ("git help --we log", ASK),
    ("git help --inf log", ASK),
    ("git --help -w status", ASK),
    ("git --help -i status", ASK),
    ("git log --help -w", ASK),
    ("git log --help", RUN),
    ("git help -a", RUN),
    ("git log -w", RUN),
    # `stash list` takes log's options, `stash show` diff's.
    ("git stash list --output=" + OUT + "/x", REFUSE),
    ("git stash show --out=.git/x", REFUSE),
    ("git stash show --ext-diff", ASK),
    ("git stash list -p", RUN),
    ("git branch new-branch", ASK),
    ("git tag v1.0", ASK),
    ("git config user.name x", ASK),
    ("true", RUN),
    ("false", RUN),
    ("cat x 2>/dev/null || true", RUN),
    ("ls -d .*", RUN),
    ("less a.txt", RUN),
    ("more src/main.py", RUN),
    ("less -o log.txt a.txt", ASK),
    ("echo $PATH", RUN),
    ("echo $HOME $LANG ${TMPDIR}", RUN),
    ('echo "${X:-default}"', RUN),
    ("cat $TMPDIR/scratch", RUN),
    ("command -v git", RUN),
    ("env", RUN),
    ("tail -f a.txt &", RUN),
    ("[ -d src ] && echo dir", RUN),
    ("[[ -f a.txt && $LANG == C* ]]", RUN),
    ("[ -f " + OUT + "/secret.txt ] && echo there", REFUSE),
    ("[[ a.txt -nt " + OUT + "/secret.txt ]]", REFUSE),
    ('[ "$(id)" = x ]', ASK),
]


@pytest.mark.parametrize(("command", "expected"), ATTACKS, ids=[c[:80] for c, _ in ATTACKS])
def test_attack_table(world, command, expected):
    command = command.replace(OUT, str(world["outside"]))
    verdict = verdict_of(world, command)
    assert verdict.action == expected, (verdict.reason, verdict.parts)
    assert verdict.reason


def test_without_the_sandbox_variables_are_still_refused(world):
    plain = classify("echo $PATH", world["repo"], world["repo"])
    assert plain.action == REFUSE and "$PATH" in plain.reason


def test_a_variable_the_command_sets_is_not_taken_from_the_environment(world):
    verdict = verdict_of(world, "HOME=/etc; cat $HOME/passwd")
    assert verdict.action == ASK
    assert "HOME" in assigned_names("HOME=/etc; cat $HOME/passwd")
    assert "HOME" not in assigned_names("cat $HOME/x ${HOME}")


def test_cd_then_pwd_is_not_guessed(world):
    assert verdict_of(world, "cd src && cat $PWD/main.py").action == ASK
    assert verdict_of(world, "cat $PWD/a.txt").action == RUN


def test_pagers_run_as_cat(world):
    verdict = verdict_of(world, "less -N a.txt")
    assert verdict.argv == ["cat", "--", "a.txt"] and verdict.display_as == "cat a.txt"


def test_nested_repository_detection(world):
    repo = world["repo"]
    assert foreign_repository(repo, repo) is None
    assert foreign_repository(repo / "src", repo) is None
    assert foreign_repository(repo / "evil.git", repo) == repo / "evil.git"
    assert foreign_repository(repo / "vendor" / "lib", repo) == repo / "vendor" / "lib"


# ---------------------------------------------------------------- the pieces


@pytest.mark.parametrize(
    ("pattern", "name", "hit"),
    [
        ("lin[[:alpha:]]", "link", True),
        ("lin[[:digit:]]", "link", False),
        ("[!a]*", "bcd", True),
        ("[^a]*", "abc", False),
        ("[]]", "]", True),
        ("[a-]", "-", True),
        ("\\*", "*", True),
        ("\\*", "x", False),
        ("*.py", "a.py", True),
        ("?", "ab", False),
        ("[[:upper:]][[:lower:]]*", "Readme", True),
        ("[[:space:]]", " ", True),
        ("[", "[", True),  # an unclosed bracket is a literal
    ],
)
def test_glob_component_matching(pattern, name, hit):
    assert globbing.matches(pattern, name) is hit


def test_glob_expansion_follows_bash(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.txt").write_text("")
    (tmp_path / ".hidden").write_text("")
    (tmp_path / "a.txt").write_text("")
    assert globbing.expand("*.txt", tmp_path) == ["a.txt"]
    assert globbing.expand("*/x.txt", tmp_path) == ["d/x.txt"]
    assert globbing.expand("nothing*", tmp_path) == ["nothing*"]  # no nullglob
    assert ".hidden" in globbing.expand(".*", tmp_path)
    assert ".hidden" not in globbing.expand("*", tmp_path)
    if globbing.bash_skips_dots():
        assert ".." not in globbing.expand(".*", tmp_path)
    with pytest.raises(globbing.GlobTooComplex):
        globbing.expand("@(a|b)", tmp_path)


def test_glob_expansion_agrees_with_bash(tmp_path):
    for name in ("alpha", "Beta", "gamma1", ".dot", "x-y"):
        (tmp_path / name).write_text("")
    for pattern in ("*", ".*", "[[:upper:]]*", "*[[:digit:]]", "[!ab]*", "?-?", "[a-c]*"):
        done = subprocess.run(
            ["bash", "-c", f"printf '%s\\n' {pattern}"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
            env={"LC_ALL": "C", "PATH": os.environ["PATH"]},
        )
        assert sorted(globbing.expand(pattern, tmp_path)) == sorted(done.stdout.split()), pattern


def test_brace_counting_without_expanding():
    assert brace_count("{a,b}{c,d}") == 4
    assert brace_count("{1..99}{1..99}{1..99}{1..99}", cap=10_000) == 10_001
    assert brace_count("x{a,{b,c}}") == 3
    assert brace_count("{}") == 1 and brace_count("{a}") == 1


def test_awk_tokens_keep_regexes_strings_and_comments_apart():
    kinds = [t.kind for t in tokenize('/#/ { x = "a\\"b" # c\n y = 4 / 2 }')]
    assert kinds[:2] == ["regex", "op"] and "string" in kinds and "number" in kinds
    assert analyse("{ x = 4 / 2 / 1 }").problem is None  # division, not a regex
    assert analyse('{ print "unterminated }').problem is not None


MORE: list[tuple[str, str]] = [
    ("echo ${CDPATH:=/} ; cd etc && cat hostname", ASK),
    ("echo ${X:=" + OUT + "} ; cat $X/secret.txt", ASK),
    ("git show HEAD:.env", ASK),
    ("git diff -- .env", ASK),
    ("git log -p -- config/prod.env", ASK),
    ("rg -g .env KEY", ASK),
    ("rg --glob '*' KEY", ASK),
    ("rg KEY", ASK),  # rg skips the hidden .env but reads config/prod.env
    ("rg KEY src", RUN),
    ("cat config/prod.env", ASK),
]


@pytest.mark.parametrize(("command", "expected"), MORE, ids=[c[:80] for c, _ in MORE])
def test_more_variants(world, command, expected):
    (world["repo"] / "config").mkdir(exist_ok=True)
    (world["repo"] / "config" / "prod.env").write_text("KEY=x\n")
    command = command.replace(OUT, str(world["outside"]))
    verdict = verdict_of(world, command)
    assert verdict.action == expected, (verdict.reason, verdict.parts)


def test_unquoted_values_that_bash_would_split_or_glob_are_not_guessed(world):
    env = dict(context(world).environment or {})
    env["LANG"] = "a.txt " + str(world["outside"]) + "/secret.txt"
    env["LC_ALL"] = "lin*/secret.txt"
    ctx = PolicyContext(environment=env, private_dir=world["private"])
    for command in ("cat $LANG", "cat $LC_ALL", "cat ${LANG}"):
        assert classify(command, world["repo"], world["repo"], ctx).action == ASK, command
    # Quoted, the value is one word and is not globbed: a (missing) file inside the repo.
    assert classify('cat "$LC_ALL"', world["repo"], world["repo"], ctx).action == RUN
    assert classify("echo $LANG", world["repo"], world["repo"], ctx).action == RUN


@pytest.fixture
def keys_world(tmp_path) -> dict[str, Path]:
    """Keys where a name check alone misses them: behind a link, and in a visible `*.env`."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".env").write_text("SERVICE_TOKEN=sk-linked\n")
    (repo / "notes.txt").symlink_to(".env")
    (repo / "deploy").mkdir()
    (repo / "deploy" / "config.env").write_text("SERVICE_TOKEN=sk-visible\n")
    (repo / "src" / "main.py").write_text("print('hi')\n")
    (repo / "a.txt").write_text("hello\n")
    private = tmp_path / "private"
    (private / "home").mkdir(parents=True)
    (private / "tmp").mkdir()
    return {"repo": repo.resolve(), "private": private.resolve()}


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat notes.txt", ASK),
        ("sed -n p notes.txt", ASK),
        ("sort notes.txt", ASK),
        ("grep TOKEN notes.txt", ASK),
        ("rg TOKEN", ASK),  # rg skips `.env` (hidden) but reads deploy/config.env
        ("rg TOKEN deploy", ASK),
        ("rg --hidden -g '!deploy' TOKEN", ASK),
        ("rg TOKEN src", RUN),
        ("cat a.txt src/main.py", RUN),
        ("ls -la", RUN),
    ],
)
def test_keys_behind_links_and_in_visible_env_files_ask(keys_world, command, expected):
    found = verdict_of(keys_world, command)
    assert found.action == expected, found.reason


@pytest.mark.parametrize(
    ("ignore_file", "where", "line"),
    [
        (".gitignore", "", "!.env"),
        (".ignore", "", "!.env*"),
        (".rgignore", "src", "!.hidden/"),
        ("info/exclude", ".git", "!.env"),
    ],
)
def test_rg_asks_when_an_ignore_file_whitelists_dotfiles(keys_world, ignore_file, where, line):
    """rg skips dotfiles, except those a `!` line of an ignore file whitelists: a committed
    `.gitignore` with `!.env` makes `rg TOKEN` print `.env`."""
    repo = keys_world["repo"]
    os.unlink(repo / "deploy" / "config.env")
    os.unlink(repo / "notes.txt")
    if where == "src":
        (repo / "src" / ".hidden").mkdir()
        (repo / "src" / ".hidden" / "app.env").write_text("SERVICE_TOKEN=sk-deep\n")
    assert verdict_of(keys_world, "rg TOKEN").action == RUN
    target = repo / where / ignore_file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(line + "\n")
    rg = shutil.which("rg")
    if rg is not None:  # rg itself prints the key
        done = subprocess.run([rg, "TOKEN"], cwd=repo, capture_output=True, text=True, check=False)
        assert "sk-" in done.stdout
    assert verdict_of(keys_world, "rg TOKEN").action == ASK
    if where == "src":
        assert verdict_of(keys_world, "rg TOKEN src").action == ASK
    else:  # whitelisted above the folder searched
        (repo / "src" / ".env").write_text("SERVICE_TOKEN=sk-below\n")
        assert verdict_of(keys_world, "rg TOKEN src").action == ASK
    assert verdict_of(keys_world, "rg -L TOKEN").action == ASK
    assert (
        verdict_of(keys_world, f"rg --ignore-file {target.relative_to(repo)} TOKEN").action == ASK
    )


def test_rg_with_only_ignoring_ignore_files_keeps_running(keys_world):
    repo = keys_world["repo"]
    os.unlink(repo / "deploy" / "config.env")
    os.unlink(repo / "notes.txt")
    (repo / ".gitignore").write_text("build/\n*.log\n# !not a rule\n")
    assert verdict_of(keys_world, "rg TOKEN").action == RUN


def test_a_walk_reused_from_an_unchanged_tree_still_sees_a_new_env_file(keys_world):
    repo = keys_world["repo"]
    os.unlink(repo / "deploy" / "config.env")
    long_ago = time.time() - 60
    for folder in [repo, *(p for p in repo.rglob("*") if p.is_dir())]:
        os.utime(folder, (long_ago, long_ago))  # old enough to be kept (not racy)
    assert verdict_of(keys_world, "rg TOKEN").action == RUN
    assert verdict_of(keys_world, "rg TOKEN").action == RUN  # from the kept listings
    (repo / "src" / "local.env").write_text("SERVICE_TOKEN=sk-new\n")
    assert verdict_of(keys_world, "rg TOKEN").action == ASK  # its folder changed
    os.unlink(repo / "src" / "local.env")
    (repo / "src" / "app.env").write_text("SERVICE_TOKEN=sk-again\n")  # within one tick
    assert verdict_of(keys_world, "rg TOKEN").action == ASK


def test_a_folder_changed_a_moment_ago_is_read_again_each_time(tmp_path):
    from hello_tui.tools.shell import folder_listings

    (tmp_path / "a").write_text("x")
    assert folder_listings.listing(str(tmp_path))[0] == ["a"]
    assert str(tmp_path) not in folder_listings._cache  # racy: changed just now
    (tmp_path / "b").write_text("y")
    os.utime(tmp_path, ns=(time.time_ns(), time.time_ns() - 10**10))
    assert sorted(folder_listings.listing(str(tmp_path))[0]) == ["a", "b"]
    assert str(tmp_path) in folder_listings._cache


@pytest.mark.parametrize(
    ("name", "command"),
    [
        (".env~", "cat .env~"),  # an editor's backup
        ("#.env#", "cat '#.env#'"),  # an autosave
        ("deploy/prod.env.bak", "rg TOKEN"),  # a copy rg reads (not hidden)
        ("deploy/prod.env~", "grep -r TOKEN deploy"),
        (".env-local", "head .env-local"),
    ],
)
def test_copies_of_env_files_hold_the_same_keys(keys_world, name, command):
    repo = keys_world["repo"]
    os.unlink(repo / "deploy" / "config.env")
    (repo / name).write_text("SERVICE_TOKEN=sk-copy\n")
    assert verdict_of(keys_world, command).action == ASK


async def test_a_removed_backup_of_an_env_file_in_the_history_counts(tmp_path):
    from tests.tools.test_git_drivers import git, terminal
    from tests.tools.test_git_env_files import plain_repo

    repo = plain_repo(tmp_path / "repo")
    (repo / ".env~").write_text("SERVICE_TOKEN=sk-backup\n")
    git(repo, "add", ".env~")
    git(repo, "commit", "-qm", "oops")
    git(repo, "rm", "-q", ".env~")
    git(repo, "commit", "-qm", "drop")
    result, approver = await terminal(repo, "git log -p")
    assert approver.asked and ".env~" in approver.asked[0][1]
    assert "sk-backup" not in result.text


def test_a_tree_too_large_to_look_through_asks(keys_world, monkeypatch):
    """Past its budget the env-file walk has not seen every name: `deploy/config.env` may be
    among the rest, and rg and grep -r would read it."""
    from hello_tui.tools.shell import policy

    repo = keys_world["repo"]
    os.unlink(repo / ".env")
    os.unlink(repo / "notes.txt")
    (repo / "aaa").mkdir()
    for n in range(60):
        (repo / "aaa" / f"f{n}").write_text("")
    monkeypatch.setattr(policy, "MAX_NAME_WALK_ENTRIES", 50)
    for command in ("rg TOKEN", "grep -r TOKEN ."):
        found = verdict_of(keys_world, command)
        assert found.action == ASK and "too many files" in found.reason, found.reason
    assert verdict_of(keys_world, "rg TOKEN src").action == RUN
