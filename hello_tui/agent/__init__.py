"""The agent: the think–act–observe loop, its two dialects, context building, sessions.

Nothing here imports textual; the TUI and `exec` drive `Agent.run_turn` alike.
"""
