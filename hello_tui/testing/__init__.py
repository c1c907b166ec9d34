"""Support for tests and the demo: the scripted OpenAI-compatible model server."""
