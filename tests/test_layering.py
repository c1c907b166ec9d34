"""The engine must run with no UI: nothing outside app.py, screens/ and widgets/ imports
textual."""

import ast
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import hello_tui

# The UI: these modules and everything inside these packages, matched exactly.
UI_MODULES = {"hello_tui.app"}
UI_PACKAGES = (
    "hello_tui.screens",
    "hello_tui.widgets",
    "hello_tui.demo",
)


def is_ui(name: str) -> bool:
    return name in UI_MODULES or any(name == p or name.startswith(p + ".") for p in UI_PACKAGES)


def engine_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(hello_tui.__path__, "hello_tui."):
        if not is_ui(info.name) and info.name != "hello_tui.__main__":
            names.append(info.name)
    return names


def test_ui_matching_is_exact():
    assert is_ui("hello_tui.demo") and is_ui("hello_tui.demo.script")
    assert not is_ui("hello_tui.demo_script") and not is_ui("hello_tui.application")


def test_import_contracts_hold():
    """The import-linter contracts in pyproject.toml: one direction, no cycles."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import sys; from importlinter.cli import lint_imports_command; "
                "sys.argv = ['lint-imports', '--config', sys.argv[1]]; lint_imports_command()"
            ),
            str(root / "pyproject.toml"),
        ],
        capture_output=True,
        text=True,
        cwd=root,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "broken" in proc.stdout and " 0 broken" in proc.stdout


def test_engine_imports_without_textual():
    modules = engine_modules()
    assert "hello_tui.config" in modules and "hello_tui.cli" in modules
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'textual' or name.startswith('textual.'):\n"
        "            raise ImportError('engine imported textual')\n"
        "sys.meta_path.insert(0, Block())\n"
        f"for m in {modules!r}:\n"
        "    __import__(m)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_version_imports_nothing_heavy():
    code = (
        "import sys\n"
        "from hello_tui.cli import main\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = [m for m in ('textual', 'openai', 'tiktoken', 'pydantic') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY=\n" in proc.stdout, proc.stdout


def test_the_app_draws_before_it_loads_the_engine_and_apply_loads_no_ui_nor_pydantic():
    # The first frame waits for what `hello_tui.app` imports; the engine (pydantic,
    # MCP, the tools) loads after it. `apply` needs neither the UI nor pydantic.
    code = (
        "import sys\n"
        "import hello_tui.app\n"
        "late = [m for m in ('pydantic', 'openai', 'hello_tui.engine.facade', 'hello_tui.mcp')"
        " if m in sys.modules]\n"
        "print('LATE=' + ','.join(late))\n"
        "import hello_tui.commands.patch_commands\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "LATE=\n" in proc.stdout, proc.stdout
    code = (
        "import sys\n"
        "import hello_tui.commands.patch_commands, hello_tui.patch.commit\n"
        "heavy = [m for m in ('textual', 'pydantic', 'openai', 'yaml') if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY=\n" in proc.stdout, proc.stdout


def test_the_app_and_the_loop_stay_small_and_no_screen_or_widget_file_passes_600_lines():
    # The app composes and routes; the work lives in the main screen's controllers
    # (screens/main/), the other screens and the widgets.
    # The agent loop reads in one sitting; its parts live beside it in agent/.
    root = Path(hello_tui.__file__).parent
    assert len((root / "app.py").read_text().splitlines()) <= 400
    assert len((root / "agent" / "loop.py").read_text().splitlines()) <= 400
    for folder in ("screens", "widgets"):
        for path in (root / folder).rglob("*.py"):
            assert len(path.read_text().splitlines()) <= 600, path.name


# What one `hello-tui apply` (no user config file, no model URL) must never load: each
# costs every apply its import. The undo history and the diff reader behind it serve
# `undo` and `history`; apply holds no key to hide (ctypes makes the app undumpable) and
# logs nothing (logging is loaded for an uncaught error only); TOML is read only when
# there is a user config file; temp files are made without `tempfile` (and `random`); a
# plain command line is read without argparse (and the gettext, locale and shutil behind it);
# the UI, the model client and their libraries are never needed; base64, zlib and quopri
# serve binary patches and encoded mails only, difflib only explains a patch that does not
# match.
APPLY_NEVER_IMPORTS = (
    "textual",
    "rich",
    "openai",
    "httpx",
    "httpx2",
    "pydantic",
    "tiktoken",
    "mcp",
    "yaml",
    "hello_tui.app",
    "hello_tui.engine",
    "hello_tui.agent",
    "hello_tui.llm",
    "base64",
    "binascii",
    "zlib",
    "quopri",
    "difflib",
    "string",
    "typing",  # annotations only: under TYPE_CHECKING, which is False at run time
    # Deferred (core/lazy_module.py) and unused: neither they nor what they bring load.
    "inspect",
    "ipaddress",
    "ntpath",
    "ast",
    "dis",
    "tokenize",
    "linecache",
    "hello_tui.patch.history",
    # Only a binary patch needs git's binary format (blob ids: patch/blob_ids.py).
    "hello_tui.patch.binary",
    # Only an interrupted or failed transaction is rolled back.
    "hello_tui.patch.rollback",
    # Grouped fsyncs run on plain `_thread` threads (patch/durable.py).
    "threading",
    "hello_tui.patch.diff_summary",
    "unidiff",
    "filelock",
    "ctypes",
    "logging",
    "hello_tui.core.logs",
    "tomllib",
    "tempfile",
    "random",
    "argparse",
    "gettext",
    "locale",
    "shutil",
)


def test_apply_loads_only_what_applying_needs(tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    patch = tmp_path / "change.diff"
    patch.write_text("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n")
    code = (
        "import sys\n"
        "from hello_tui.cli import main\n"
        f"rc = main(['apply', '--yes', '--repo', {str(tmp_path)!r}, {str(patch)!r}])\n"
        "from hello_tui.core.lazy_module import is_loaded\n"
        f"loaded = [m for m in {APPLY_NEVER_IMPORTS!r} if is_loaded(m)]\n"
        "print('RC=%d LOADED=%s' % (rc, ','.join(loaded)))\n"
    )
    # No user config file; -S: only what apply imports counts, not what this machine's
    # site-packages (.pth files, editable installs) load at start.
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path / "home")}
    env["PYTHONPATH"] = str(Path(hello_tui.__file__).resolve().parents[1])
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, check=False, env=env
    )
    assert "RC=0 LOADED=\n" in proc.stdout, proc.stdout + proc.stderr
    assert (tmp_path / "a.txt").read_text() == "one\nthree\n"


def test_every_lock_is_core_file_lock():
    """filelock's import cost every command more than a small apply; its one replacement
    is `hello_tui.core.file_lock`, and no module goes back to it."""
    root = Path(hello_tui.__file__).parent
    users = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            if any(n == "filelock" or n.startswith("filelock.") for n in names):
                users.append(path.relative_to(root).as_posix())
    assert users == []


def test_the_dataclasses_apply_loads_have_docstrings():
    """dataclasses computes an undocumented class's signature for its __doc__ at import:
    inspect.signature, about 40 µs a class on every apply."""
    undocumented = (
        "cls.__doc__ == cls.__name__ + str(inspect.signature(cls)).replace(' -> None', '')"
    )
    assert _apply_dataclasses(undocumented) == set()


def _apply_dataclasses(condition: str) -> set[str]:
    """The dataclasses defined in the modules `apply` loads for which `condition` (Python,
    on `cls` and its module's `name`) holds, found in a fresh interpreter."""
    code = (
        "import dataclasses, inspect, sys\n"
        "import hello_tui.cli, hello_tui.commands.patch_commands, hello_tui.patch.commit\n"
        "import hello_tui.patch.planner, hello_tui.store.notes\n"
        "for name, module in list(sys.modules.items()):\n"
        "    for cls in vars(module).values() if name.startswith('hello_tui') else ():\n"
        "        if dataclasses.is_dataclass(cls) and isinstance(cls, type)"
        f" and cls.__module__ == name and {condition}:\n"
        "            print(name + '.' + cls.__qualname__)\n"
    )
    env = {"PYTHONPATH": str(Path(hello_tui.__file__).resolve().parents[1])}
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, check=False, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.split())


# The dataclasses apply loads: those compared by value, frozen settings and records,
# and the written diff's file changes. A work record, compared by identity, is a
# `core.record` class instead: a dataclass's __init__, __repr__ and __eq__ are compiled
# at every start.
COMPARED_BY_VALUE = {
    "hello_tui.config.Provider",
    "hello_tui.config.StatePaths",
    "hello_tui.config.Settings",
    "hello_tui.core.git_layout.Found",
    "hello_tui.patch.recovery.Interrupted",
    "hello_tui.patch.undo_stack.Pointer",
    "hello_tui.patch.written_diff.FileChange",
}


def test_the_dataclasses_apply_loads_compare_by_identity_unless_they_are_values():
    assert _apply_dataclasses("'__eq__' in cls.__dict__") == COMPARED_BY_VALUE


DEFERRED = '''
import sys
from hello_tui.core.lazy_module import defer, is_loaded
defer("inspect")
import dataclasses, inspect

@dataclasses.dataclass
class Documented:
    """A docstring: dataclasses needs no signature."""
    a: int

print("BEFORE", is_loaded("inspect"), "ast" in sys.modules)

@dataclasses.dataclass
class Bare:
    a: int

real = sys.modules["inspect"]
print("AFTER", is_loaded("inspect"), Bare.__doc__, inspect.signature is real.signature)
defer("json")
from json import dumps
print("FROM", dumps([1]), is_loaded("json"))
'''


def test_a_deferred_module_loads_at_its_first_use_and_is_the_real_one_after():
    proc = subprocess.run(
        [sys.executable, "-S", "-c", DEFERRED],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(Path(hello_tui.__file__).resolve().parents[1])},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "BEFORE False False",
        "AFTER True Bare(a: int) True",
        "FROM [1] True",
    ]
