"""Small helpers shared by the Behavior2Trip generator modules."""

from __future__ import annotations

import math
import re
import zlib
from functools import lru_cache

import numpy as np


def rng(seed: int, *component: str) -> np.random.Generator:
    """The generator of one component (e.g. ``("hotels", "Beijing")``) under ``seed``."""
    return np.random.default_rng([seed, zlib.crc32("/".join(component).encode())])


def city_slug(name: str) -> str:
    """``"Xi'an"`` -> ``"xian"``: the ``city_id`` of a city."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def allocate(total: int, weights: list[float], minimum: int = 0) -> list[int]:
    """Split ``total`` into integers proportional to ``weights`` (largest remainder)."""
    spare = total - minimum * len(weights)
    raw = [spare * w / sum(weights) for w in weights]
    counts = [math.floor(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: (-(raw[i] - counts[i]), i))
    for i in order[: spare - sum(counts)]:
        counts[i] += 1
    return [c + minimum for c in counts]


def offset(lat: float, lon: float, km: float, bearing: float) -> tuple[float, float]:
    """The point ``km`` away from (lat, lon) in direction ``bearing`` (radians), 5 decimals."""
    dlat = km / 111.0 * math.cos(bearing)
    dlon = km / (111.0 * math.cos(math.radians(lat))) * math.sin(bearing)
    return round(lat + dlat, 5), round(lon + dlon, 5)


_U32 = 0xFFFFFFFF
_DOUBLE = 1.0 / 9007199254740992.0  # 2**-53


class Draws:
    """The scalar draws of a numpy ``Generator`` over PCG64 at a fraction of their call cost:
    the same numbers in the same order (``integers``, ``random``, ``uniform`` and small
    ``choice(n, k, replace=False)`` re-done in Python on the bit generator's raw 64-bit
    outputs, as numpy's C code does them; ``normal`` and ``lognormal`` passed through).

    numpy serves 32-bit draws (bounded integers) from halves of one 64-bit output and keeps the
    spare half in the bit generator; here the spare half is kept in this object instead, so
    every draw of the generator must go through it once it is wrapped."""

    def __init__(self, gen: np.random.Generator) -> None:
        self.gen = gen
        self._raw = gen.bit_generator.random_raw
        self._spare: int | None = None

    def _u32(self) -> int:
        if self._spare is not None:
            out, self._spare = self._spare, None
            return out
        x = self._raw()
        self._spare = x >> 32
        return x & _U32

    def _bounded(self, rng: int) -> int:
        """Uniform on [0, rng] (Lemire's method, as numpy's ``bounded_lemire_uint32``)."""
        if rng == 0:
            return 0
        if rng == _U32:
            return self._u32()
        if rng > _U32:
            raise ValueError("ranges over 2**32 are not supported")
        excl = rng + 1
        m = self._u32() * excl
        if (m & _U32) < excl:
            threshold = (_U32 - rng) % excl
            while (m & _U32) < threshold:
                m = self._u32() * excl
        return m >> 32

    def integers(self, low: int, high: int | None = None) -> int:
        """``Generator.integers(low, high)`` (int64, one value); :meth:`_bounded` inlined for
        the common case, as this is the most frequent draw."""
        if high is None:
            low, high = 0, low
        rng = high - 1 - low
        if rng < 0:
            raise ValueError("high <= low")
        if rng == 0 or rng >= _U32:
            return low + self._bounded(rng)
        spare = self._spare
        if spare is None:
            x = self._raw()
            self._spare = x >> 32
            spare = x & _U32
        else:
            self._spare = None
        excl = rng + 1
        m = spare * excl
        if (m & _U32) < excl:
            threshold = (_U32 - rng) % excl
            while (m & _U32) < threshold:
                m = self._u32() * excl
        return low + (m >> 32)

    def random(self, size=None):
        """``Generator.random()``; with ``size``, the generator's own (64-bit draws only)."""
        if size is not None:
            return self.gen.random(size)
        return (self._raw() >> 11) * _DOUBLE

    def uniform(self, low: float, high: float) -> float:
        low, high = float(low), float(high)
        return low + (high - low) * ((self._raw() >> 11) * _DOUBLE)

    def normal(self, *args, **kwargs):
        return self.gen.normal(*args, **kwargs)

    def lognormal(self, *args, **kwargs):
        return self.gen.lognormal(*args, **kwargs)

    def choice(self, n: int, size: int, replace: bool = False) -> list[int]:
        """``Generator.choice(n, size, replace=False)`` for ``n`` up to 10,000: Floyd's
        sampling, then numpy's Fisher-Yates shuffle of the picks."""
        if replace or n > 10_000 or not 0 <= size <= n:
            raise ValueError("only small samples without replacement")
        out: list[int] = []
        seen: set[int] = set()
        for j in range(n - size, n):
            val = self._bounded(j)
            if val in seen:
                val = j
            seen.add(val)
            out.append(val)
        for i in range(size - 1, 0, -1):
            j = self._bounded(i)
            out[i], out[j] = out[j], out[i]
        return out


def _matches_numpy() -> bool:
    """Whether :class:`Draws` gives the installed numpy's numbers (a fixed mixed sequence);
    a numpy whose algorithms differ gets the generator itself (:func:`draws`)."""
    a, b = np.random.default_rng([7, 31]), Draws(np.random.default_rng([7, 31]))
    for n in (1, 2, 3, 7, 12, 400, 90_000_000, 2**32 - 1, 2**32):
        for _ in range(3):
            if int(a.integers(5, 5 + n)) != b.integers(5, 5 + n) or a.random() != b.random():
                return False
        if a.uniform(0, 6.2832) != b.uniform(0, 6.2832) or a.normal(2, 1) != b.normal(2, 1):
            return False
        k = min(n, 4)
        if n <= 400 and [int(x) for x in a.choice(n, k, replace=False)] != b.choice(n, k):
            return False
    return a.random(3).tolist() == b.random(3).tolist() and int(a.integers(9)) == b.integers(9)


@lru_cache(maxsize=1)
def _fast_draws() -> bool:
    return _matches_numpy()


def draws(gen: np.random.Generator):
    """``gen`` wrapped in :class:`Draws` when that reproduces this numpy, else ``gen``."""
    return Draws(gen) if _fast_draws() else gen
