"""The setup dialog: the first screen when no model is configured, reopened with `/setup`.

What a newcomer needs is at the top, in view at 80×24: how to try hello-tui with
no key (`hello-tui demo`), and the form. The form saves a provider's key, or a
local server's base URL (Ollama, llama.cpp's server, vLLM, LM Studio, or any
OpenAI-compatible proxy) with the model it serves and, when it needs one, a key.
Choosing "local server" asks the usual local ports off the event loop and says
what answered. Below the form, the details scroll: each provider's key variable,
the environment, `.env`, flags, the user config file and `doctor`.

The screen dismisses with a `KeyChoice` or a `LocalServerChoice` (`save_choice`
writes it to the user config and gives the settings to restart the engine with)
or None.

Saving writes over the key saved for that provider, so the dialog is a
DecisionModal: keys typed while it opens (the rest of a line typed after
`/setup`) go to the prompt, not into the key field, and Enter saves only
pressed on its own, not as the end of a burst or a pasted line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Markdown, Select, Static

from hello_tui.config import PROVIDER_BY_NAME, PROVIDERS, Settings, is_local_url
from hello_tui.screens.decision import DecisionModal, FieldInput
from hello_tui.userconfig import save_key, save_local_server
from hello_tui.widgets.footer import SteadyFooter

if TYPE_CHECKING:
    from hello_tui.engine.types import LocalServer

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

# The form's choice for a local server or a proxy (any OpenAI-compatible base URL).
LOCAL = "local"
LOCAL_LABEL = "Local server or proxy"

# What the chat says when the dialog is closed with no model set up.
NO_MODEL_HINT = (
    "No model is configured, so nothing is sent anywhere. Type **/setup** to save a "
    "provider's key or point hello-tui at a local server (Ollama, llama.cpp, vLLM, "
    "LM Studio); or quit (ctrl+q) and run **`hello-tui demo`** to watch it fix a bug "
    "with a built-in scripted model, no key needed."
)


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


@dataclass(frozen=True)
class LocalServerChoice:
    """A base URL of the user's (a local server or a proxy), its model, and a key if it
    needs one (stored as the key for a custom base URL)."""

    base_url: str
    model: str = ""
    key: str = ""


SetupChoice = KeyChoice | LocalServerChoice
Probe = Callable[[], Sequence["LocalServer"]]

INTRO = """\
**No model is configured yet.** Nothing is sent anywhere until one is.

**Just looking?** Quit (ctrl+q) and run `hello-tui demo`: a sample repository \
with a bug and a built-in scripted model, no API key needed.

Or choose a provider and paste its key, or choose *{local}* for Ollama, \
llama.cpp, vLLM, LM Studio or a proxy:\
"""

SETUP_TEXT = """\
### Where settings come from

hello-tui works with any OpenAI-compatible endpoint. What you save here goes
to your user config, `{config}`, readable by you only. You can also set these
in the environment or in `<repo>/.env`, or pass them as flags (`--base-url`,
`--model`, `--api-key`). One provider key is enough: hello-tui picks that
provider's URL and default model (`LLM_MODEL_ID` overrides it).

{providers}

A local server or proxy is saved as `base_url` (and `model`); a key for it goes
under `[keys]` as `custom`, which stands for `LLM_API_KEY`. Saving a provider's
key later makes that provider the default again (its own URL).

Then check it with `hello-tui doctor`: it shows each setting and where it came from.
"""


def _default_probe() -> Sequence[LocalServer]:
    from hello_tui.engine.facade import probe_local_servers

    return probe_local_servers()


def probe_summary(servers: Sequence[LocalServer]) -> str:
    """What answered, each on its line, then the ports where nothing did, in one line."""
    found = [s.describe() for s in servers if s.answered]
    silent = [str(s.port) for s in servers if not s.answered]
    lines = [f"Found {line}" for line in found] or ["No local server answered."]
    if silent and found:
        lines.append("Nothing on " + ", ".join(silent) + ".")
    elif silent:
        lines[0] += " Asked ports " + ", ".join(silent) + "; start one or type its URL."
    return "\n".join(lines)


def save_choice(settings: Settings, choice: SetupChoice, path: Path) -> tuple[Settings, str]:
    """Write the choice to the user config at `path`; the settings to restart with and
    the chat's line saying what was saved (blocking: run it off the event loop)."""
    # A model the user named (flag or environment) stays; otherwise the choice's.
    keep_model = settings.sources.get("model", "").startswith(("flag", "env"))
    sources = {**settings.sources, "api_key": "user config", "base_url": "user config"}
    if isinstance(choice, LocalServerChoice):
        save_local_server(path, choice.base_url, model=choice.model, key=choice.key)
        model = settings.model if keep_model or not choice.model else choice.model
        if choice.model and not keep_model:
            sources["model"] = "user config"
        updated = settings.with_changes(
            api_key=choice.key or None,
            provider="local" if is_local_url(choice.base_url) else "custom",
            base_url=choice.base_url,
            model=model,
            sources=sources,
        )
        return updated, f"Local server `{choice.base_url}` saved in `{path}`; restarting…"
    save_key(path, choice.provider, choice.key)
    provider = PROVIDER_BY_NAME[choice.provider]
    updated = settings.with_changes(
        api_key=choice.key,
        provider=provider.name,
        base_url=provider.base_url,
        model=settings.model if keep_model else provider.model,
        sources=sources,
    )
    return updated, f"Key for {provider.name} saved in `{path}`; restarting the agent…"


class SetupHelpScreen(DecisionModal["SetupChoice | None"]):
    takes_typing = True
    calls_back = False  # opened by the user (/setup) or at start: nothing waits unseen
    ready_text = "Ready: type or paste, then Enter (on its own) saves · escape continues"

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
    SetupHelpScreen #setup-intro { height: auto; margin: 0; }
    SetupHelpScreen #setup-problem { height: auto; color: $warning; }
    SetupHelpScreen #setup-form, SetupHelpScreen #setup-local { height: auto; }
    SetupHelpScreen #setup-local { display: none; }
    SetupHelpScreen.-local #setup-local { display: block; }
    SetupHelpScreen #setup-provider { width: 30; }
    SetupHelpScreen #setup-key, SetupHelpScreen #setup-model { width: 1fr; }
    SetupHelpScreen #setup-local-key { width: 1fr; }
    SetupHelpScreen #setup-probe { height: auto; color: $text-muted; padding: 0 1; }
    SetupHelpScreen #setup-error { color: $error; height: auto; padding: 0 1; }
    SetupHelpScreen #arming { padding: 0 1; }
    SetupHelpScreen #setup-scroll { height: 1fr; border-top: hkey $panel; }
    """

    def __init__(
        self, problem: str = "", config_file: str = "", *, probe: Probe | None = None
    ) -> None:
        super().__init__()
        self.problem = problem
        self.config_file = config_file or "~/.config/hello-tui/config.toml"
        self.probe = probe or _default_probe
        self.servers: list[LocalServer] = []
        self._field: Input | None = None  # the field last focused: focused again once armed

    def compose(self) -> ComposeResult:
        box = Vertical(id="setup-box")
        box.border_title = "Set up a model"
        with box:
            if self.problem:
                yield Static(self.problem, id="setup-problem", markup=False)
            yield Markdown(INTRO.replace("{local}", LOCAL_LABEL), id="setup-intro")
            with Horizontal(id="setup-form"):
                options = [
                    (PROVIDER_LABELS.get(p.name, p.name), p.name) for p in PROVIDERS if p.needs_key
                ]
                yield Select(
                    [*options, (LOCAL_LABEL, LOCAL)],
                    value="openai",
                    allow_blank=False,
                    id="setup-provider",
                )
                yield FieldInput(placeholder="paste the API key", password=True, id="setup-key")
                yield Button("Save", variant="primary", id="setup-save")
            with Horizontal(id="setup-local"):
                yield FieldInput(placeholder="model (as the server names it)", id="setup-model")
                yield FieldInput(
                    placeholder="key, only if the server or proxy needs one",
                    password=True,
                    id="setup-local-key",
                )
            yield Static("", id="setup-probe", markup=False)
            yield Static("", id="setup-error", markup=False)
            yield self.arming_line()
            with VerticalScroll(id="setup-scroll"):
                text = SETUP_TEXT.replace("{config}", self.config_file).replace(
                    "{providers}", providers_table()
                )
                yield Markdown(text, id="setup-text")
        yield SteadyFooter()

    def on_armed(self) -> None:
        field = self._field if self.local else None  # the other fields show for local only
        if field is None or not field.is_mounted:
            field = self.query_one("#setup-key", Input)
        field.focus(scroll_visible=False)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, Input):
            self._field = event.widget

    @property
    def local(self) -> bool:
        return self.query_one("#setup-provider", Select).value == LOCAL

    @on(Select.Changed, "#setup-provider")
    def _provider_changed(self) -> None:
        key = self.query_one("#setup-key", Input)
        self.set_class(self.local, "-local")
        self.query_one("#setup-error", Static).update("")
        if self.local:
            key.value = ""
            key.password = False
            key.placeholder = "http://localhost:PORT/v1"
            self.query_one("#setup-probe", Static).update(
                "Looking for local servers on the usual ports…"
            )
            self._probe()
        else:
            key.value = ""
            key.password = True
            key.placeholder = "paste the API key"
            self.query_one("#setup-probe", Static).update("")

    @work(thread=True, exclusive=True, group="setup-probe", exit_on_error=False)
    def _probe(self) -> None:
        servers = list(self.probe())
        self.app.call_from_thread(self._probed, servers)

    def _probed(self, servers: list[LocalServer]) -> None:
        if not self.is_mounted:
            return
        self.servers = servers
        self.query_one("#setup-probe", Static).update(probe_summary(servers))
        first = next((s for s in servers if s.answered), None)
        if first is None or not self.local:
            return
        url = self.query_one("#setup-key", Input)
        model = self.query_one("#setup-model", Input)
        if not url.value:
            url.value = first.base_url
        if not model.value and first.models:
            model.value = first.models[0]

    @on(Button.Pressed, "#setup-save")
    @on(Input.Submitted, "#setup-key")
    @on(Input.Submitted, "#setup-model")
    @on(Input.Submitted, "#setup-local-key")
    def _save(self) -> None:
        if not self.armed:
            return
        error = self.query_one("#setup-error", Static)
        value = self.query_one("#setup-key", Input).value.strip()
        if self.local:
            if not value.startswith(("http://", "https://")) or any(c.isspace() for c in value):
                error.update("Type the server's base URL, e.g. http://localhost:11434/v1.")
                return
            model = self.query_one("#setup-model", Input).value.strip()
            key = self.query_one("#setup-local-key", Input).value.strip()
            self.dismiss(LocalServerChoice(value.rstrip("/"), model, key))
            return
        if not value or any(c.isspace() for c in value):
            error.update("Paste the key first (no spaces).")
            return
        provider = str(self.query_one("#setup-provider", Select).value)
        self.dismiss(KeyChoice(provider, value))
