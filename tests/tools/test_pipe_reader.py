"""The output reader: flush() reads what a finished command left, and its end, at once."""

from __future__ import annotations

import asyncio
import os

from hello_tui.tools.shell.pipe_reader import PipeReader, widen


async def _reader(read_fd: int) -> tuple[PipeReader, list[bytes], asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    got: list[bytes] = []
    pipe = os.fdopen(read_fd, "rb", buffering=0)  # the transport closes it
    transport, reader = await loop.connect_read_pipe(
        lambda: PipeReader(got.append, widen(read_fd), loop), pipe
    )
    return reader, got, transport


async def test_flush_reads_to_the_end_at_once_when_the_reader_is_not_resting():
    read_fd, write_fd = os.pipe()
    reader, got, transport = await _reader(read_fd)
    os.write(write_fd, b"all of it\n")
    os.close(write_fd)
    reader.flush()  # no turn of the loop in between
    assert b"".join(got) == b"all of it\n"
    assert reader.done.done()
    transport.close()


async def test_flush_after_a_rest_reads_what_came_meanwhile_and_the_end():
    read_fd, write_fd = os.pipe()
    reader, got, transport = await _reader(read_fd)
    os.write(write_fd, b"first\n")
    for _ in range(100):  # the first short read puts the reader to rest
        if got:
            break
        await asyncio.sleep(0.001)
    os.write(write_fd, b"second\n")
    os.close(write_fd)
    reader.flush()
    assert b"".join(got) == b"first\nsecond\n"
    assert reader.done.done()
    transport.close()


async def test_flush_leaves_a_pipe_still_held_open_to_the_loop():
    read_fd, write_fd = os.pipe()
    reader, got, transport = await _reader(read_fd)
    os.write(write_fd, b"early\n")
    reader.flush()
    assert b"".join(got) == b"early\n" and not reader.done.done()
    os.write(write_fd, b"late\n")  # a background job still writes
    os.close(write_fd)
    await asyncio.wait_for(reader.done, 5)
    assert b"".join(got) == b"early\nlate\n"
    transport.close()


def test_a_capture_keeps_head_and_tail_and_says_what_it_left_out():
    from hello_tui.tools.shell.processes import OutputCapture

    small = OutputCapture(limit=16)
    small.add("héllo".encode())
    assert small.text() == "héllo" and small.data() == "héllo".encode()
    whole = OutputCapture(limit=16)
    whole.add(b"0123456789")  # past the head's half, all kept
    assert whole.text() == "0123456789" and whole.dropped == 0
    flooded = OutputCapture(limit=16)
    for _ in range(10):
        flooded.add(b"abcdefgh")
    assert flooded.dropped > 0 and flooded.text().startswith("abcdefgh\n[… ")
    assert flooded.text().endswith("bytes not kept …]\n" + flooded.tail.decode())
