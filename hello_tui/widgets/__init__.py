"""Widgets of the app (diff view, chat, trace, todo board, sidebar, status bar).

Kept import-light: import each widget from its own module.
"""
