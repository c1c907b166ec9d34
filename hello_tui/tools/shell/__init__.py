"""The terminal tool's shell: parse, policy, sandbox and the runner."""
