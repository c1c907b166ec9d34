"""The key footer, rebuilt only when the keys it shows change.

Textual's `Footer` recomposes (unmounts and mounts every key) each time a screen
says its bindings *may* have changed: every state change of a turn, focus move
or arming step. Each rebuild lays the whole screen out again and, under a modal,
repaints the dimmed screen behind it: tens of milliseconds a time for a footer
that looks the same. This one compares what it would show with what it shows.
"""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer

Shown = tuple[tuple[Any, ...], ...]


class SteadyFooter(Footer):
    """A `Footer` that skips rebuilding when its keys, labels and states are unchanged."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._composed: Shown | None = None

    def shown_keys(self) -> Shown:
        """Everything the footer's keys depend on: key, display, label, action, enabled,
        tooltip and group of each binding it would show (the palette's included)."""
        app = self.app
        return tuple(
            (
                binding.key,
                app.get_key_display(binding),
                binding.description,
                binding.action,
                enabled,
                tooltip,
                binding.tooltip,
                None
                if binding.group is None
                else (binding.group.description, binding.group.compact),
                binding.show,
            )
            for _node, binding, enabled, tooltip in self.screen.active_bindings.values()
        ) + ((self.show_command_palette, app.ENABLE_COMMAND_PALETTE, self.compact),)

    def compose(self) -> Any:
        # What a (re)compose shows is recorded here, whoever asked for it.
        self._composed = self.shown_keys() if self._bindings_ready else None
        yield from super().compose()

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if not self.is_attached or self.shown_keys() == self._composed:
            return
        await self.recompose()
