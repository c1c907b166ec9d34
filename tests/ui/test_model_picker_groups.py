"""`/model` without repeats: other providers' models are one group whose heading says once
that each needs its own endpoint; the rows name the provider, arrows skip the headings."""

from __future__ import annotations

from hello_tui.app import HelloApp
from hello_tui.screens.picker import PickerScreen, PickItem
from tests.support.scripted_model import settings_for_server
from tests.ui.engine_double import armed, wait_until


async def test_other_providers_are_grouped_under_one_heading(tmp_path, scripted_server):
    server = scripted_server([], models=["big-model"])
    app = HelloApp(settings_for_server(server, tmp_path), preflight=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        app.prompt.load_text("/model")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PickerScreen))
        picker = app.screen
        await wait_until(pilot, lambda: any(i.value == "deepseek-chat" for i in picker.items))
        await pilot.pause()
        shown = app.export_screenshot().replace("&#160;", " ")
        assert shown.count("needs its own endpoint") == 1
        others = [i for i in picker.items if i.value == "deepseek-chat"]
        assert others[0].detail == "deepseek"
        await pilot.press("escape")


async def test_headings_are_not_chosen_and_arrows_step_over_them():
    from textual.app import App
    from textual.widgets import OptionList

    items = [
        PickItem("a", "a", current=True, group="in use"),
        PickItem("b", "b", group="endpoint"),
        PickItem("c", "c", "x", group="other"),
        PickItem("d", "d", "x", group="other"),
    ]
    results: list = []

    class PickApp(App[None]):
        def on_mount(self) -> None:
            self.push_screen(PickerScreen("Pick", items), results.append)

    app = PickApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await armed(pilot)  # a picker takes keys once it has armed
        picker = app.screen
        assert picker.rows == [None, 0, None, 1, None, 2, 3]
        assert picker._highlighted_value() == "a"
        await pilot.press("down", "down")
        assert picker._highlighted_value() == "c"
        options = picker.query_one("#picker-list", OptionList)
        heading = options.get_option_at_index(4)
        assert heading.disabled and str(heading.prompt) == "other — x"  # said once, here
        assert str(options.get_option_at_index(5).prompt).strip() == "c"
        await pilot.press("enter")
    assert results == ["c"]
