"""hello-tui: a terminal coding agent that writes only through reviewed patches."""

__version__ = "0.1.0"
