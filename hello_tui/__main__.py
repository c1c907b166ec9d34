from hello_tui.cli import run

run()
