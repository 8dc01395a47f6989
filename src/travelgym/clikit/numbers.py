"""Number parameters that refuse what click's float types let through: ``nan`` (every
comparison with it is false, so a range check passes it and every later threshold test silently
fails) and ``inf``."""

from __future__ import annotations

import math
from typing import Any

import click


def _finite(kind: click.ParamType, number: float, value: Any, param: click.Parameter | None,
            ctx: click.Context | None) -> float:  # fmt: skip
    if not math.isfinite(number):
        kind.fail(f"{value!r} is not a finite number.", param, ctx)
    return number


class FiniteFloat(click.types.FloatParamType):
    """``float`` that refuses ``nan`` and ``inf`` (a usage error); shown as ``FLOAT``."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:  # fmt: skip
        return _finite(self, super().convert(value, param, ctx), value, param, ctx)


class FiniteFloatRange(click.FloatRange):
    """:class:`click.FloatRange` that also refuses ``nan`` and ``inf`` (a usage error)."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:  # fmt: skip
        return _finite(self, super().convert(value, param, ctx), value, param, ctx)
