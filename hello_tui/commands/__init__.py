"""The command-line commands other than the app: exec, apply/undo, doctor."""
