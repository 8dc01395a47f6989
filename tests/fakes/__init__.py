"""Test doubles shared across test packages (a fake OpenAI-compatible server)."""
