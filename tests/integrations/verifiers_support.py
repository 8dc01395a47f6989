"""Shared by the verifiers environment's tests. verifiers 0.4 pins ``openai<3``, which the main
CI environment (the ``local`` extra) cannot have, so these tests run in a virtual environment of
their own (``scripts/test_verifiers.sh``, which sets ``TRAVELGYM_REQUIRE_VERIFIERS=1``): there a
missing verifiers or ``travelgym-env`` fails them; anywhere else they skip."""

from __future__ import annotations

import os

import pytest

from travelgym.training.extras import missing_modules

MODULES = ("verifiers", "travelgym_env")


def require_verifiers() -> None:
    """Skip the calling test module, or fail it where the verifiers tests must run."""
    missing = missing_modules(MODULES)
    if not missing:
        return
    message = (
        f"the verifiers environment is not installed (missing {', '.join(missing)}); "
        "scripts/test_verifiers.sh runs these tests in .venv-verifiers"
    )
    if os.environ.get("TRAVELGYM_REQUIRE_VERIFIERS", "") not in ("", "0"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message, allow_module_level=True)


def assistant_actions(trace) -> list[dict]:
    """The assistant messages of a verifiers trace, as OpenAI-style dicts (the actions the
    environment was given)."""
    from verifiers.v1.dialects.chat import message_to_wire

    messages = trace.branches[-1].messages if trace.branches else []
    return [message_to_wire(m) for m in messages if m.role == "assistant"]
