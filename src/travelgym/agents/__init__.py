"""The shared agents layer: suite-agnostic agent loops and action formats over a tool registry
(the tool session that records calls, the native tool-calling step, sandboxed code execution,
the ReAct text format and the B2T action format). Suites add their prompts, reply formats and
scripted baselines."""
