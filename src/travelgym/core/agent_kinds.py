"""The agent kinds suites share, built from :class:`~travelgym.core.suite.AgentKind`: kinds that
call no model (scripted, oracle) and kinds a model plays, ending in the two local-model kinds
every suite offers."""

from __future__ import annotations

from travelgym.core.suite import AgentKind


def rule_kinds(*names: str) -> tuple[AgentKind, ...]:
    """Kinds that take no argument and call no model (``scripted``, ``oracle``)."""
    return tuple(AgentKind(name, None, calls_llm=False) for name in names)


def model_kinds(*names: str, runs_code: bool = False) -> tuple[AgentKind, ...]:
    """Kinds a model plays: ``names`` (each ``KIND:MODEL``), then a local GGUF model
    (``local:GGUF``) and a transformers checkpoint (``hf:CKPT``); all of them run model-written
    code when ``runs_code``."""
    named = tuple(AgentKind(name, runs_code=runs_code) for name in names)
    local = ("local", "GGUF"), ("hf", "CKPT")
    return named + tuple(AgentKind(name, arg, runs_code=runs_code) for name, arg in local)
