"""Standard modules loaded at their first use instead of when something imports them.

`dataclasses` imports `inspect` for one call, made only for a class without a
docstring (its signature becomes the `__doc__`); `inspect` brings ast, dis,
opcode, tokenize, token and linecache with it, about a tenth of a small
`hello-tui apply`. `defer` puts a stand-in module in `sys.modules`: `import
inspect` binds it, and the first attribute looked up on it (module `__getattr__`,
PEP 562) imports the real module, which then takes the stand-in's place in
`sys.modules` and lends it all its names, so that every later lookup, through
either, finds the same objects. A module imported already is left as it is.

(importlib's LazyLoader cannot serve: an `import` statement reads the module's
`__spec__`, which makes a LazyLoader module load at once.)
"""

from __future__ import annotations

import sys
import types

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Any


def defer(name: str) -> None:
    """Make `import name` lazy until its first attribute is used (no-op if imported)."""
    if name in sys.modules:
        return
    stand_in = types.ModuleType(name, f"{name}, loaded at its first use")

    def load(attribute: str) -> Any:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]
        try:
            real = __import__(name)
        except BaseException:
            sys.modules.setdefault(name, stand_in)
            raise
        stand_in.__dict__.update(real.__dict__)
        return getattr(real, attribute)

    stand_in.__getattr__ = load  # type: ignore[method-assign]
    stand_in.__deferred__ = True  # type: ignore[attr-defined]
    sys.modules[name] = stand_in


def is_loaded(name: str) -> bool:
    """`name` was imported for real (a deferred module not used yet was not)."""
    module = sys.modules.get(name)
    return module is not None and not getattr(module, "__deferred__", False)
