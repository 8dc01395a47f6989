"""travelgym: benchmarks and training environments for LLM travel-planning agents."""

__version__ = "0.1.0"
