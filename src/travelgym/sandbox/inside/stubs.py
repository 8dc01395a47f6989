"""Tool functions built from plain specs: each call is forwarded, never run here.

A spec is JSON (name, docstring, parameters with kind, default and type text), made by
:func:`travelgym.toolkit.codegen.binding_spec`. Inside the sandbox the forward sends the call
over the channel to the benchmark, which validates and runs it; the parent builds the same
functions around a direct call. No source text is generated or evaluated.
"""

from __future__ import annotations

import inspect
import marshal
import types
from collections.abc import Callable
from typing import Any

try:
    from .channel import CALL, REPLY, encode_json, read_frame, write_frame
except ImportError:  # inside the sandbox the runtime files are top-level modules
    from channel import CALL, REPLY, encode_json, read_frame, write_frame  # type: ignore[no-redef]

Forward = Callable[[str, list, dict], Any]  # (tool name, positional, keyword) -> payload
MAX_REPLY_BYTES = 64 << 20


class TypeText:
    """An annotation shown as plain text in signatures (``int | None``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


_KINDS = {
    "positional": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "keyword": inspect.Parameter.KEYWORD_ONLY,
}


def signature(spec: dict) -> inspect.Signature:
    """The ``inspect.Signature`` a spec describes."""
    params = []
    for p in spec["params"]:
        default = p["default"] if p["has_default"] else inspect.Parameter.empty
        params.append(
            inspect.Parameter(
                p["name"], _KINDS[p["kind"]], default=default, annotation=TypeText(p["type"])
            )
        )
    return inspect.Signature(params, return_annotation=TypeText(spec.get("returns", "dict")))


def make_binding(spec: dict, forward: Forward) -> Callable[..., Any]:
    """A plain function named and documented as the tool, forwarding its arguments."""
    name = spec["name"]

    def binding(*args: Any, **kwargs: Any) -> Any:
        return forward(name, list(args), kwargs)

    binding.__name__ = binding.__qualname__ = name
    binding.__doc__ = spec.get("doc", "")
    binding.__signature__ = signature(spec)  # type: ignore[attr-defined]
    return binding


def build_module(specs: list, forward: Forward, name: str = "tools") -> types.ModuleType:
    """A module holding one binding per spec (``from tools import search_hotel``)."""
    module = types.ModuleType(name, "Tools callable as Python functions; each returns a dict.")
    for spec in specs:
        function = make_binding(spec, forward)
        function.__module__ = name
        setattr(module, spec["name"], function)
    module.__all__ = [spec["name"] for spec in specs]
    return module


def channel_forward(fd: int) -> Forward:
    """A forward that sends each call as a frame on ``fd`` and returns the reply's payload
    (values JSON cannot carry are sent as their ``repr``: the benchmark's validation reports
    them as bad arguments)."""

    def forward(name: str, args: list, kwargs: dict) -> Any:
        try:
            request = encode_json({"name": name, "args": args, "kwargs": kwargs})
        except (ValueError, RecursionError) as exc:
            message = f"{name}: arguments nested too deeply ({exc})"
            return {"error": {"category": "parameter", "message": message}}
        write_frame(fd, CALL, request)
        return marshal.loads(read_frame(fd, REPLY, MAX_REPLY_BYTES))["payload"]

    return forward
