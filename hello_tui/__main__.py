from hello_tui.cli import main

raise SystemExit(main())
