"""Number parameters that refuse what click's ranges let through: ``nan`` (every comparison
with it is false, so a range check passes it and every later threshold test silently fails)
and ``inf``."""

from __future__ import annotations

import math
from typing import Any

import click


class FiniteFloatRange(click.FloatRange):
    """:class:`click.FloatRange` that also refuses ``nan`` and ``inf`` (a usage error)."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:  # fmt: skip
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number
