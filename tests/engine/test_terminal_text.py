"""core.terminal_text: what a terminal would obey is shown as text, whatever the chunking."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hello_tui.core import events as ev
from hello_tui.core.terminal_text import SafeTextStream, safe_event, safe_json, safe_text

# Anything a terminal acts on: C0 but tab and newline, DEL, C1, bidi overrides and isolates.
OBEYED = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

CASES = [
    ("plain text\twith a tab\nand lines", "plain text\twith a tab\nand lines"),
    ("clip\x1b]52;c;aGk=\x07board", "clip␛]52;c;aGk=␇board"),
    ("\x1b]0;owned\x1b\\title", "␛]0;owned␛\\title"),
    ("\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "␛]8;;http://evil␛\\click␛]8;;␛\\"),
    ("before\x1b[2Jafter", "before␛[2Jafter"),
    ("\x1b[31mred\x1b[0m and \x1b[1;38;5;9mbold\x1b[m", "red and bold"),
    ("eight-bit \x9b2J csi", "eight-bit \\x9b2J csi"),
    ("c1 \x85 next line, \x90dcs", "c1 \\x85 next line, \\x90dcs"),
    ("windows\r\nline", "windows\nline"),
    ("progress 10%\rrm -rf shown", "progress 10%\nrm -rf shown"),
    ("back\x08\x08space and bell\x07", "back␈␈space and bell␇"),
    ("del\x7f nul\x00", "del␡ nul␀"),
    ("abc\u202edcba\u202c \u2066iso\u2069", "abc<U+202E>dcba<U+202C> <U+2066>iso<U+2069>"),
    ("marks stay: \u200f\u200e", "marks stay: \u200f\u200e"),
    ("unicode stays: é ü 日本 🎉", "unicode stays: é ü 日本 🎉"),
]


@pytest.mark.parametrize(("raw", "shown"), CASES)
def test_safe_text(raw: str, shown: str) -> None:
    assert safe_text(raw) == shown
    assert OBEYED.search(safe_text(raw)) is None


@given(st.text(alphabet=st.sampled_from("ab\n\t\r\x1b[]0;m2J\x07\x9b\u202e\x00\x7f")), st.data())
def test_streamed_pieces_are_safe_and_show_the_whole(text: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    stream = SafeTextStream()
    shown = [stream.feed(piece) for piece in pieces] + [stream.flush()]
    for piece in shown:
        assert OBEYED.search(piece) is None
    assert "".join(shown) == safe_text(text)


@given(st.text())
def test_safe_json_keeps_every_value_and_no_raw_control(text: str) -> None:
    line = safe_json(json.dumps({"text": text, "list": [text]}, ensure_ascii=False))
    assert json.loads(line) == {"text": text, "list": [text]}
    assert OBEYED.search(line) is None


def test_safe_event_cleans_text_fields_and_nested_arguments() -> None:
    started = ev.ToolCallStarted(
        step=1, call_id="c1", tool="terminal", arguments={"command": "echo \x1b]0;x\x07"}
    )
    safe = safe_event(started)
    assert safe.arguments == {"command": "echo ␛]0;x␇"}
    assert safe.ts == started.ts and safe.call_id == "c1"
    finished = ev.ToolCallFinished(
        step=1,
        call_id="c1",
        tool="t",
        status="success",
        text="\x9b2J",
        model_text="ok",
        duration=0.1,
        data={"raw": "\x1b"},
    )
    cleaned = safe_event(finished)
    assert cleaned.text == "\\x9b2J" and cleaned.data == {"raw": "\x1b"}  # data is not shown
    plain = ev.AssistantDelta(text="nothing to clean")
    assert safe_event(plain) is plain
