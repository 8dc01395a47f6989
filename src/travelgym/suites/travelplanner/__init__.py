"""TravelPlanner (Xie et al., 2024) as a travelgym suite: its dataset and database ingested
from files the user supplies, sole-planning and two-stage tool modes, and its evaluation (8
commonsense and 5 hard constraints)."""
