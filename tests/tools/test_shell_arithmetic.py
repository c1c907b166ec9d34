"""bash evaluates arithmetic, and `$( )` in array subscripts, in more places than it seems.

Every form in ATTACKS is first run by real bash to show that it does run
the command hidden in it (the canary file appears), then judged by the
policy, which must ask. The SAFE forms must keep running unasked.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from hello_tui.tools.shell.policy import PolicyContext, classify

CANARY = "canary"  # made in the repo, so no path check is what stops the command
RUN_IT = f"$(touch {CANARY})"

# Forms in which bash runs RUN_IT (checked below against real bash).
ATTACKS = [
    f"[[ 'a[{RUN_IT}]' -eq 1 ]]",
    f"[[ 1 -lt 'a[{RUN_IT}]' ]]",
    f"[[ -v 'a[{RUN_IT}]' ]]",
    f"[ -v 'a[{RUN_IT}]' ]",
    f"test -v 'a[{RUN_IT}]'",
    f"echo ${{a['{RUN_IT}']}}",
    f"x=abc; echo ${{x:'a[{RUN_IT}]'}}",
    f"echo ${{@:'a[{RUN_IT}]'}}",
    f"echo hi {{a[{RUN_IT}]}}>/dev/null",
    f"[[ 'a[{RUN_IT}]' =~ .* ]]; echo ${{!BASH_REMATCH}}",
    f"[[ 'a[{RUN_IT}]' =~ .* ]] && [[ BASH_REMATCH -eq 1 ]]",
    f"echo $(( 'a[{RUN_IT}]' ))",
    f"(( 'a[{RUN_IT}]' ))",
    f"let 'x=a[{RUN_IT}]'",
    f"printf -v 'a[{RUN_IT}]' x",
    f"declare -i x='a[{RUN_IT}]'",
    # Backquotes in an expansion's words run, though tree-sitter leaves them as text there.
    f"echo ${{UNSET:-`touch {CANARY}`}}",
    f"echo \"${{UNSET:-'`touch {CANARY}`'}}\"",
    f"echo ${{PWD/#/`touch {CANARY}`}}",
    f"echo ${{PWD#`touch {CANARY}`}}",
    f"cat ${{UNSET:-<(touch {CANARY})}}",  # cat waits for the end of its output
    # Prompt expansion (`@P`) runs the substitutions in a value, wherever the value came from.
    f"x='{RUN_IT}'; echo ${{x@P}}",
    f"x='{RUN_IT}'; printf %s \"${{x@P}}\"",
    f"a=('{RUN_IT}'); echo ${{a[0]@P}}",
]
# bash wants integers here, so nothing runs; the policy asks all the same.
CAUTIOUS = [
    f"[ 'a[{RUN_IT}]' -eq 1 ]",
    f"test 1 -ne 'a[{RUN_IT}]'",
    "[[ x -eq 1 ]]",  # x's value is evaluated, and x could be anything the command set
    "echo ${a[i]}",
    "echo ${x:i:2}",
    "[[ -v a[i] ]]",
    "echo ${!LANG}",
    "[[ $VALUE -gt 1 ]]",  # the environment's value is itself a subscript
    "read -a x",
]
SAFE = [
    "[[ 1 -eq 1 ]]",
    "[[ $N -gt 2 ]]",
    "[[ $? -eq 0 && $# -eq 0 ]]",
    "[[ -v N ]]",
    "[[ -v a[1] ]]",
    "[ -f a.txt ]",
    "test 2 -ge 1",
    "echo ${a[0]} ${a[@]} ${#a[*]} ${x:1:2} ${x: -1} ${!p*}",
    "echo hi {fd}>/dev/null",
    "echo ${x:-y} ${x#y} ${x/a/b}",
    'echo ${x@Q} ${x@U} "${x@E}" ${!p@}',
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    return root.resolve()


def verdict(repo: Path, command: str) -> tuple[str, str]:
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "N": "3", "VALUE": "a[1]"}
    found = classify(command, repo, repo, PolicyContext(environment=env))
    return found.action, found.reason


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("form", ATTACKS)
def test_bash_runs_the_hidden_command_and_the_policy_asks(repo, form):
    action, reason = verdict(repo, form)
    assert action == "ask", reason
    subprocess.run(["bash", "-c", form], cwd=repo, capture_output=True, timeout=30, check=False)
    assert (repo / CANARY).exists(), f"bash did not run the hidden command in {form}"


@pytest.mark.parametrize("form", CAUTIOUS)
def test_arithmetic_on_unknown_text_asks(repo, form):
    action, reason = verdict(repo, form)
    assert action == "ask", reason


@pytest.mark.parametrize("form", SAFE)
def test_integers_and_known_names_still_run(repo, form):
    action, reason = verdict(repo, form)
    assert action == "run", reason


def test_the_reason_says_it_is_arithmetic(repo):
    _, reason = verdict(repo, f"[[ 'a[{RUN_IT}]' -eq 1 ]]")
    assert "arithmetic" in reason


@pytest.mark.parametrize(
    ("text", "safe"),
    [
        ("1", True),
        (" 0x1F + 8#17 - 64#_@ ", True),
        ("1 == 2 ? 3 : 4", True),
        ("N * 2", True),
        ("a[1]", False),
        ("$(id)", False),
        ("`id`", False),
        ("x = 1", False),
        ("x++", False),
        ("LOOP", False),  # its value names itself: too deep to follow
        ("UNKNOWN", False),
    ],
)
def test_expression_rule(text, safe):
    from hello_tui.tools.shell.arithmetic import expression_problem

    values = {"N": "3", "LOOP": "LOOP"}
    assert (expression_problem(text, values.get) is None) == safe


@pytest.mark.parametrize(
    ("text", "safe"),
    [("x", True), ("a[1]", True), ("a[@]", True), ("a[$(id)]", False), ("a b", False)],
)
def test_variable_reference_rule(text, safe):
    from hello_tui.tools.shell.arithmetic import reference_problem

    assert (reference_problem(text, {}.get) is None) == safe


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_folder_named_as_a_command_is_not_run_by_printing_pwd_as_a_prompt(repo):
    folder = repo / RUN_IT
    folder.mkdir()
    form = f"cd '{RUN_IT}' && echo ${{PWD@P}}"
    action, reason = verdict(repo, form)
    assert action == "ask", reason
    subprocess.run(["bash", "-c", form], cwd=repo, capture_output=True, timeout=30, check=False)
    assert (folder / CANARY).exists(), "bash did not run the folder's name"
