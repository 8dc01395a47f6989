"""COMPASS: constrained-optimisation travel planning over a US national-parks booking database."""
