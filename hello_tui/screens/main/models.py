"""The permission mode (`/mode`, shift+tab) and the model (`/model`) of the running session."""

from __future__ import annotations

from hello_tui.screens.main.host import Host

MODE_NOTICES = {
    "ask": "Every patch and every command that needs approval asks you first.",
    "auto-edit": "Patches within the limits apply without review (/undo reverts); "
    "high-risk patches and commands still ask.",
    "read-only": "Plan mode: nothing is written and no command that needs approval runs.",
}
STARTING = "The agent is still starting; try again in a moment."


class ModelController:
    def __init__(self, host: Host) -> None:
        self.host = host
        self.views = host.views

    # ------------------------------------------------------------ mode
    def mode_command(self, args: str) -> None:
        """`/mode` shows the mode, `/mode NAME` sets it."""
        if not args:
            engine = self.host.engine
            mode = engine.mode if engine is not None else self.host.settings.mode
            self.views.chat.add("notice", f"Permission mode: {mode} (shift+tab cycles).")
            return
        self.set_mode(args)

    def cycle_mode(self) -> None:
        from hello_tui.engine.types import next_mode

        if self.host.engine is not None:
            self.set_mode(next_mode(self.host.engine.mode))

    def set_mode(self, name: str) -> None:
        """Switch the permission mode; the engine applies it from its next decision on."""
        engine = self.host.engine
        if engine is None:
            self.views.chat.add("notice", STARTING)
            return
        try:
            mode = engine.set_mode(name)
        except ValueError as exc:
            self.views.chat.add("error", str(exc))
            return
        self.views.status.mode = mode
        self.host.notify(MODE_NOTICES[mode], title=f"Mode: {mode}", timeout=4)

    # ------------------------------------------------------------ model
    def model_command(self, args: str) -> None:
        """`/model NAME` switches; `/model` opens the picker."""
        if self.host.engine is None:
            self.views.chat.add("notice", STARTING)
            return
        if args:
            self.switch_model(args)
        else:
            self.host.run_worker(
                self._pick_model(), name="model picker", group="picker", exit_on_error=False
            )

    def switch_model(self, name: str) -> None:
        engine = self.host.engine
        assert engine is not None
        try:
            engine.set_model(name)
        except ValueError as exc:
            self.views.chat.add("error", str(exc))
            return
        self.views.status.model = engine.model
        self.views.chat.add("notice", f"Model: `{engine.model}` for the rest of this session.")

    async def _pick_model(self) -> None:
        from hello_tui.screens.picker import OTHER_PROVIDERS, PickerScreen, PickItem

        engine = self.host.engine
        assert engine is not None
        first = PickItem(engine.model, engine.model, current=True, group="in use")
        picker = PickerScreen("Choose a model", [first])
        self.host.push_screen(picker, self._model_picked)
        offered = await engine.model_choices()
        picker.add_items(
            [
                PickItem(
                    c.name,
                    c.name,
                    "" if c.usable else c.group,
                    current=c.name == engine.model,
                    group=c.group if c.usable else OTHER_PROVIDERS,
                )
                for c in offered.choices
            ]
        )
        if offered.endpoint_error and picker.is_attached:
            picker.notify(
                f"The endpoint's model list: {offered.endpoint_error}", severity="warning"
            )

    def _model_picked(self, name: str | None) -> None:
        engine = self.host.engine
        if not name or engine is None:
            return
        from hello_tui.config import PROVIDERS

        settings = self.host.settings
        other = next(
            (p for p in PROVIDERS if p.model == name and p.name != settings.provider), None
        )
        if other is not None and other.model != engine.model:
            self.views.chat.add(
                "notice",
                f"`{name}` is {other.name}'s model: start hello-tui with "
                f"`--base-url {other.base_url}` and {' or '.join(other.key_vars)} set to use it.",
            )
            return
        self.switch_model(name)
