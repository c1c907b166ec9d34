"""`hello-tui exec` prints text, never terminal control: the bytes that reach stdout and stderr."""

from __future__ import annotations

import json
import re

from tests.engine.test_exec import cli
from tests.support.scripted_model import call, text, tool_calls

ATTACK = (
    "clipboard \x1b]52;c;cm0gLXJmIH4=\x07 title \x1b]0;owned\x07 "
    "link \x1b]8;;https://evil.example\x1b\\here\x1b]8;;\x1b\\ clear \x1b[2J "
    "csi8 \x9b2J over\rwritten \u202eevil"
)
# What a terminal would act on: ESC, BEL, any other C0 but tab/newline, DEL, C1, bidi controls.
OBEYED = re.compile(
    rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]"
)


def _bytes(text_out: str) -> bytes:
    return text_out.encode("utf-8", "surrogateescape")


def test_the_answer_and_a_commands_output_reach_the_terminal_as_text(tmp_path, scripted_server):
    (tmp_path / "evil.txt").write_text(ATTACK + "\n")
    server = scripted_server(
        [
            tool_calls([call("terminal", {"command": "cat evil.txt missing.txt"})]),
            text("The answer: " + ATTACK),
        ]
    )
    proc = cli(tmp_path, "look", server=server)
    assert proc.returncode == 0, proc.stderr
    out, err = _bytes(proc.stdout), _bytes(proc.stderr)
    assert OBEYED.search(out) is None, out
    assert OBEYED.search(err) is None, err
    shown = (
        "clipboard ␛]52;c;cm0gLXJmIH4=␇ title ␛]0;owned␇ link ␛]8;;https://evil.example␛\\here"
        "␛]8;;␛\\ clear ␛[2J csi8 \\x9b2J over\nwritten <U+202E>evil"
    )
    assert proc.stdout == "The answer: " + shown + "\n"
    # The command failed (one file is missing), so exec shows its output on stderr.
    assert "clipboard ␛]52;c;cm0gLXJmIH4=␇" in proc.stderr


def test_json_lines_escape_what_a_terminal_would_obey_and_keep_the_values(
    tmp_path, scripted_server
):
    server = scripted_server([text(ATTACK)])
    proc = cli(tmp_path, "--json", "look", server=server)
    assert proc.returncode == 0, proc.stderr
    assert OBEYED.search(_bytes(proc.stdout)) is None
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events[-1]["type"] == "TurnFinished"
    assert events[-1]["answer"] == ATTACK  # the data is exact; only its spelling is escaped
