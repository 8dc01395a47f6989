"""Names to objects: ``KIND:ARG`` agent specs and user specs, shared by every command."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from travelgym.suites.compass.agents.base import Agent

SCRIPTED = ("greedy", "sampled", "exhaustive")
AGENT_KINDS = ("scripted", "llm", "code", "local", "hf")
DEFAULT_AGENTS = tuple(f"scripted:{s}" for s in SCRIPTED)


class SpecError(ValueError):
    """A spec that does not name an agent or user (the message lists the valid forms)."""


@dataclass(frozen=True)
class AgentSpec:
    kind: str
    arg: str

    @property
    def text(self) -> str:
        return f"{self.kind}:{self.arg}"

    @property
    def dirname(self) -> str:
        return self.text.replace(":", "-").replace("/", "_")


def parse_agent_spec(text: str) -> AgentSpec:
    """``scripted:NAME``, ``llm:MODEL``, ``code:MODEL``, ``local:GGUF`` (the LLM tool agent
    on a llama.cpp server this process runs; the same as ``llm:local:GGUF``) or ``hf:CKPT``
    (the LLM tool agent on a transformers checkpoint in this process; ``llm:hf:CKPT``)."""
    kind, sep, arg = (text or "").partition(":")
    if not sep or not arg or kind not in AGENT_KINDS:
        raise SpecError(f"bad agent spec {text!r}: use scripted:greedy, scripted:sampled, "
                        "scripted:exhaustive, llm:MODEL, code:MODEL, local:smollm2 or hf:CKPT")  # fmt: skip
    if kind == "scripted" and arg not in SCRIPTED:
        raise SpecError(f"unknown scripted agent {arg!r}: choose {', '.join(SCRIPTED)}")
    return AgentSpec(kind, arg)


def parse_user_spec(text: str) -> tuple[str, str | None]:
    """``template``, ``llm:MODEL``, ``local:GGUF`` or ``hf:CKPT`` -> (backend kind, model for
    make_client)."""
    if text == "template":
        return "template", None
    kind, sep, model = (text or "").partition(":")
    if kind == "llm" and sep and model:
        return "llm", model
    if kind in ("local", "hf") and sep and model:
        return "llm", text
    raise SpecError(f"bad user spec {text!r}: use template, llm:MODEL, local:smollm2 or hf:CKPT")


def client_kwargs(options: dict | None) -> dict:
    """Client keyword arguments for a run: caps become ONE shared ``RunBudget`` (agent and LLM
    user draw on it together) and ``cache_dir`` a shared ``ResponseCache``."""
    options = dict(options or {})
    max_calls, max_tokens = options.pop("max_calls", None), options.pop("max_tokens", None)
    cache_dir = options.pop("cache_dir", None)
    if max_calls is not None or max_tokens is not None:
        from travelgym.llm.budget import RunBudget

        options["budget"] = RunBudget(max_calls=max_calls, max_tokens=max_tokens)
    if cache_dir is not None:
        from travelgym.llm.cache import ResponseCache

        options["cache"] = ResponseCache(cache_dir)
    return options


def agent_factory(
    spec: AgentSpec, seed: int, base_url: str | None = None, client_options: dict | None = None
) -> Callable[[], Agent]:
    """A function making a fresh agent per episode."""
    if spec.kind == "scripted":
        from travelgym.suites.compass.agents.scripted import ScriptedAgent

        return lambda: ScriptedAgent(spec.arg, seed=seed)
    from travelgym.llm.factory import make_client

    model = f"{spec.kind}:{spec.arg}" if spec.kind in ("local", "hf") else spec.arg
    client = make_client(model, base_url=base_url, **(client_options or {}))
    if spec.kind in ("llm", "local", "hf"):
        from travelgym.suites.compass.agents.llm_agent import LLMToolAgent

        factory = lambda: LLMToolAgent(client)  # noqa: E731
    else:
        from travelgym.suites.compass.agents.code_agent import CodeAgent

        factory = lambda: CodeAgent(client)  # noqa: E731
    factory.client = client  # type: ignore[attr-defined]  # closed by the runner
    return factory


def user_backend(text: str, base_url: str | None = None, client_options: dict | None = None):
    kind, model = parse_user_spec(text)
    if kind == "template":
        from travelgym.suites.compass.user.template import TemplateUserBackend

        return TemplateUserBackend()
    from travelgym.llm.factory import make_client
    from travelgym.suites.compass.user.llm_backend import LLMUserBackend

    return LLMUserBackend(make_client(model, base_url=base_url, **(client_options or {})))
