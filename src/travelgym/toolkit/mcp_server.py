"""Serve a :class:`ToolRegistry` over the Model Context Protocol.

Built on the MCP SDK's low-level ``Server`` (``mcp`` 2.x) so that the advertised schemas are
exactly :meth:`Tool.json_schema` and every call goes through :meth:`ToolRegistry.call`, the same
validation and error taxonomy the in-process agents see. A failed call is not a protocol error:
it is a normal result with ``isError`` set whose text (and structured content) is the
``{"error": {"category", "message"}}`` payload.

One context object is created by ``context_factory()`` per served connection (the server's
lifespan) and shared by every call on it; for stdio that is one per process.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic_core import to_jsonable_python

from travelgym.toolkit.mcp_stdio import claimed_stdio, stdio_transport
from travelgym.toolkit.registry import ToolContext, ToolRegistry
from travelgym.version import __version__

ContextFactory = Callable[[], ToolContext | None]


def _listed_tools(registry: ToolRegistry) -> list[types.Tool]:
    tools = []
    for name in registry.names:
        spec = registry[name]
        tools.append(
            types.Tool(
                name=spec.name, description=spec.description, input_schema=spec.json_schema()
            )
        )
    return tools


def _to_call_result(payload: Any, ok: bool, protocol_version: str | None) -> types.CallToolResult:
    data = to_jsonable_python(payload, fallback=str)
    text = json.dumps(data, ensure_ascii=False)
    # Structured content may be any JSON value from 2026-07-28 on; before that only an object.
    structured = isinstance(data, dict) or protocol_version in MODERN_PROTOCOL_VERSIONS
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=data if structured else None,
        is_error=not ok,
    )


def build_mcp_server(
    registry: ToolRegistry,
    context_factory: ContextFactory,
    name: str = "travelgym",
    instructions: str | None = None,
) -> Server[ToolContext | None]:
    """An MCP server exposing every tool of ``registry``.

    Args:
        registry: The tools to serve; listed in registration order.
        context_factory: Called once per connection for the context handed to the tools; a
            context with a ``close()`` method is closed when the connection ends.
        name: The server name reported to clients.
        instructions: Optional usage notes the server hands to clients on connecting.
    """

    @asynccontextmanager
    async def lifespan(_server: Server[Any]) -> AsyncIterator[ToolContext | None]:
        context = context_factory()
        try:
            yield context
        finally:
            close = getattr(context, "close", None)
            if callable(close):
                close()

    async def on_list_tools(
        ctx: ServerRequestContext[ToolContext | None],
        params: types.PaginatedRequestParams | None,
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=_listed_tools(registry))

    async def on_call_tool(
        ctx: ServerRequestContext[ToolContext | None],
        params: types.CallToolRequestParams,
    ) -> types.CallToolResult:
        # Tools are synchronous and may hold thread-bound resources (sqlite), so run inline.
        result = registry.call(params.name, params.arguments, ctx.lifespan_context)
        return _to_call_result(result.payload(), result.ok, ctx.protocol_version)

    return Server(
        name,
        version=__version__,
        instructions=instructions,
        lifespan=lifespan,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def serve_stdio(
    registry: ToolRegistry,
    context_factory: ContextFactory,
    name: str = "travelgym",
    instructions: str | None = None,
) -> None:
    """Serve ``registry`` over this process's stdin/stdout until the client closes stdin and
    every request read has been answered (see :mod:`travelgym.toolkit.mcp_stdio`).

    While serving, file descriptor 1 points at stderr, so stray prints cannot corrupt the
    protocol stream.
    """
    server = build_mcp_server(registry, context_factory, name, instructions)
    with claimed_stdio() as (stdin, stdout):
        async with stdio_transport(stdin, stdout) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(
    registry: ToolRegistry,
    context_factory: ContextFactory,
    name: str = "travelgym",
    instructions: str | None = None,
) -> None:
    """Blocking form of :func:`serve_stdio`."""
    anyio.run(serve_stdio, registry, context_factory, name, instructions)
