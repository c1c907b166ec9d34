"""The setup dialog: the first screen when no model is configured, reopened with `/setup`.

It says what the README and `doctor` say (each provider's key variable, local
servers, the user config file, `hello-tui demo`) and can save a key: choose the
provider, paste the key, Save. The screen dismisses with a `KeyChoice` (the app
writes the user config and restarts the engine) or None.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Markdown, Select, Static

from hello_tui.config import PROVIDERS

# The providers' names as the README writes them.
PROVIDER_LABELS = {
    "openai": "OpenAI",
    "deepseek": "DeepSeek",
    "qwen": "Qwen (DashScope)",
    "kimi": "Kimi (Moonshot)",
    "zhipu": "Zhipu",
    "modelscope": "ModelScope",
    "ollama": "Ollama",
    "vllm": "vLLM",
}


def providers_table() -> str:
    """The providers as the README lists them: key variable and default model."""
    rows = ["| provider | key variable | default model |", "| --- | --- | --- |"]
    for p in PROVIDERS:
        key = (
            " or ".join(f"`{v}`" for v in p.key_vars)
            if p.needs_key
            else f"no key; `LLM_BASE_URL={p.base_url}`"
        )
        rows.append(f"| {PROVIDER_LABELS.get(p.name, p.name)} | {key} | `{p.model}` |")
    rows.append(
        "| another local server (llama.cpp…) | no key; `LLM_BASE_URL=http://localhost:PORT/v1` "
        "| `LLM_MODEL_ID=<served model>` |"
    )
    return "\n".join(rows)


@dataclass(frozen=True)
class KeyChoice:
    provider: str
    key: str


SETUP_TEXT = """\
# No model is configured yet

hello-tui works with any OpenAI-compatible endpoint. **Save a key below**
(it goes to your user config, `{config}`, readable by you only), or set
these in the environment or in `<repo>/.env`, or pass them as flags
(`--base-url`, `--model`, `--api-key`). One provider key is enough: hello-tui
picks that provider's URL and default model (`LLM_MODEL_ID` overrides it).

{providers}

Then check it with `hello-tui doctor`: it shows each setting and where it came from.
Until a model is configured, nothing is sent anywhere.

**Just looking?** Run `hello-tui demo`: a sample repository with a bug and a
built-in scripted model, no API key needed.
"""


class SetupHelpScreen(ModalScreen["KeyChoice | None"]):
    BINDINGS = [
        Binding("escape", "dismiss", "Continue", id="setup.close", tooltip="Close this page"),
        Binding("ctrl+q", "app.quit", "Quit", id="setup.quit", tooltip="Leave hello-tui"),
    ]

    DEFAULT_CSS = """
    SetupHelpScreen { align: center middle; }
    SetupHelpScreen > #setup-box {
        width: 110; max-width: 98%; height: 90%; border: round $warning; background: $surface;
        padding: 0 1;
    }
    SetupHelpScreen #setup-scroll { height: 1fr; }
    SetupHelpScreen #setup-form { height: auto; }
    SetupHelpScreen #setup-provider { width: 30; }
    SetupHelpScreen #setup-key { width: 1fr; }
    SetupHelpScreen #setup-error { color: $error; height: auto; }
    """

    def __init__(self, problem: str = "", config_file: str = "") -> None:
        super().__init__()
        self.problem = problem
        self.config_file = config_file or "~/.config/hello-tui/config.toml"

    def compose(self) -> ComposeResult:
        box = Vertical(id="setup-box")
        box.border_title = "Set up a model"
        with box:
            text = SETUP_TEXT.replace("{config}", self.config_file).replace(
                "{providers}", providers_table()
            )
            if self.problem:
                text = f"> {self.problem}\n\n" + text
            # The text scrolls; the key form stays in view below it.
            with VerticalScroll(id="setup-scroll"):
                yield Markdown(text, id="setup-text")
            with Horizontal(id="setup-form"):
                yield Select(
                    [
                        (PROVIDER_LABELS.get(p.name, p.name), p.name)
                        for p in PROVIDERS
                        if p.needs_key
                    ],
                    value="openai",
                    allow_blank=False,
                    id="setup-provider",
                )
                yield Input(placeholder="paste the API key", password=True, id="setup-key")
                yield Button("Save key", variant="primary", id="setup-save")
            yield Static("", id="setup-error")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#setup-key", Input).focus(scroll_visible=False)

    @on(Button.Pressed, "#setup-save")
    @on(Input.Submitted, "#setup-key")
    def _save(self) -> None:
        key = self.query_one("#setup-key", Input).value.strip()
        if not key or any(c.isspace() for c in key):
            self.query_one("#setup-error", Static).update("Paste the key first (no spaces).")
            return
        provider = str(self.query_one("#setup-provider", Select).value)
        self.dismiss(KeyChoice(provider, key))
