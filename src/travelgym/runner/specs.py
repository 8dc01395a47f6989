"""Agent specs: ``KIND[:ARG]`` strings parsed by the forms a suite declares, and the client
options every run shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from travelgym.core.errors import UserError


class SpecError(UserError, ValueError):
    """A spec that does not name an agent or user (the message lists the valid forms)."""


@dataclass(frozen=True)
class AgentSpec:
    """A parsed agent spec: its kind and argument (``None`` for a kind without one);
    ``given``: the spec as written where it is not ``KIND:ARG`` (a Python policy's path)."""

    kind: str
    arg: str | None = None
    runs_code: bool = False
    calls_llm: bool = True
    given: str | None = None

    @property
    def text(self) -> str:
        if self.given is not None:
            return self.given
        return self.kind if self.arg is None else f"{self.kind}:{self.arg}"

    @property
    def dirname(self) -> str:
        """The run directory's name for this agent (``:`` and ``/`` are not safe in names)."""
        return self.text.replace(":", "-").replace("/", "_")

    @property
    def model(self) -> str | None:
        """The argument (a model or checkpoint), as the client factory takes it."""
        return self.arg


def parse_agent_spec(suite: Any, text: str) -> AgentSpec:
    """``text`` parsed by the agent kinds of ``suite`` (a :class:`~travelgym.core.Suite`);
    :class:`SpecError` listing the suite's forms when it names none. ``package.module:factory``
    (a dot before the colon: no kind has one) is a policy written in Python, driven by the
    suite's model agent (:mod:`travelgym.llm.python_policy`)."""
    kind, sep, arg = (text or "").partition(":")
    if "." in kind:
        return _python_policy(suite, text)
    forms = {k.name: k for k in suite.agent_kinds}
    found = forms.get(kind)
    if found is None or (found.arg is None and sep) or (found.arg is not None and not arg):
        raise SpecError(f"bad agent spec {text!r}: use {suite.agent_usage}")
    if found.choices and arg not in found.choices:
        raise SpecError(f"unknown {kind} agent {arg!r}: choose {', '.join(found.choices)}")
    return AgentSpec(kind, arg if found.arg is not None else None, found.runs_code,
                     found.calls_llm)  # fmt: skip


def _python_policy(suite: Any, text: str) -> AgentSpec:
    """The spec of the Python policy ``text`` (``package.module:factory``) in ``suite``."""
    from travelgym.llm.factory import PYTHON_PREFIX
    from travelgym.llm.python_policy import PolicyPathError, check_path

    try:
        check_path(text)
    except PolicyPathError as exc:
        raise SpecError(f"bad agent spec {text!r}: {exc}") from None
    kind = next((k for k in suite.agent_kinds if k.name == suite.model_agent), None)
    if kind is None:
        raise SpecError(f"bad agent spec {text!r}: {suite.name} has no model agent to drive a "
                        f"Python policy; use {suite.agent_usage}")  # fmt: skip
    return AgentSpec(kind.name, PYTHON_PREFIX + text, kind.runs_code, True, given=text)


def client_kwargs(options: dict | None, generation: dict | None = None) -> dict:
    """Client keyword arguments for a run: caps become ONE shared ``RunBudget`` (agent and LLM
    user draw on it together) and ``cache_dir`` a shared ``ResponseCache``; the agent's
    ``generation`` options (:mod:`~travelgym.runner.generation`) become the ``default_params``
    its calls carry (a simulated user's client leaves them out: :func:`user_client_options`)."""
    options = dict(options or {})
    if generation:
        options["default_params"] = dict(generation)
    max_calls, max_tokens = options.pop("max_calls", None), options.pop("max_tokens", None)
    max_cost, prices = options.pop("max_cost", None), options.pop("prices", None)
    cache_dir = options.pop("cache_dir", None)
    if max_calls is not None or max_tokens is not None or max_cost is not None:
        from travelgym.llm.budget import RunBudget

        options["budget"] = RunBudget(max_calls=max_calls, max_tokens=max_tokens,
                                      max_cost=max_cost, prices=prices)  # fmt: skip
    if cache_dir is not None:
        from travelgym.llm.cache import ResponseCache

        options["cache"] = ResponseCache(cache_dir)
    return options


def make_model_client(model: str, base_url: Any, client_options: dict | None):
    """A chat client for ``model`` (``local:``/``hf:`` prefixes included) with the run's
    options; ``base_url``: ``None``, one URL, or several (the client balances over them)."""
    from travelgym.llm.factory import make_client

    return make_client(model, base_url=base_url, **(client_options or {}))


def user_client_options(client_options: dict | None) -> dict:
    """The run's client options for a simulated user's model: the agent's generation options
    (``default_params``) left out, since they configure the agent under test only."""
    return {k: v for k, v in (client_options or {}).items() if k != "default_params"}
