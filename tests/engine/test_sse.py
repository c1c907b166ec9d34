"""The event-stream decoder: the WHATWG line and field rules, bounds, and the end of a stream."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hello_tui.llm.sse import EventTooLarge, ServerSentEvent, SSEDecoder, looks_like_event_stream


def decode(*pieces: bytes, limit: int = 1 << 20) -> list[ServerSentEvent]:
    decoder = SSEDecoder(limit)
    events: list[ServerSentEvent] = []
    for piece in pieces:
        events += decoder.feed(piece)
    return events + decoder.close()


def test_data_lines_join_with_newlines_and_a_blank_line_dispatches():
    events = decode(b"data: one\ndata:two\ndata:  three\n\ndata: next\n\n")
    assert events == [
        ServerSentEvent("message", "one\ntwo\n three"),
        ServerSentEvent("message", "next"),
    ]


def test_crlf_cr_and_lf_all_end_lines_even_split_across_pieces():
    events = decode(b"data: a\r", b"\ndata: b\r\r", b"data: c\n", b"\n")
    assert events == [ServerSentEvent("message", "a\nb"), ServerSentEvent("message", "c")]


def test_comments_ids_retry_and_unknown_fields_are_not_data():
    events = decode(b": keep-alive\nid: 7\nretry: 100\nfoo: bar\ndata: x\n\n")
    assert events == [ServerSentEvent("message", "x")]


def test_event_names_and_fields_without_a_colon():
    events = decode(b"event: error\ndata: {}\n\ndata\n\n")
    assert events == [ServerSentEvent("error", "{}"), ServerSentEvent("message", "")]


def test_an_event_with_no_data_is_not_dispatched():
    assert decode(b"event: ping\n\n: only a comment\n\n") == []


def test_a_leading_bom_is_dropped_once():
    assert decode(b"\xef\xbb\xbfdata: x\n\n") == [ServerSentEvent("message", "x")]


def test_a_whole_last_line_without_the_blank_line_still_counts():
    assert decode(b"data: {}\n\ndata: [DONE]\n") == [
        ServerSentEvent("message", "{}"),
        ServerSentEvent("message", "[DONE]"),
    ]


def test_a_line_cut_off_at_the_end_is_dropped_with_its_event():
    assert decode(b'data: {}\n\ndata: first half\ndata: {"cho') == [
        ServerSentEvent("message", "{}")
    ]


def test_a_line_longer_than_the_limit_raises():
    decoder = SSEDecoder(100)
    with pytest.raises(EventTooLarge):
        decoder.feed(b"data: " + b"x" * 200)


def test_an_event_of_many_lines_longer_than_the_limit_raises():
    decoder = SSEDecoder(100)
    with pytest.raises(EventTooLarge):
        for _ in range(30):
            decoder.feed(b"data: 0123456789\n")


def test_first_line_and_the_event_stream_shape():
    decoder = SSEDecoder(1000)
    decoder.feed(b"\n\n<!DOCTYPE html>\n<html>")
    assert decoder.first_line == "<!DOCTYPE html>"
    assert not looks_like_event_stream("<!DOCTYPE html>")
    assert not looks_like_event_stream('{"error": "x"}')
    assert not looks_like_event_stream("Hello, world")
    for line in ("data: {}", "data", ": comment", "event: x", "id: 1", "retry: 5", "\ufeffdata:"):
        assert looks_like_event_stream(line), line


def test_a_body_without_line_breaks_is_sniffed_after_a_few_kilobytes():
    decoder = SSEDecoder(1 << 20)
    decoder.feed(b"<html>" + b"x" * 5000)
    assert decoder.first_line is not None and decoder.first_line.startswith("<html>")


@given(
    st.lists(
        st.text(
            alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)),
            max_size=20,
        ),
        max_size=8,
    ),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=20),
    st.sampled_from([b"\n", b"\r\n", b"\r"]),
)
def test_any_split_of_the_bytes_gives_the_same_events(datas, cuts, newline):
    body = b"".join(b"data:" + d.encode() + newline + newline for d in datas)
    whole = decode(body)
    pieces, pos = [], 0
    for cut in cuts * (len(body) // max(1, sum(cuts)) + 1):
        if pos >= len(body):
            break
        pieces.append(body[pos : pos + cut])
        pos += cut
    assert decode(*pieces) == whole
    assert [e.data for e in whole] == [d.removeprefix(" ") for d in datas]
