"""hello-tui's own log: where it goes, its level, tracebacks of internal errors, and the
catch-all in the command line that prints one line instead of a traceback."""

from __future__ import annotations

import logging

import pytest

from hello_tui.cli import main
from hello_tui.config import load_settings
from hello_tui.core import logs
from hello_tui.core.events import TurnFailed
from hello_tui.tools.registry import ToolRegistry
from tests.engine.agent_kit import EchoTool, collect, open_engine
from tests.support.scripted_model import call, tool_calls


@pytest.fixture(autouse=True)
def _fresh_log():
    logs.reset()
    yield
    logs.reset()


def test_level_from_log_level_or_debug(tmp_path):
    assert load_settings(tmp_path, environ={"LOG_LEVEL": "info"}).log_level == "INFO"
    settings = load_settings(tmp_path, debug=True, environ={})
    path = logs.configure(settings)
    assert path == tmp_path / ".helloagents" / "logs" / "hello-tui.log"
    assert logging.getLogger("hello_tui").level == logging.DEBUG
    assert not path.exists()  # nothing is created until something is logged
    logging.getLogger("hello_tui.test").debug("a debug line")
    assert "a debug line" in path.read_text()
    # It rotates: a log past its size limit moves to hello-tui.log.1 and starts again.
    for _ in range(logs.MAX_BYTES // 1000 + 10):
        logging.getLogger("hello_tui.test").warning("x" * 1000)
    assert path.with_name("hello-tui.log.1").stat().st_size > logs.MAX_BYTES // 2
    assert path.stat().st_size < logs.MAX_BYTES
    logs.configure(load_settings(tmp_path, environ={}))
    assert logging.getLogger("hello_tui").level == logging.WARNING


class CrashingRegistry(ToolRegistry):
    async def run(self, name, raw_args, ctx):
        raise RuntimeError("the registry is broken")


async def test_an_internal_error_ends_the_turn_naming_the_log_and_logs_the_traceback(
    tmp_path, scripted_server, model_settings
):
    server = scripted_server([tool_calls([call("echo", {"text": "x"})])])
    settings = model_settings(tmp_path, server)
    path = logs.configure(settings)
    engine = await open_engine(settings, CrashingRegistry([EchoTool()]))
    events = await collect(engine, "echo something")
    failed = events[-1]
    assert isinstance(failed, TurnFailed)
    assert failed.error == "internal error: RuntimeError: the registry is broken"
    assert failed.hint == f"details are in {path}"
    text = path.read_text()
    assert "Traceback" in text and "RuntimeError: the registry is broken" in text
    await engine.aclose()


def test_a_command_that_crashes_prints_one_line_and_logs_the_traceback(
    tmp_path, monkeypatch, capsys
):
    import hello_tui.commands.exec as exec_command

    def broken(args):
        raise KeyError("something nobody expected")

    monkeypatch.setattr(exec_command, "run_exec", broken)
    code = main(["exec", "--repo", str(tmp_path), "do it"])
    assert code == 1
    err = capsys.readouterr().err
    log_file = tmp_path / ".helloagents" / "logs" / "hello-tui.log"
    assert err.strip().count("\n") == 0  # one line
    assert "unexpected KeyError" in err and f"(details in {log_file})" in err
    assert "Traceback" not in err
    logged = log_file.read_text()
    assert "Traceback" in logged and "something nobody expected" in logged
