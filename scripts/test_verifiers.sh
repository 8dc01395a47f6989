#!/usr/bin/env bash
# The verifiers environment's tests, in a virtual environment of their own: verifiers 0.4 pins
# openai<3 and mcp==2.0.0, and the main environment's `local` extra needs openai>3. The same
# environment also runs the OpenAI client and MCP server tests, so travelgym is checked on the
# openai 2.x and mcp 2.0.0 that verifiers brings. A missing verifiers fails here (CI semantics).
set -euo pipefail
cd "$(dirname "$0")/.."

export PIP_DISABLE_PIP_VERSION_CHECK=1
VENV="${TRAVELGYM_VERIFIERS_VENV:-.venv-verifiers}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"
# no torch, no local extra: the test extra, the verifiers extra and the environment package
"$PY" -m pip install -q -e '.[test,verifiers]' -e environments/travelgym_env
"$PY" - <<'PYEOF'
from importlib.metadata import version

print("verifiers env:", ", ".join(f"{p} {version(p)}" for p in ("verifiers", "openai", "mcp")))
PYEOF

export CI="${CI:-true}" TRAVELGYM_REQUIRE_VERIFIERS=1
set +e
"$PY" -m pytest -q -p no:cacheprovider \
  tests/integrations/test_verifiers_env.py \
  tests/llm/test_openai_client.py \
  tests/toolkit/test_mcp_server.py tests/toolkit/test_mcp_stdio.py
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "test_verifiers: pytest collected no tests" >&2
  exit 1
fi
exit "$code"
