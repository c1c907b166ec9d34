"""The main screen's controllers: what the app does, kept out of the App class.

`HelloApp` composes the widgets, owns the bindings and routes messages; each
controller here owns one concern behind a few public methods: `turns` (running
a turn, its events, the queue), `sessions` (new, clear, resume), `writes`
(undo, redo, restore, compact), `prompt` (what a submitted line means, slash
commands, completion, attachments), `models` (permission mode and model),
`startup` (opening the engine, the start-up check, the setup dialog's key),
`library` (the sidebar's notes and backups) and `attention` (calling the user
back when a decision waits). They reach the app only through `Host`.
"""
