"""The engine must run with no UI: nothing outside app.py, screens/ and widgets/ imports textual."""

import pkgutil
import subprocess
import sys

import hello_tui

UI_MODULES = ("hello_tui.app", "hello_tui.screens", "hello_tui.widgets", "hello_tui.demo")


def engine_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(hello_tui.__path__, "hello_tui."):
        if not info.name.startswith(UI_MODULES) and info.name != "hello_tui.__main__":
            names.append(info.name)
    return names


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
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
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
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY=\n" in proc.stdout, proc.stdout
