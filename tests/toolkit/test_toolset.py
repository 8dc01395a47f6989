"""ToolSet: a suite's tools, their registry built once, and their Markdown reference."""

from __future__ import annotations

from travelgym.toolkit.toolset import ToolSet


def echo(text: str) -> dict:
    """Say it back.

    Args:
        text: what to say.
    """
    return {"text": text}


def shout(text: str) -> dict:
    """Say it louder.

    Args:
        text: what to say.
    """
    return {"text": text.upper()}


def test_the_registry_is_built_once_with_the_tools_in_order():
    tools = ToolSet((shout, echo), "Toy tool reference", "Two toy tools.", "never")
    registry = tools.registry()
    assert registry is tools.registry() and registry.names == ["shout", "echo"]
    assert registry.call("echo", {"text": "hi"}, None).payload() == {"text": "hi"}


def test_the_reference_has_the_title_intro_tools_and_content_errors_wording():
    reference = ToolSet((echo,), "Toy tool reference", "One toy tool.", "an empty text").reference()
    assert reference.startswith("# Toy tool reference\n")
    assert "One toy tool." in reference and "echo" in reference
    assert "| `content` | an empty text |" in reference
