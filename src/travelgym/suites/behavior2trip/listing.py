"""What ``travelgym tasks behavior2trip`` and ``travelgym stats behavior2trip`` print: the public
view of instances (never the hidden profile, nor anything derived from it) and the Table 2
comparison of the instance manifests."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from travelgym.suites.behavior2trip.instruction import Instruction

# Table 2's measures in the paper's order, with the column titles the text table uses
TABLE2_COLUMNS = (("samples", "samples"), ("actions", "actions"), ("preferences", "prefs"),
                  ("pois", "POIs"), ("days", "days"), ("companions", "companions"))  # fmt: skip
DIFFICULTY_ORDER = ("easy", "medium", "hard")


class PublicInstance(BaseModel):
    """An instance as an agent may see it listed: its id, split, level, the instruction and the
    length of the behaviour trajectory (the profile stays hidden: it is the answer key)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    instance_id: str
    split: Literal["train", "test"]
    difficulty: Literal["easy", "medium", "hard"]
    instruction: Instruction
    actions: int  # trajectory actions

    @property
    def task_id(self) -> str:
        return self.instance_id


def public_record(instance: Any) -> PublicInstance:
    """The public view of an :class:`~travelgym.suites.behavior2trip.instances.Instance`."""
    return PublicInstance(instance_id=instance.instance_id, split=instance.split,
                          difficulty=instance.difficulty, instruction=instance.instruction,
                          actions=len(instance.trajectory))  # fmt: skip


def format_instances(records: Sequence[PublicInstance]) -> str:
    """One line per instance: id, difficulty, from, to, days, travellers, budget, actions."""
    lines = [f"{'instance':<22} {'difficulty':<10} {'from':<10} {'to':<10} {'days':>4} "
             f"{'travellers':>10} {'budget CNY':>10} {'actions':>7}"]  # fmt: skip
    for x in records:
        ask = x.instruction
        lines.append(f"{x.instance_id:<22} {x.difficulty:<10} {ask.departure_city:<10} "
                     f"{ask.destination_city:<10} {ask.days:>4} {ask.travellers:>10} "
                     f"{f'{ask.budget_cny:,}' if ask.budget_cny else '-':>10} {x.actions:>7}")  # fmt: skip
    lines.append(f"{len(records)} instances")
    return "\n".join(lines)


def _cell(entry: Any) -> str:
    """``measured | paper`` of one Table 2 measure (``?`` where the manifest lacks it)."""
    if not isinstance(entry, dict):
        return "?"
    measured, paper = entry.get("measured"), entry.get("paper")
    if isinstance(measured, int | float) and measured == int(measured) and measured >= 100:
        return f"{measured:,.0f} | {paper:,.0f}"
    return f"{measured} | {paper}"


def format_table2(stats: dict[str, Any]) -> list[str]:
    """Lines comparing the instances with the paper's Table 2 (from
    :func:`~travelgym.suites.behavior2trip.instances.instance_stats`): per split and difficulty
    each measure as ``measured | paper``, then the largest relative difference."""
    splits = stats.get("splits") or {}
    widths = [len("split"), len("difficulty")] + [12] * len(TABLE2_COLUMNS)
    head = ["split", "difficulty"] + [title for _, title in TABLE2_COLUMNS]
    rows: list[list[str]] = []
    notes: list[str] = []
    worst: tuple[float, str] | None = None
    for split, entry in splits.items():
        if not entry:
            notes.append(f"  {split}: no instance file")
            continue
        levels = entry.get("by_difficulty")
        if not levels:
            notes.append(f"  {split}: its manifest holds no statistics ({entry.get('path')})")
            continue
        for level in _ordered(levels):
            measures = levels[level]
            rows.append([split, level] + [_cell(measures.get(key)) for key, _ in TABLE2_COLUMNS])
            for key, _ in TABLE2_COLUMNS:
                rel = (measures.get(key) or {}).get("rel_diff")
                if isinstance(rel, int | float) and (worst is None or abs(rel) > abs(worst[0])):
                    worst = (rel, f"{split} {level} {key}")
    for row in [head, *rows]:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = [f"instances against the paper's Table 2 (measured | paper; total "
             f"{stats.get('total', 0):,}):"]  # fmt: skip
    for row in [head, *rows]:
        lines.append("  " + "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                                      for i, (c, w) in enumerate(zip(row, widths, strict=True))))  # fmt: skip
    lines += notes
    if worst is not None:
        lines.append(f"  largest relative difference: {100 * worst[0]:+.1f}% ({worst[1]})")
    return lines


def _ordered(levels: Iterable[str]) -> list[str]:
    """Difficulties in the paper's order (Easy, Medium, Hard), others after."""
    levels = list(levels)
    known = [d for d in DIFFICULTY_ORDER if d in levels]
    return known + sorted(d for d in levels if d not in DIFFICULTY_ORDER)
