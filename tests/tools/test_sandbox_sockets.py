"""A command reaches no one through a socket or a shared folder, asked or not.

Listeners outside the sandbox (an abstract unix socket, a unix socket in a
folder outside the repo, a TCP port on loopback) wait for a word from the
command, and the folders every process shares (`/dev/shm`, `/tmp`,
`/var/tmp`) are written to from inside it: an agent, an editor or the
user's own tools listen on such sockets, and a file left there is read by
whoever comes next.
"""

from __future__ import annotations

import os
import socket
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from tests.tools.test_sandbox_boundary import (
    FOUND,
    ROUTES,
    assert_contained,
    make_world,
    run_app,
    unique_marker,
)

pytestmark = pytest.mark.skipif(
    not FOUND.available or FOUND.landlock_abi < 6,
    reason="needs Landlock with abstract socket scoping (ABI 6, Linux 6.12+)",
)

ATTACK = textwrap.dedent(
    """
    import os, socket, sys
    abstract, path, port, shared = sys.argv[1:5]

    def say(sock):
        sock.settimeout(2)
        sock.sendall(b"reached")

    def unix(address):
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(address)
        say(sock)

    def tcp():
        say(socket.create_connection(("127.0.0.1", int(port)), timeout=2))

    def leave(folder):
        with open(os.path.join(folder, shared), "w") as out:
            out.write("left")

    tries = {
        "abstract": lambda: unix("\\0" + abstract),
        "path": lambda: unix(path),
        "tcp": tcp,
        **{folder: (lambda f=folder: leave(f)) for folder in ("/dev/shm", "/tmp", "/var/tmp")},
    }
    for label, attempt in tries.items():
        try:
            attempt()
            print(label, "DONE")
        except OSError as exc:
            print(label, "refused", exc.errno)
    print("attack done")
    """
)


def _listen(sock: socket.socket, heard: list[bytes]) -> None:
    sock.settimeout(15)
    try:
        peer, _ = sock.accept()
        peer.settimeout(2)
        heard.append(peer.recv(16))
    except OSError:
        pass


@pytest.mark.parametrize(("no_pid_namespace", "mode"), ROUTES)
def test_a_command_reaches_no_listener_and_leaves_nothing_in_shared_folders(
    tmp_path: Path, no_pid_namespace: bool, mode: str
):
    world = make_world(tmp_path)
    marker = f"hello-tui-probe-{unique_marker()}"
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0" + marker)
    by_path = socket.socket(socket.AF_UNIX)
    path = str(world["canary"].parent / "agent.sock")
    by_path.bind(path)
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    heard: list[bytes] = []
    listeners = [abstract, by_path, tcp]
    threads = []
    for sock in listeners:
        sock.listen(4)
        threads.append(threading.Thread(target=_listen, args=(sock, heard), daemon=True))
        threads[-1].start()
    left = [Path(folder) / marker for folder in ("/dev/shm", "/tmp", "/var/tmp")]
    try:
        seen = run_app(
            world,
            [sys.executable, "-c", ATTACK, marker, path, str(tcp.getsockname()[1]), marker],
            no_pid_namespace=no_pid_namespace,
            mode=mode,
        )
        assert seen["stdout"].endswith("attack done\n"), seen
        assert "DONE" not in seen["stdout"], seen["stdout"]
        for sock in listeners:
            sock.close()  # ends a listener still waiting: nothing came
        for thread in threads:
            thread.join(5)
        assert heard == []
        assert [p for p in left if os.path.lexists(p)] == []
        assert_contained(world, seen)
    finally:
        for sock in listeners:
            sock.close()
        for p in left:
            if os.path.lexists(p):
                os.unlink(p)
