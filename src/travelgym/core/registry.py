"""Suites by name, found through the ``travelgym.suites`` entry-point group: a suite in any
installed package appears here with no change to travelgym."""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import entry_points

from travelgym.core.capabilities import CAPABILITIES
from travelgym.core.errors import UnknownSuite, Unsupported
from travelgym.core.options import declared_flags, is_switch, suite_flag_models
from travelgym.core.suite import Suite

GROUP = "travelgym.suites"


def _load(ep) -> Suite:
    cls = ep.load()
    if not (isinstance(cls, type) and issubclass(cls, Suite)):
        raise TypeError(f"{ep.value} is not a travelgym Suite class")
    if cls.name != ep.name:
        raise TypeError(f"{ep.value} names suite {cls.name!r}")
    return cls()


@lru_cache(maxsize=1)
def _registry() -> tuple[dict[str, Suite], dict[str, str]]:
    """``(loaded suites in listing order, {name: why it did not load})``: a broken suite of
    another package is set aside with its reason, never taking the command line down."""
    found: dict[str, Suite] = {}
    broken: dict[str, str] = {}
    for ep in entry_points(group=GROUP):
        if ep.name in found or ep.name in broken:
            continue  # the first distribution on the path wins, as for imports
        try:
            found[ep.name] = _load(ep)
        except Exception as exc:  # noqa: BLE001 - any failure of foreign code to load
            broken[ep.name] = f"{ep.value}: {type(exc).__name__}: {exc}"
    ordered = dict(sorted(found.items(), key=lambda item: (item[1].order, item[0])))
    for name, why in _flag_clashes(list(ordered.values())).items():
        broken[name] = why
        del ordered[name]
    return ordered, broken


def _flag_clashes(suites: list[Suite]) -> dict[str, str]:
    """Suites whose command-line flags cannot share a command with those of a suite listed
    before them (a switch in one, a valued flag in the other), with the clash named."""
    shapes: dict[tuple[str, str], tuple[str, bool]] = {}
    clashes: dict[str, str] = {}
    for suite in suites:
        mine: dict[tuple[str, str], bool] = {}
        why = None
        flags = [f for model in suite_flag_models(suite) for f in declared_flags(model).items()]
        for name, (info, meta) in flags:
            for command in meta["commands"]:
                switch = is_switch(info)
                other = shapes.get((command, name))
                if other is not None and other[1] != switch and why is None:
                    flag = "--" + name.replace("_", "-")
                    kind = ("is a switch", "takes a value")
                    why = (f"its flag {flag} of `{command}` {kind[not switch]}, but {other[0]}'s "
                           f"{flag} {kind[not other[1]]}: rename one of them")  # fmt: skip
                mine[(command, name)] = switch
        if why is not None:
            clashes[suite.name] = why
            continue
        for key, switch in mine.items():
            shapes.setdefault(key, (suite.name, switch))
    return clashes


def set_aside(name: str, why: str) -> None:
    """Set the loaded suite ``name`` aside as broken with the reason ``why`` (e.g. a flag that
    clashes with one of travelgym's own options of a command)."""
    found, broken = _registry()
    if name in found:
        del found[name]
        broken[name] = why


def _suites() -> dict[str, Suite]:
    return _registry()[0]


def broken_suites() -> dict[str, str]:
    """Registered suites that failed to load, with the reason (``travelgym suites`` lists them)."""
    return dict(_registry()[1])


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
        if name in broken_suites():
            raise UnknownSuite(f"suite {name!r} is installed but did not load: "
                               f"{broken_suites()[name]}") from None  # fmt: skip
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
    _registry.cache_clear()
