"""The installed travelgym version (one place: the package root, the manifests and the MCP server
read it)."""

__version__ = "0.1.0"
