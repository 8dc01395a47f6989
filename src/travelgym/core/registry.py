"""Suites by name, found through the ``travelgym.suites`` entry-point group: a suite in any
installed package appears here with no change to travelgym."""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import entry_points

from travelgym.core.errors import UnknownSuite, Unsupported
from travelgym.core.suite import CAPABILITIES, Suite

GROUP = "travelgym.suites"


@lru_cache(maxsize=1)
def _suites() -> dict[str, Suite]:
    found: dict[str, Suite] = {}
    for ep in entry_points(group=GROUP):
        if ep.name in found:
            continue  # the first distribution on the path wins, as for imports
        cls = ep.load()
        if not (isinstance(cls, type) and issubclass(cls, Suite)):
            raise TypeError(f"entry point {ep.name} = {ep.value} is not a travelgym Suite class")
        if cls.name != ep.name:
            raise TypeError(f"entry point {ep.name} names suite {cls.name!r}")
        found[ep.name] = cls()
    return dict(sorted(found.items(), key=lambda item: (item[1].order, item[0])))


def suite_names() -> list[str]:
    """Names of the installed suites, in listing order (``Suite.order``, then name)."""
    return list(_suites())


def all_suites() -> list[Suite]:
    """The installed suites, in listing order."""
    return list(_suites().values())


def get_suite(name: str) -> Suite:
    """The suite called ``name`` (:class:`UnknownSuite` naming the installed ones otherwise)."""
    try:
        return _suites()[name]
    except KeyError:
        raise UnknownSuite(f"no suite {name!r}: installed suites are "
                           f"{', '.join(suite_names()) or 'none'}") from None  # fmt: skip


def capable(capability: str) -> list[str]:
    """Names of the suites that support ``capability`` (a key of ``CAPABILITIES``)."""
    cap = CAPABILITIES[capability]
    return [s.name for s in all_suites() if isinstance(s, cap)]


def require(name: str, capability: str):
    """Suite ``name`` as its ``capability`` (:class:`Unsupported` when it lacks it)."""
    suite = get_suite(name)
    if not isinstance(suite, CAPABILITIES[capability]):
        others = ", ".join(capable(capability)) or "none"
        raise Unsupported(f"{name} does not support {capability} (suites that do: {others})")
    return suite


def clear_cache() -> None:
    """Forget the suites found so far (tests that install a suite at run time)."""
    _suites.cache_clear()
