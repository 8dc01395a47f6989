"""Behavior2Trip agents: the B2T-Agent action format, ReAct, and a scripted baseline."""
