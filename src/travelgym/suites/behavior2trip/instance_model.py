"""A Behavior2Trip instance as data: the (trajectory, hidden profile, instruction) triplet with
its hidden witness plan, its id, and the candidate pool its trajectory is checked against.
What generates instances is :mod:`.instance_gen`; their files and slot store
:mod:`.instances`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from travelgym.suites.behavior2trip.actions import Action
from travelgym.suites.behavior2trip.behaviour import SPECS
from travelgym.suites.behavior2trip.behaviour_pool import CandidatePool, PoiCatalog, Thread
from travelgym.suites.behavior2trip.instruction import Instruction
from travelgym.suites.behavior2trip.preferences import poi_matches
from travelgym.suites.behavior2trip.profiles import Profile


class Instance(BaseModel):
    """One (trajectory, profile, instruction) triplet. Agents see ``trajectory`` and
    ``instruction.text``; ``profile`` is hidden (it drives the preference checks), and so is
    ``witness``: a plan passing every applicable check, found while generating
    (:mod:`~travelgym.suites.behavior2trip.witness`). ``noise``: the ``--noise`` level its
    behaviour was drawn at (written only when above 0, so the default files keep their bytes)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    instance_id: str
    split: Literal["train", "test"]
    difficulty: Literal["easy", "medium", "hard"]
    noise: float = Field(default=0.0, ge=0.0, le=1.0)
    instruction: Instruction
    trajectory: list[Action]
    profile: Profile
    witness: str | None = Field(default=None, repr=False)

    @model_serializer(mode="wrap")
    def _without_zero_noise(self, handler):
        data = handler(self)
        if isinstance(data, dict) and not self.noise:
            data.pop("noise", None)
        return data

    @property
    def n_pois(self) -> int:
        return len({a.poi_id for a in self.trajectory})

    @property
    def task_id(self) -> str:
        """The id the run store keys episodes by (the instance id)."""
        return self.instance_id


def instance_id(split: str, difficulty: str, index: int) -> str:
    return f"b2t-{split}-{difficulty}-{index:04d}"


def instance_pool(instance: Instance, catalog: PoiCatalog) -> CandidatePool:
    """The candidate pool of an instance's trajectory rebuilt from the database and the hidden
    profile: a POI is matched when it satisfies the preferences, noise when it does not. With it,
    :func:`~travelgym.suites.behavior2trip.behaviour.validate_trajectory` re-checks a stored trajectory."""
    prefs = instance.profile.preferences
    threads: dict[tuple[str, str], Thread] = {}
    seen: set[str] = set()
    for a in instance.trajectory:
        poi = catalog.pois.get(a.poi_id)
        if poi is None or poi.poi_id in seen:
            continue  # an unknown POI is reported by the validator
        seen.add(poi.poi_id)
        t = threads.setdefault((poi.city, poi.focus), Thread(poi.city, poi.focus, []))
        (t.matched if poi_matches(prefs, poi) else t.noise).append(poi)
    return CandidatePool(instance.instance_id, instance.difficulty, list(threads.values()),
                         SPECS[instance.difficulty].noise[1], instance.noise)  # fmt: skip
