"""The benchmark suites: each a package behind :class:`travelgym.core.Suite`, registered through
the ``travelgym.suites`` entry-point group (see ``docs/architecture.md``)."""
