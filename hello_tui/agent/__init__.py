"""The agent: the think–act–observe loop (`loop`), its two dialects (`dialects`), prompt
assembly (`prompt`), turn bookkeeping (`turn`), tool and model calls, the context budget.

Nothing here imports textual; the engine facade (`hello_tui.engine`) drives it for the
TUI, `exec` and the tests alike.
"""
