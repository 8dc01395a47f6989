"""COMPASS's agents and simulated users from their specs."""

from __future__ import annotations

from travelgym.core.suite import AgentFactory
from travelgym.runner.specs import AgentSpec, SpecError, make_model_client


def agent_factory(spec: AgentSpec, base_url: str | None = None,
                  client_options: dict | None = None, seed: int = 0,
                  prompt: str = "paper") -> AgentFactory:  # fmt: skip
    """Fresh COMPASS agents for ``spec`` (``scripted:NAME``, ``llm:MODEL``, ``code:MODEL``,
    ``local:GGUF``, ``hf:CKPT``), each a policy the one episode loop plays (the scripted and
    code agents through their turns); ``prompt``: the model agents' system prompt variant."""
    from travelgym.suites.compass.agents.turn_policy import turn_agent

    if spec.kind == "scripted":
        from travelgym.suites.compass.agents.scripted import ScriptedAgent

        return AgentFactory(lambda: turn_agent(ScriptedAgent(spec.arg, seed=seed)))
    model = spec.text if spec.kind in ("local", "hf") else spec.arg
    client = make_model_client(model, base_url, client_options)
    if spec.kind == "code":
        from travelgym.suites.compass.agents.code_agent import CodeAgent

        return AgentFactory(lambda: turn_agent(CodeAgent(client, prompt=prompt)), [client])
    from travelgym.runner.loop import ChatPolicy, PolicyAgent
    from travelgym.suites.compass.agents.llm_agent import MAX_STEPS_PER_TURN

    # the tool-calling model is a policy the one episode loop plays over the environment
    name = f"llm:{client.model}" if spec.kind == "llm" else spec.text
    return AgentFactory(lambda: PolicyAgent(ChatPolicy(client, native_tools=True), name,
                                            MAX_STEPS_PER_TURN, {"prompt": prompt}), [client])  # fmt: skip


def parse_user_spec(text: str) -> tuple[str, str | None]:
    """``template``, ``human`` (a person at the terminal), ``llm:MODEL``, ``local:GGUF`` or
    ``hf:CKPT`` -> (backend kind, model for make_client)."""
    if text in ("template", "human"):
        return text, None
    kind, sep, model = (text or "").partition(":")
    if kind == "llm" and sep and model:
        return "llm", model
    if kind in ("local", "hf") and sep and model:
        return "llm", text
    raise SpecError(
        f"bad user spec {text!r}: use template, human, llm:MODEL, local:smollm2 or hf:CKPT"
    )


def user_backend(text: str, base_url: str | None = None, client_options: dict | None = None):
    """The simulated user's backend for a user spec."""
    kind, model = parse_user_spec(text)
    if kind == "template":
        from travelgym.suites.compass.user.template import TemplateUserBackend

        return TemplateUserBackend()
    if kind == "human":
        from travelgym.suites.compass.user.human import HumanUserBackend

        return HumanUserBackend()
    from travelgym.suites.compass.user.llm_backend import LLMUserBackend

    return LLMUserBackend(make_model_client(model, base_url, client_options))
