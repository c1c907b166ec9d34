"""The agent: loop, dialects, context budget, sessions, events, approvals."""
