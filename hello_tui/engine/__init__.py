"""The engine facade: the one API the app, `exec` and protocol adapters drive.

`hello_tui.engine.facade.Engine` runs turns and plans (streams of
`core.events`), undoes and restores patches, lists and switches sessions,
reads notes, backups and todos, and switches model and mode; everything that
touches the disk runs off the event loop. `hello_tui.engine.types` re-exports
the values the facade hands out (patch plans for the review screen, backups,
notes, sessions), so a UI needs nothing else of the engine. This package
imports nothing heavy until a submodule is used.
"""
