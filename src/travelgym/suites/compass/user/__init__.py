"""The COMPASS user simulator: persona-driven decisions, with template and LLM backends."""

from travelgym.suites.compass.user.simulator import UserReply, UserSimulator

__all__ = ["UserReply", "UserSimulator"]
