"""Agents: an LLM tool-calling agent, a code agent, and scripted search baselines."""
