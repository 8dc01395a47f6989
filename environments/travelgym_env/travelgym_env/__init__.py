"""The ``travelgym-env`` verifiers environment: every installed travelgym suite (``vf-eval
travelgym-env --env.taskset.suite compass``). verifiers finds the taskset, the environment and
the harness through ``__all__``; the code is :mod:`travelgym.integrations.verifiers_env`."""

from travelgym.integrations.verifiers_env import (
    TravelgymEnv,
    TravelgymHarness,
    TravelgymTaskset,
    load_environment,
)

__all__ = ["TravelgymEnv", "TravelgymHarness", "TravelgymTaskset", "load_environment"]
