"""The terminal policy, command by command: run / ask / refuse, and why."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hello_tui.tools.shell.awk import analyse as analyse_awk
from hello_tui.tools.shell.parse import brace_expand, instrument
from hello_tui.tools.shell.policy import classify
from hello_tui.tools.shell.programs import sed_script_problem


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("policy")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    root = base / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "a.txt").write_text("hello\n")
    (root / "my file.txt").write_text("spaces\n")
    (root / "中文.txt").write_text("你好\n")
    (root / "src" / "main.py").write_text("print('hi')\n")
    os.symlink(outside / "secret.txt", root / "leak.txt")
    os.symlink(outside, root / "leakdir")
    os.symlink(root / "a.txt", root / "inner_link.txt")
    return root.resolve()


RUN, ASK, REFUSE = "run", "ask", "refuse"

# (command, expected verdict) in the style of match / not-match examples.
TABLE: list[tuple[str, str]] = [
    # --- read-only programs, used read-only, inside the repo
    ("ls", RUN),
    ("ls -la src", RUN),
    ("tree src", RUN),
    ("cat a.txt", RUN),
    ("head -n 5 a.txt", RUN),
    ("tail -5 a.txt", RUN),
    ("wc -l a.txt src/*", RUN),
    ("sort a.txt | uniq -c | sort -rn | head", RUN),
    ("cut -d/ -f1 a.txt", RUN),
    ("tr / _", RUN),
    ("grep -rn hello .", RUN),
    ("egrep 'a|b' a.txt", RUN),
    ("fgrep -i x a.txt", RUN),
    ("grep -r /etc .", RUN),  # /etc is the pattern, not a path
    ("grep -- -x a.txt", RUN),
    ("rg -e x -- -y", RUN),
    ("rg --files src", RUN),
    ("find . -name '*.py' -type f", RUN),
    ("sed -n '1,5p' a.txt", RUN),
    ("sed 's|a|b|g;s/x/y/' a.txt", RUN),
    ("sed -n '/start/,/end/p' a.txt", RUN),
    ("awk '{print $1}' a.txt", RUN),
    ("awk '$1 > 3' a.txt", RUN),
    ("awk -F, 'NR==1 || NR==2 {print $2}' a.txt", RUN),
    ("file a.txt", RUN),
    ("stat a.txt", RUN),
    ("du -sh .", RUN),
    ("pwd", RUN),
    ("echo /etc/passwd", RUN),  # echo reads nothing
    ("printf '%s\\n' x", RUN),
    ("which python", RUN),
    ("diff a.txt src/main.py", RUN),
    ("git status", RUN),
    ("git diff --stat", RUN),
    ("git log --oneline main..HEAD", RUN),
    ("git show HEAD~1:a.txt", RUN),
    ("git blame a.txt", RUN),
    ("git ls-files", RUN),
    ("git grep -n hello", RUN),
    ("git rev-parse --show-toplevel", RUN),
    ("git --no-pager log -n 3", RUN),
    ("git diff --no-ext-diff", RUN),
    ("cat .git/config", RUN),  # reading .git is fine
    ('cat "my file.txt"', RUN),
    ("cat my\\ file.txt", RUN),
    ("cat 中文.txt", RUN),
    ("cat inner_link.txt", RUN),
    ("ls > /dev/null 2>&1", RUN),
    ("cat a.txt 2>/dev/null | wc -l", RUN),
    ("ls 2>&1 | head", RUN),
    ("ls |& grep x", RUN),
    ("cat < a.txt", RUN),
    ("cat a.txt | less", RUN),  # a pager reading a pipe only copies it
    ("ls & cat a.txt", RUN),
    ("ls; pwd", RUN),
    ("ls\npwd", RUN),
    ("ls && pwd || echo no", RUN),
    ("ls # rm -rf /", RUN),
    ('echo "\\$(id)"', RUN),  # escaped: no substitution
    ("cd src", RUN),
    ("cd src && ls pkg", RUN),
    ("ls {a,inner_link}.txt", RUN),
    ("diff -r src src", RUN),  # diff follows links while recursing; src has none that leave
    ("less a.txt", RUN),  # no terminal to page on: it runs as cat
    ("more a.txt", RUN),
    # --- not read-only: the user decides
    ("sed -i s/a/b/ a.txt", ASK),
    ("sed -ni p a.txt", ASK),  # -i hidden in a cluster
    ("sed --in-pl s/a/b/ a.txt", ASK),  # abbreviated long option
    ("sed 's/a/b/w out.txt' a.txt", ASK),
    ("sed -e p -e 'w out.txt' a.txt", ASK),
    ("sed '1e id' a.txt", ASK),
    ("sed 's/a/id/e' a.txt", ASK),
    ("echo hi | sed 's/h/j/e'", ASK),
    ("awk 'BEGIN{system(\"id\")}'", ASK),
    ("awk '{print $1 > \"out.txt\"}' a.txt", ASK),
    ("awk '{print | \"sh\"}' a.txt", ASK),
    ("awk '\"id\" | getline x' a.txt", ASK),
    ("find . -exec rm {} \\;", ASK),
    ("find . -execdir ls \\;", ASK),
    ("find . -ok rm {} \\;", ASK),
    ("find . -delete", ASK),
    ("find . -fprint out.txt", ASK),
    ("find . -fprintf out.txt %p", ASK),
    ("sort -o out.txt a.txt", ASK),
    ("sort -uo out.txt a.txt", ASK),
    ("sort --out=out.txt a.txt", ASK),
    ("sort --compress-program=gzip a.txt", ASK),
    ("uniq a.txt out.txt", ASK),
    ("tree -o out.txt", ASK),
    ("tree --fromfile a.txt", ASK),
    ("tree --fromfile ../outside/secret.txt", REFUSE),
    ("tree --fromf leak.txt", REFUSE),
    ("tree -H . --hintro=a.txt", ASK),
    ("tree -H . --houtro ../outside/secret.txt", REFUSE),
    ("tree --infofile=leak.txt", REFUSE),
    ("tree --gitfile=../outside/secret.txt", REFUSE),
    ("rg --pre cat hello", ASK),
    ("rg --pre=cat hello", ASK),
    ("git -c core.pager=evil log", ASK),
    ("git -c diff.external=evil diff", ASK),
    ("git diff --output=out.txt", ASK),
    ("git diff --out=out.txt", ASK),
    ("git log --ext-diff", ASK),
    ("git log --alternate-refs", ASK),
    ("git log -p --alt", ASK),
    ("git show --alternate-refs HEAD", ASK),
    ("git log --all --oneline", RUN),
    ("git --paginate log", ASK),
    ("git grep -O hello", ASK),
    ("git commit -m 'fix'", ASK),
    ("git push", ASK),
    ("git checkout -- a.txt", ASK),
    ("tee out.txt", ASK),
    ("cat a.txt | tee out.txt", ASK),
    ("ls > out.txt", ASK),
    ("ls >> out.txt", ASK),
    ("ls &> out.txt", ASK),
    ("ls >| out.txt", ASK),
    ("echo hi 2>out.txt", ASK),
    ("echo > out.txt hi", ASK),
    ("echo $(id)", ASK),
    ("echo `id`", ASK),
    ('echo "$(id)"', ASK),
    ('echo "`id`"', ASK),
    ("cat <(ls)", ASK),
    ("diff <(ls) a.txt", ASK),
    ("xargs rm", ASK),
    ("find . -name '*.py' | xargs grep hello", ASK),
    ("env ls", ASK),
    ("nice ls", ASK),
    ("timeout 5 ls", ASK),
    ("nohup ls", ASK),
    ("command ls", ASK),
    ("exec ls", ASK),
    ("sh -c 'ls'", ASK),
    ("bash -c 'cat a.txt'", ASK),
    ("bash -lc 'ls'", ASK),
    ("python -c 'print(1)'", ASK),
    ("python3 script.py", ASK),
    ("node -e '1'", ASK),
    ("perl -e 'print 1'", ASK),
    ("ls; rm a.txt", ASK),
    ("ls && rm a.txt", ASK),
    ("ls || rm a.txt", ASK),
    ("ls\nrm a.txt", ASK),
    ("ls & rm a.txt", ASK),
    ("pytest -q", ASK),
    ("npm test", ASK),
    ("go test ./...", ASK),
    ("make", ASK),
    ("rm -rf src", ASK),
    ('mkdir "new dir"', ASK),
    ("touch 新文件.txt", ASK),
    ("./script.sh", ASK),
    ("FOO=1 ls", ASK),
    ("x=1", ASK),
    ("(cd src; ls)", ASK),
    ("for f in a b; do echo x; done", ASK),
    ("cat <<EOF > out.txt\nhi\nEOF", ASK),
    ('echo "unterminated', ASK),
    ("cat $'a.txt'", ASK),
    # --- refused, whoever approves
    ("sudo ls", REFUSE),
    ("su root", REFUSE),
    ("doas ls", REFUSE),
    ("env sudo ls", REFUSE),
    ("echo $(sudo id)", REFUSE),
    ("sh -c \"sh -c 'sudo x'\"", REFUSE),
    ("ls && sudo rm -rf /", REFUSE),
    ("cat ../x", REFUSE),
    ("cat ../outside/secret.txt", REFUSE),
    ("cat /etc/passwd", REFUSE),
    ("cat < /etc/passwd", REFUSE),
    ("ls /", REFUSE),
    ("ls ..", REFUSE),
    ("find / -name x", REFUSE),
    ("grep -r foo /etc", REFUSE),
    ("diff a.txt /etc/passwd", REFUSE),
    ("cat ~/.ssh/id_rsa", REFUSE),
    ("ls ~", REFUSE),
    ("cat $HOME/.bashrc", REFUSE),
    ("cat ${HOME}/x", REFUSE),
    ('cat "$HOME/x"', REFUSE),
    ("echo x >> ~/.bashrc", REFUSE),
    ("cp a.txt /tmp/", REFUSE),
    ("rm -rf /", REFUSE),
    ("pytest --basetemp=/tmp/x", REFUSE),
    ("bash -c 'cat /etc/passwd'", REFUSE),
    ("env -i PATH=/bin cat /etc/passwd", REFUSE),
    ("git -C .. status", REFUSE),
    ("git log -- ../", REFUSE),
    ("cat {a.txt,/etc/passwd}", REFUSE),
    ("cat /e*/passwd", REFUSE),
    ("{cat,/etc/passwd}", REFUSE),  # brace expansion as the command, unparsed
    ("c{a,}t /etc/passwd", REFUSE),
    ("cat /e'tc'/pa\"ss\"wd", REFUSE),
    ("c\\at /etc/passwd", REFUSE),
    ("rg -L hello", REFUSE),  # it would follow leakdir out of the repo
    ("grep -R hello .", REFUSE),
    ("sed 'r /etc/passwd' a.txt", REFUSE),
    ("cd ..", REFUSE),
    ("cd", REFUSE),
    ("cd -", REFUSE),
    ("cd src && cat ../../x", REFUSE),
    ("cat leak.txt", REFUSE),  # symlink inside the repo pointing outside
    ("cat leakdir/secret.txt", REFUSE),
    ("cat *", REFUSE),  # the glob reaches leak.txt
    ("/bin/cat a.txt", REFUSE),
    ("echo hi > .git/config", REFUSE),
    ("cat a.txt | tee .git/hooks/pre-commit", REFUSE),
    ("rm -rf .git", REFUSE),
    ("sed -i s/a/b/ .git/config", REFUSE),
    ("touch .git/x", REFUSE),
    ("cat a.txt > /dev/tty", REFUSE),
    ("vim a.txt", REFUSE),
    ("vi a.txt", REFUSE),
    ("nano a.txt", REFUSE),
    ("emacs a.txt", REFUSE),
    ("top", REFUSE),
    ("htop", REFUSE),
    ("ssh example.com", REFUSE),
    ("timeout 5 vim a.txt", REFUSE),
]


def test_table_is_large_and_covers_every_verdict():
    assert len(TABLE) >= 80
    assert {v for _, v in TABLE} == {RUN, ASK, REFUSE}
    assert len({c for c, _ in TABLE}) == len(TABLE)


@pytest.mark.parametrize(("command", "expected"), TABLE, ids=[c for c, _ in TABLE])
def test_policy_table(repo, command, expected):
    verdict = classify(command, repo, repo)
    assert verdict.action == expected, (verdict.reason, verdict.parts)
    assert verdict.reason


def test_strictest_part_wins_and_each_part_is_reported(repo):
    verdict = classify("ls; rm a.txt; sudo reboot", repo, repo)
    assert verdict.action == REFUSE
    by_action = {p.action for p in verdict.parts}
    assert by_action == {RUN, ASK, REFUSE}
    assert "sudo" in verdict.reason


def test_reasons_say_why(repo):
    assert "outside the repo" in classify("cat /etc/passwd", repo, repo).reason
    assert "symbolic link" in classify("cat leak.txt", repo, repo).reason
    assert ".git/" in classify("touch .git/x", repo, repo).reason
    assert "interactive terminal" in classify("vim a.txt", repo, repo).reason
    assert "sed -i" in classify("sed -i s/a/b/ a.txt", repo, repo).reason
    assert "$HOME" in classify("cat $HOME/x", repo, repo).reason


def test_paths_resolve_against_the_current_directory(repo):
    src = repo / "src"
    assert classify("cat ../a.txt", repo, src).action == RUN
    assert classify("cat ../../x", repo, src).action == REFUSE
    assert classify("cd .. && ls", repo, src).action == RUN
    assert classify("cd pkg && cat ../main.py", repo, src).action == RUN
    assert classify("cd pkg; cat ../../../x", repo, src).action == REFUSE
    # A part may run in any directory an earlier cd could leave it in (cd can fail):
    # the path must stay inside the repo from each of them.
    assert classify("cd pkg && cat ../../a.txt", repo, src).action == REFUSE


def test_simple_commands_get_an_argv_and_shell_syntax_does_not(repo):
    assert classify('cat "my file.txt"', repo, repo).argv == ["cat", "my file.txt"]
    assert classify("cat my\\ file.txt", repo, repo).argv == ["cat", "my file.txt"]
    assert classify("echo '$HOME'", repo, repo).argv == ["echo", "$HOME"]
    for needs_shell in ("ls *.txt", "ls | wc", "ls > /dev/null", "ls &", "FOO=1 ls", "ls ~x"):
        assert classify(needs_shell, repo, repo).argv is None, needs_shell


def test_leading_cd_is_reported_for_persistence(repo):
    alone = classify("cd src", repo, repo)
    assert alone.cd_only and alone.cd_target == repo / "src"
    chained = classify("cd src && ls", repo, repo)
    assert not chained.cd_only and chained.cd_target == repo / "src"
    assert classify("cd src; ls", repo, repo).cd_target == repo / "src"
    assert classify("cd src || ls", repo, repo).cd_target is None
    assert classify("ls && cd src", repo, repo).cd_target is None
    assert classify("cd ..", repo, repo).cd_target is None


def test_empty_command_is_refused(repo):
    assert classify("   ", repo, repo).action == REFUSE


# ------------------------------------------------------------- pieces


@pytest.mark.parametrize(
    ("script", "safe"),
    [
        ("p", True),
        ("1,5p", True),
        ("$!N;P;D", True),
        ("/a/,/b/{s/x/y/g;p}", True),
        ("s/[/]/x/g", True),
        ("y/abc/xyz/", True),
        ("1i\\\nheader", True),
        ("s/a/b/w f", False),
        ("s/a/b/gw f", False),
        ("s/a/b/e", False),
        ("w out", False),
        ("1e date", False),
        ("r /etc/passwd", True),  # a read: its file is judged as a path
        ("s/a/b", False),  # unterminated: not understood, not trusted
        # A label ends at a blank, `;`, newline, `#` or `}`; what follows is a command.
        (":a;N;$!ba;s/\\n/ /g", True),
        (":a\nN\n$!ba", True),
        ("/x/{:a;n;ba}", True),
        (":x;tx e echo hi", False),
        (":x;bx e echo hi", False),
        (":x;Tx\te echo hi", False),
        (":a e echo hi", False),
        (":  a e echo hi", False),
        ("s/a/b/;t e echo hi", False),
        (":a#c\ne echo hi", False),
        ("/x/{:a}e echo hi", False),
        ("ba x;:a", True),  # `x` exchanges the buffers
        ("ba w out;:a", False),
    ],
)
def test_sed_script_check(script, safe):
    assert (sed_script_problem(script) is None) is safe


# Each runs sed's `e` command in GNU sed itself: the rows above follow the real parser.
LABEL_THEN_COMMAND = [
    ":x;tx e echo ran",
    ":a e echo ran",
    ":a\te echo ran",
    ":a#c\ne echo ran",
    "{:a};e echo ran",
    "s/z/y/;tx e echo ran\n:x",
]


@pytest.mark.skipif(shutil.which("sed") is None, reason="needs sed")
@pytest.mark.parametrize("script", LABEL_THEN_COMMAND)
def test_a_command_after_a_sed_label_runs_in_real_sed_and_asks(repo, script):
    real = subprocess.run(
        ["sed", "-n", script, str(repo / "a.txt")],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    assert "ran" in real.stdout
    assert classify(f"sed -n {shlex.quote(script)} a.txt", repo, repo).action == ASK


@pytest.mark.parametrize(
    ("program", "safe"),
    [
        ("{print $1}", True),
        ("$3 > 100 {print}", True),
        ("{print ($1 > 2)}", True),
        ('{print "a>b"}', True),
        ("NR==1 || NR==2", True),
        ('BEGIN{system("id")}', False),
        ('{print > "f"}', False),
        ('{printf "%s", $1 >> "f"}', False),
        ('{print | "sort"}', False),
        ('"date" | getline d', False),
        ('{getline line < "/etc/passwd"}', False),
        ('@load "x"', False),
    ],
)
def test_awk_program_check(program, safe):
    assert (analyse_awk(program).problem is None) is safe


def test_brace_expansion():
    assert brace_expand("{a,b}/x") == ["a/x", "b/x"]
    assert brace_expand("f{1..3}") == ["f1", "f2", "f3"]
    assert brace_expand("{a,{b,c}}") == ["a", "b", "c"]
    assert brace_expand("plain") == ["plain"]
    assert brace_expand("{1..100000}") is None


def test_instrument_reports_each_pipeline_and_keeps_redirects_on_the_last_command(tmp_path):
    status = tmp_path / "status"
    inst = instrument("a | b && c | d > f; e", str(status))
    assert inst is not None
    assert inst.pipelines == [["a", "b"], ["c", "d"]]
    assert "d > f" in inst.script
    assert instrument("cat <<EOF\nx\nEOF", str(status)) is None
    assert instrument("(ls)", str(status)) is None


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab ;|&<>$`()'\"\\{}*~./\n-", max_size=30))
def test_classify_never_crashes_and_always_explains(tmp_path_factory, text):
    root = tmp_path_factory.getbasetemp() / "fuzzrepo"
    root.mkdir(exist_ok=True)
    verdict = classify(text, root, root)
    assert verdict.action in (RUN, ASK, REFUSE)
    assert verdict.reason
