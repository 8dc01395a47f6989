"""Whether repeated runs of one agent may be pooled into one stability row (Table 5).

A stability row reads as "the same experiment, run again": its spread is only meaningful when
every run covers the same tasks of the same task file on the same database. Runs that differ in
any of these are refused unless the caller allows mixing, and a mixed row says what differs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from travelgym.core.errors import UserError
from travelgym.suites.compass.trajectory import Episode

# what must agree, and how to say it when it does not
POOLING_KEYS = {
    "task_ids": "task set",
    "tasks_sha256": "task file",
    "db_content_hash": "database",
}


class MixedRunsError(UserError, ValueError):
    """Runs of one agent differ in what they measured; the message names the runs and keys."""


def run_identity(manifest: Mapping[str, Any], episodes: Iterable[Episode]) -> dict[str, Any]:
    """The values of :data:`POOLING_KEYS` of one run: its manifest's, where the manifest lacks
    ``task_ids`` the set of tasks its episodes cover (``None`` for an unknown hash)."""
    task_ids = manifest.get("task_ids")
    if not isinstance(task_ids, list):
        task_ids = [e.task_id for e in episodes]
    return {
        "task_ids": tuple(sorted(set(map(str, task_ids)))),
        "tasks_sha256": manifest.get("tasks_sha256"),
        "db_content_hash": manifest.get("db_content_hash"),
    }


def differences(identities: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The names (from :data:`POOLING_KEYS`) of the keys on which ``identities`` (run name ->
    :func:`run_identity`) do not all agree."""
    out = []
    for key, name in POOLING_KEYS.items():
        if len({repr(identity.get(key)) for identity in identities.values()}) > 1:
            out.append(name)
    return out


def _describe(key: str, value: Any) -> str:
    if key == "task_ids":
        return f"{len(value)} task(s)"
    return str(value)[:12] if value else "unknown"


def check_poolable(agent: str, identities: Mapping[str, Mapping[str, Any]],
                   run_dirs: Mapping[str, str]) -> None:  # fmt: skip
    """Raise :class:`MixedRunsError` when the runs of ``agent`` may not be pooled."""
    differing = differences(identities)
    if not differing:
        return
    key_of = {name: key for key, name in POOLING_KEYS.items()}
    detail = "; ".join(
        f"{run_dirs[run]}: " + ", ".join(
            f"{name} {_describe(key_of[name], identities[run].get(key_of[name]))}"
            for name in differing
        )
        for run in identities
    )  # fmt: skip
    raise MixedRunsError(f"runs of {agent} differ in {' and '.join(differing)} ({detail}); "
                         "analyse them separately, or pass --allow-mixed to pool them into one "
                         "stability row anyway")  # fmt: skip
