"""hello-tui as an ACP agent (Agent Client Protocol, JSON-RPC over stdio).

`hello-tui acp` lets an editor or front-end (Zed, Toad, any ACP client) drive
the same engine facade the app and `exec` use: `server` answers the
protocol's methods, `updates` turns engine events into `session/update`
notifications, `permissions` is the `Approver` that asks the client before a
patch is written or a command is run, `editor_files` reads and writes files
through the client's buffers when it offers them, `prompt_text` reads a prompt's content
blocks, `mcp_servers` converts the client's MCP server list, `stdio_guard`
keeps stdout for JSON-RPC alone, and `command` runs it all for the `acp`
subcommand. It imports only the facade, the core protocols and the
configuration.
"""
