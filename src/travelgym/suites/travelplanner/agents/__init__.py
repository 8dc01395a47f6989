"""TravelPlanner's agents: the scripted baseline (sole-planning and through the tools) and the
LLM agents over the shared loops (native tool calls, ReAct, the B2T action format)."""
