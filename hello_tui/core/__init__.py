"""Protocols every layer shares: events, approvals, the tool protocol. Imports nothing of the engine."""
