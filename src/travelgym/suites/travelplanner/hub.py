"""Read TravelPlanner straight from the Hugging Face Hub's ``osunlp/TravelPlanner`` (or another
dataset of its columns) through the ``datasets`` library: ``NAME`` or ``NAME:SPLIT``.

TravelPlanner names each configuration after its split (``load_dataset("osunlp/TravelPlanner",
"validation")``), so a split is loaded as ``load_dataset(NAME, SPLIT, split=SPLIT)``.
``datasets`` answers from its local cache when it is offline (``HF_HUB_OFFLINE=1`` or
``HF_DATASETS_OFFLINE=1``, or no network) and the split was fetched once before; travelgym
itself never asks for the network. ``datasets`` is imported only here, on this path.
"""

from __future__ import annotations

import re
from pathlib import Path

from travelgym.suites.travelplanner.dataset import SPLITS, SUFFIXES, DatasetError, read_rows
from travelgym.suites.travelplanner.records import Query

HUB_NAME = re.compile(r"(?P<name>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?::(?P<split>[\w-]+))?")
EXTRA = "datasets"  # the pyproject extra that carries the datasets library
MAX_ERROR = 200


def parse_hub_name(text: str) -> tuple[str, str | None] | None:
    """``(name, split)`` of ``OWNER/NAME[:SPLIT]``, else ``None`` (not a Hub dataset name)."""
    match = HUB_NAME.fullmatch(text.strip())
    if match is None or Path(match.group("name")).suffix.lower() in SUFFIXES:
        return None  # "exports/validation.csv" is a path, even one that is missing
    return match.group("name"), match.group("split")


def read_hub_dataset(text: str, split: str | None = None) -> dict[str, list[Query]]:
    """The queries of ``OWNER/NAME[:SPLIT]`` by split: the split the name or ``split`` gives,
    else every split (train, validation and test). Raises :class:`DatasetError` (one line)
    when ``datasets`` is missing or a split cannot be loaded, saying how to get it."""
    parsed = parse_hub_name(text)
    if parsed is None:
        raise DatasetError(f"{text!r} is not a Hugging Face dataset name (OWNER/NAME[:SPLIT])")
    name, named = parsed
    if named is not None and split is not None and named != split:
        raise DatasetError(f"{text}: names split {named!r} but --split is {split!r}")
    wanted = named or split
    if wanted is not None and wanted not in SPLITS:
        raise DatasetError(f"{text}: unknown split {wanted!r}; splits: {', '.join(SPLITS)}")
    try:
        import datasets
    except ImportError:
        raise DatasetError(f"--dataset {name} needs the `datasets` library: pip install "
                           f"'travelgym[{EXTRA}]' (or pass --dataset PATH, a file or directory "
                           f"exported from it)") from None  # fmt: skip
    return {s: _load_split(datasets, name, s) for s in ([wanted] if wanted else SPLITS)}


def _load_split(datasets, name: str, split: str) -> list[Query]:
    source = f"{name}:{split}"
    try:
        data = datasets.load_dataset(name, split, split=split)
    except Exception as exc:  # noqa: BLE001 - the Hub, the cache and the builders raise many types
        lines = str(exc).strip().splitlines() or [type(exc).__name__]
        reason = lines[0] if len(lines[0]) <= MAX_ERROR else lines[0][: MAX_ERROR - 3] + "..."
        raise DatasetError(f"{source}: cannot load it through `datasets` ({reason}); fetch it "
                           f"once with network access (the same command, online), which fills "
                           f"the local Hugging Face cache that offline runs read, or pass "
                           f"--dataset PATH to a file or directory exported from it") from None  # fmt: skip
    return read_rows(iter(data), split, source, list(data.column_names))
