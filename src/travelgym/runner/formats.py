"""Episode formats by suite and version: how a line of ``episodes.jsonl`` is read.

Every line carries its ``suite`` and ``format_version``. A line of the current version is
validated by the suite's model; a line of an older version is first brought up to date by that
version's upgrader (so runs written by an older release stay readable and are never mistaken
for damage). A version this release does not know is an error, as is any line that does not
validate or carries fields its model does not have.

To change an episode model incompatibly: bump the suite's ``episode_format`` and add an upgrader
from the previous version to its ``episode_upgraders`` (``{"1": upgrade_1_to_2}``: a function
from the old line's dict to a dict of the next version); see :class:`travelgym.core.Suite`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

Upgrader = Callable[[dict[str, Any]], dict[str, Any]]


class LineProblem(ValueError):
    """Why one line is not a readable episode (a short reason, without file or line)."""


@dataclass
class SuiteFormat:
    """One suite's episode model (imported on first use), its current version and upgraders."""

    suite: str
    load_model: Callable[[], type[BaseModel]]
    current: str
    upgraders: dict[str, Upgrader] = field(default_factory=dict)

    @property
    def model(self) -> type[BaseModel]:
        return self.load_model()

    @property
    def versions(self) -> list[str]:
        return sorted({self.current, *self.upgraders})


def suite_format(name: str) -> SuiteFormat:
    """The episode format of the installed suite ``name`` (its model, version and upgraders)."""
    from travelgym.core.registry import get_suite

    suite = get_suite(name)
    return SuiteFormat(name, lambda: suite.episode_model, suite.episode_format,
                       dict(suite.episode_upgraders))  # fmt: skip


def known_suites() -> list[str]:
    """Names of the suites whose episodes this installation reads."""
    from travelgym.core.registry import suite_names

    return suite_names()


def suite_of_model(model: type[BaseModel]) -> str:
    """The suite whose episodes ``model`` holds (``ValueError`` for a model of no suite)."""
    from travelgym.core.registry import all_suites

    for suite in all_suites():
        if suite.episode_model is model:
            return suite.name
    raise ValueError(f"{model.__name__} is not an episode model of any suite")


def upgrade(obj: dict[str, Any], fmt: SuiteFormat) -> dict[str, Any]:
    """``obj`` brought to ``fmt``'s current version by its upgraders, one version at a time."""
    seen = set()
    while (version := obj.get("format_version")) != fmt.current:
        if version in seen or version not in fmt.upgraders:
            known = ", ".join(fmt.versions)
            raise LineProblem(f"format_version {version!r} is not one this travelgym reads for "
                              f"{fmt.suite} (it reads {known}); a newer travelgym wrote it?")  # fmt: skip
        seen.add(version)
        obj = fmt.upgraders[version](dict(obj))
    return obj


def parse_episode(obj: Any, suite: str | None) -> tuple[str, dict[str, Any], BaseModel]:
    """``(suite, current-version dict, model)`` of one decoded line, read by the rules of its own
    version; ``suite``: the suite the run is of (``None``: the line's own). Raises
    :class:`LineProblem` saying what is wrong."""
    if not isinstance(obj, dict):
        raise LineProblem(f"not an episode: a JSON {type(obj).__name__}, not an object")
    line_suite = obj.get("suite")
    known = known_suites()
    if line_suite not in known:
        raise LineProblem(f"not an episode: suite {line_suite!r} is none of {', '.join(known)}")
    if suite is not None and line_suite != suite:
        raise LineProblem(f"a {line_suite} episode in a {suite} run")
    if "format_version" not in obj:
        raise LineProblem("not an episode: no format_version")
    fmt = suite_format(line_suite)
    obj = upgrade(obj, fmt)
    model = fmt.model
    unknown = sorted(set(obj) - set(model.model_fields))
    if unknown:
        raise LineProblem(f"not a {line_suite} episode (format {fmt.current}): unknown field(s) "
                          f"{', '.join(map(repr, unknown[:5]))}")  # fmt: skip
    try:
        episode = model.model_validate(obj)
    except ValidationError as exc:
        raise LineProblem(f"not a {line_suite} episode (format {fmt.current}): "
                          f"{_first_error(exc)}") from None  # fmt: skip
    return line_suite, obj, episode


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"]) or "the episode"
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"
