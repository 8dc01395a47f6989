"""A tool session that serves each distinct call once per process (the witness search's
planners read the tools' answers, record no episode)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple


class _Called(NamedTuple):
    """What :class:`CachedToolSession` hands back for a call (the record's ``ok`` and the
    payload the planner reads)."""

    ok: bool
    payload: Any


class CachedToolSession:
    """A tool session for a planner that needs the tools' answers but no episode: each distinct
    call (tool name and arguments) runs once and its payload is served again to every later
    planner (the database is read-only; planners never modify a payload), and no step is
    recorded. At most ``limit`` payloads of searches (up to 50 rows each) and eight times as
    many of MapGuide (small) are kept, the least recently used dropped first."""

    LIMIT = 1024
    ROUTES_PER_SEARCH = 8
    records = False  # planners may skip calls whose answers they would not use

    def __init__(self, context: Any, limit: int = LIMIT) -> None:
        from travelgym.suites.behavior2trip.tools import trips_registry

        self.context, self.limit = context, limit
        self.registry = trips_registry()
        self.memo: dict[tuple, Any] = {}  # what planners derive from the answers (read-only)
        self._results: OrderedDict[tuple[str, str], _Called] = OrderedDict()
        self._routes: OrderedDict[tuple[str, str], _Called] = OrderedDict()

    def call(self, name: str, arguments: dict[str, Any], call_id: str | None = None) -> _Called:
        """The tool's answer to ``arguments`` (run on the first such call only)."""
        key = (name, repr(arguments))  # a dict's repr keeps its order, as the payload does
        kept, limit = self._results, self.limit
        if name == "MapGuide":
            kept, limit = self._routes, self.limit * self.ROUTES_PER_SEARCH
        hit = kept.get(key)
        if hit is None:
            hit = kept[key] = self._run(name, arguments)
            if len(kept) > limit:
                kept.popitem(last=False)
        else:
            kept.move_to_end(key)
        return hit

    def _run(self, name: str, arguments: dict[str, Any]) -> _Called:
        """One call through the registry; MapGuide's four place names (text the registry
        passes on unchanged) go to the tool directly, its content errors as the registry
        reports them, anything else through the registry."""
        if (
            name == "MapGuide"
            and set(arguments) == _MAPGUIDE_ARGS
            and all(
                type(v) is str and v.isprintable() and _encodable(v) for v in arguments.values()
            )
        ):
            from travelgym.toolkit import ContentError
            from travelgym.toolkit.errors import ErrorCategory, ToolResult

            try:
                return _Called(True, self.registry["MapGuide"].func(self.context, **arguments))
            except ContentError as exc:
                failure = ToolResult.failure(name, ErrorCategory.CONTENT, str(exc))
                return _Called(False, failure.payload())
            except Exception:  # noqa: BLE001 - the registry words any other error
                pass
        result = self.registry.call(name, arguments, self.context)
        return _Called(result.ok, result.payload())

    def payload(self, record: _Called) -> Any:
        """The payload of a call's record."""
        return record.payload

    def begin_step(self, think: str) -> None:
        """Steps are not recorded."""

    def add_step(self, **fields: Any) -> None:
        """Steps are not recorded."""


_MAPGUIDE_ARGS = {"origin_cityName", "origin", "destination_cityName", "destination"}


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
