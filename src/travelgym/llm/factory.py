"""Pick a backend from a model spec: ``local:<gguf>`` for a llama.cpp server this process runs,
``hf:<checkpoint>`` for a transformers model in this process, ``litellm/<model>`` for LiteLLM,
else OpenAI-compatible."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from travelgym.llm.protocol import ChatClient

LITELLM_PREFIX = "litellm/"
LOCAL_PREFIX = "local:"
HF_PREFIX = "hf:"
# models that are not endpoints: the model of the running inspect_ai sample (the inspect_ai
# integration) and a person at the terminal (``travelgym play``)
INSPECT_PREFIX = "inspect:"
HUMAN_PREFIX = "human:"
# a policy written in Python (``--agent package.module:factory``): travelgym.llm.python_policy
PYTHON_PREFIX = "python:"


def make_client(
    spec_model: str,
    base_url: str | Sequence[str] | None = None,
    api_key: str | None = None,
    **kwargs: Any,
) -> ChatClient:
    """A chat client for ``spec_model``.

    ``local:smollm2`` / ``local:PATH.gguf`` -> :class:`LocalChatClient` (starts llama.cpp);
    ``hf:CHECKPOINT_DIR`` / ``hf:smollm2`` -> :class:`HFChatClient` (transformers, in process);
    ``litellm/anthropic/claude-...`` -> :class:`LiteLLMChatClient` for ``anthropic/claude-...``;
    ``inspect:NAME`` -> :class:`InspectChatClient` (the running inspect_ai sample's model);
    ``human:NAME`` -> :class:`HumanChatClient` (a person at the terminal, ``travelgym play``);
    ``python:MODULE:FACTORY`` -> :class:`PythonPolicyClient` (a policy written in Python);
    anything else (``gpt-4o``, ``Qwen/Qwen3-8B`` on a vLLM server) -> :class:`OpenAIChatClient`.
    Other keyword arguments (``timeout_s``, ``max_retries``, ``budget``, ``cache``,
    ``default_params``, ...) go to the client. ``base_url`` may be several URLs (a list) for the
    OpenAI-compatible client, which balances over them; LiteLLM takes one.
    """
    if spec_model.startswith(LOCAL_PREFIX):
        from travelgym.llm.local_client import LocalChatClient

        return LocalChatClient(spec_model[len(LOCAL_PREFIX) :], **kwargs)
    if spec_model.startswith(HF_PREFIX):
        from travelgym.llm.hf_client import HFChatClient

        if not spec_model[len(HF_PREFIX) :]:
            raise ValueError(f"empty checkpoint in {spec_model!r}")
        return HFChatClient(spec_model[len(HF_PREFIX) :], **kwargs)
    if spec_model.startswith(INSPECT_PREFIX):
        from travelgym.llm.inspect_client import InspectChatClient

        return InspectChatClient(spec_model[len(INSPECT_PREFIX) :], **kwargs)
    if spec_model.startswith(PYTHON_PREFIX):
        from travelgym.llm.python_policy import PythonPolicyClient

        return PythonPolicyClient(spec_model[len(PYTHON_PREFIX) :])
    if spec_model.startswith(HUMAN_PREFIX):
        from travelgym.llm.human_client import HumanChatClient

        return HumanChatClient(spec_model[len(HUMAN_PREFIX) :], **kwargs)
    if spec_model.startswith(LITELLM_PREFIX):
        from travelgym.llm.litellm_client import LiteLLMChatClient

        model = spec_model[len(LITELLM_PREFIX) :]
        if not model:
            raise ValueError(f"empty model name in {spec_model!r}")
        if base_url is not None and not isinstance(base_url, str):
            from travelgym.llm.endpoints import parse_base_urls

            urls = parse_base_urls(base_url)
            if len(urls) > 1:
                raise ValueError(f"{spec_model}: LiteLLM takes one base URL, not {len(urls)} "
                                 "(several servers need an OpenAI-compatible model spec)")  # fmt: skip
            base_url = urls[0] if urls else None
        return LiteLLMChatClient(model, base_url=base_url, api_key=api_key, **kwargs)
    from travelgym.llm.openai_client import OpenAIChatClient

    return OpenAIChatClient(spec_model, base_url=base_url, api_key=api_key, **kwargs)
