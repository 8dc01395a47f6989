"""The core of travelgym: the :class:`Suite` protocol every benchmark implements, the shared
episode fields, and the registry that finds installed suites."""

from travelgym.core.capabilities import (
    Annotation,
    ExactGroundTruth,
    RawIngest,
    RunAnalysis,
    TaskGeneration,
)
from travelgym.core.episode import EpisodeBase
from travelgym.core.errors import UnknownSuite, Unsupported, UserError
from travelgym.core.registry import all_suites, capable, get_suite, require, suite_names
from travelgym.core.suite import (
    AgentFactory,
    AgentKind,
    BuiltData,
    ProgressTally,
    Suite,
    SuiteOptions,
    SuiteRun,
    suite_flag,
)

__all__ = [
    "AgentFactory", "AgentKind", "Annotation", "RunAnalysis", "BuiltData", "EpisodeBase", "ExactGroundTruth",
    "ProgressTally", "RawIngest", "Suite", "SuiteOptions", "SuiteRun", "TaskGeneration",
    "UnknownSuite", "Unsupported", "UserError", "all_suites", "capable", "get_suite",
    "require", "suite_flag", "suite_names",
]  # fmt: skip
