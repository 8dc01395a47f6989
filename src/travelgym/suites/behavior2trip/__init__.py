"""Behavior2Trip: behaviour-aware personalised trip planning in 24 Chinese cities."""
