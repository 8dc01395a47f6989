"""Analysis of finished runs: COMPASS metrics, statistics and plots (computed from trajectories)."""

from travelgym.suites.compass.analysis.metrics import analyze_episodes, analyze_runs

__all__ = ["analyze_episodes", "analyze_runs"]
