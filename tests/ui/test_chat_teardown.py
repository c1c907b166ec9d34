"""The chat's writer during teardown: a reply still being finished when the app
closes is dropped quietly, not reported as an error."""

from __future__ import annotations

import logging

from textual.app import App, ComposeResult

from hello_tui.widgets.chat_log import ChatView
from tests.ui.engine_double import wait_until


class ChatOnly(App[None]):
    def compose(self) -> ComposeResult:
        yield ChatView(id="chat")


async def test_finishing_a_reply_whose_widgets_are_gone_is_quiet(caplog):
    app = ChatOnly()
    async with app.run_test() as pilot:
        chat = app.query_one(ChatView)
        chat.stream_write("A reply that is still ")
        await wait_until(pilot, lambda: chat.idle)
        # What the app's shutdown does first: the chat's children go, the chat stays.
        await chat.query_one("#live-header").remove()
        with caplog.at_level(logging.ERROR):
            chat.stream_write("being written")
            chat.stream_finish()
            await wait_until(pilot, lambda: chat.idle)
        assert not [r for r in caplog.records if "could not apply" in r.getMessage()]
        assert not list(app._notifications)


async def test_a_real_failure_of_an_op_is_still_reported(caplog):
    app = ChatOnly()
    async with app.run_test() as pilot:
        chat = app.query_one(ChatView)

        def broken() -> None:
            raise ValueError("boom")

        with caplog.at_level(logging.ERROR):
            chat.call_when_shown(broken)
            await wait_until(pilot, lambda: chat.idle)
        assert [r for r in caplog.records if "could not apply call" in r.getMessage()]
        assert any("boom" in n.message for n in app._notifications)
