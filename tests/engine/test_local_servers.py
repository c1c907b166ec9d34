"""Probing local OpenAI-compatible servers: real HTTP on 127.0.0.1 (the scripted model
server), a closed port, a server that wants a key and one that is not a model server."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

from hello_tui.llm.local_servers import probe, probe_local_servers


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_model_server_answers_with_its_models(scripted_server):
    server = scripted_server([], models=["qwen2.5-coder:7b", "llama3.2"])
    found = probe(server.port, "Ollama")
    assert found.answered and not found.needs_key
    assert found.base_url == f"http://127.0.0.1:{server.port}/v1"
    assert found.models == ["qwen2.5-coder:7b", "llama3.2"]
    assert found.describe() == f"Ollama at {found.base_url}: qwen2.5-coder:7b, llama3.2"


def test_a_server_that_wants_a_key_is_found_and_says_so(scripted_server):
    server = scripted_server([], api_key="sk-local")
    found = probe(server.port, "vLLM")
    assert found.answered and found.needs_key and found.models == []
    assert "wants a key" in found.describe()


def test_nothing_listening_is_said_plainly():
    port = closed_port()
    found = probe(port, "LM Studio")
    assert not found.answered
    assert found.error == "nothing listening"


class NotAModelServer(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<html>hello</html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_a_web_page_is_not_a_model_list():
    httpd = HTTPServer(("127.0.0.1", 0), NotAModelServer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        found = probe(httpd.server_address[1], "llama.cpp")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert not found.answered and "not with a model list" in found.error


def test_every_port_is_asked_and_the_order_is_kept(scripted_server):
    server = scripted_server([], models=["m"])
    silent = closed_port()
    results = probe_local_servers(((silent, "llama.cpp"), (server.port, "Ollama")))
    assert [(r.port, r.answered) for r in results] == [(silent, False), (server.port, True)]
