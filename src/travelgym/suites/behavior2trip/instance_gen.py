"""Generating one Behavior2Trip instance: a profile, its behaviour trajectory and a request
that has a witness plan, every draw from the instance's own generator key
``(seed, "instance", split, difficulty, index[, "candidate", k])``."""

from __future__ import annotations

from collections.abc import Sequence

from travelgym.suites.behavior2trip.actions import Action
from travelgym.suites.behavior2trip.behaviour import build_pool, generate_trajectory
from travelgym.suites.behavior2trip.behaviour_pool import CandidatePool, PoiCatalog, PoolError
from travelgym.suites.behavior2trip.behaviour_rules import validate_trajectory
from travelgym.suites.behavior2trip.instance_model import Instance, instance_id
from travelgym.suites.behavior2trip.instruction import Instruction, make_instruction
from travelgym.suites.behavior2trip.preferences import Experience, HistoricalTravelExperiences
from travelgym.suites.behavior2trip.profiles import Draws, Profile, rng_for, sample_profile

MAX_ATTEMPTS = 100


def with_history(profile: Profile, trajectory: Sequence[Action]) -> Profile:
    """The profile with its historical travel experiences: the POIs booked in the trajectory."""
    lists: dict[str, list[Experience]] = {"accommodations": [], "restaurants": [], "attractions": [],
                                          "transportation": []}  # fmt: skip
    target = {"hotel": "accommodations", "restaurant": "restaurants", "attraction": "attractions",
              "flight": "transportation", "train": "transportation", "bus": "transportation"}  # fmt: skip
    for a in trajectory:
        if a.action_type == "book" and a.poi_type in target:
            lists[target[a.poi_type]].append(
                Experience(
                    poi_id=a.poi_id,
                    name=a.poi_name,
                    poi_type=a.poi_type,
                    city=a.city,
                    date=a.timestamp[:10],
                    labels=a.categories,
                )  # fmt: skip
            )
    history = HistoricalTravelExperiences(**lists)
    prefs = profile.preferences.model_copy(update={"historical_travel_experiences": history})
    return profile.model_copy(update={"preferences": prefs})


def _profile_and_pool(catalog: PoiCatalog, d: Draws, pid: str, difficulty: str,
                      rejections: dict[str, int],
                      noise: float = 0.0) -> tuple[Profile, CandidatePool] | None:  # fmt: skip
    """A profile drawn and its candidate pool (at the ``noise`` level); None (counted in
    ``rejections["pool"]``) when the catalog cannot give it one."""
    profile = sample_profile(d, pid, difficulty, rejections)
    try:
        return profile, build_pool(profile, catalog, d, noise)
    except PoolError:
        rejections["pool"] = rejections.get("pool", 0) + 1
        return None


def draw_triplet(catalog: PoiCatalog, d: Draws, pid: str, difficulty: str,
                 rejections: dict[str, int],
                 noise: float = 0.0) -> tuple[Profile, CandidatePool, list[Action]]:  # fmt: skip
    """A consistent profile, its pool and a valid trajectory at the ``noise`` level (redrawing
    what fails)."""
    for _ in range(MAX_ATTEMPTS):
        drawn = _profile_and_pool(catalog, d, pid, difficulty, rejections, noise)
        if drawn is None:
            continue
        profile, pool = drawn
        trajectory = generate_trajectory(profile, pool, d)
        if validate_trajectory(trajectory, pool):
            rejections["trajectory"] = rejections.get("trajectory", 0) + 1
            continue
        return profile, pool, trajectory
    raise RuntimeError(f"{pid}: no valid trajectory after {MAX_ATTEMPTS} attempts")


def generate_instance(catalog: PoiCatalog, seed: int, split: str, difficulty: str, index: int,
                      rejections: dict[str, int] | None = None, candidate: int = 0,
                      noise: float = 0.0) -> Instance:  # fmt: skip
    """Instance ``index`` of (split, difficulty): deterministic in its arguments, with a witness
    plan (a profile whose requests have none is drawn again). ``candidate`` ``k > 0`` draws the
    slot's k-th replacement (:mod:`.instance_slots`) from a key of its own, with the same id;
    ``noise`` the ``--noise`` level of its behaviour (:mod:`.behaviour`; 0: the paper's)."""
    iid = instance_id(split, difficulty, index)
    d = rng_for(seed, "instance", split, difficulty, index,
                *(("candidate", candidate) if candidate else ()))  # fmt: skip
    rejections = rejections if rejections is not None else {}
    for _ in range(MAX_ATTEMPTS):
        profile, _, trajectory = draw_triplet(catalog, d, iid, difficulty, rejections, noise)
        instance = _assemble(catalog, d, iid, split, difficulty, profile, trajectory, rejections,
                             noise)  # fmt: skip
        if instance is not None:
            return instance
    raise RuntimeError(f"{iid}: no satisfiable request after {MAX_ATTEMPTS} profiles")


def _assemble(catalog, d, iid, split, difficulty, profile, trajectory,
              rejections: dict[str, int], noise: float = 0.0) -> Instance | None:  # fmt: skip
    """The instance of a profile and trajectory with a request that has a witness plan (None
    when no drawn request has one: :func:`~travelgym.suites.behavior2trip.witness.witnessed`)."""
    from travelgym.suites.behavior2trip.witness import witnessed

    if catalog.source is None:
        raise ValueError("instances are generated over a database: load the catalog with "
                         "PoiCatalog.from_database")  # fmt: skip
    profile = with_history(profile, trajectory)

    def build(instruction: Instruction) -> Instance:
        return Instance(instance_id=iid, split=split, difficulty=difficulty, noise=noise,
                        instruction=instruction, trajectory=trajectory, profile=profile)  # fmt: skip

    found = witnessed(lambda like: make_instruction(profile, trajectory, catalog, d, like),
                      build, catalog.source, rejections)  # fmt: skip
    if found is None:
        rejections["witness_profile"] = rejections.get("witness_profile", 0) + 1
    return found


async def agenerate_instance(catalog: PoiCatalog, seed: int, split: str, difficulty: str,
                             index: int, backend, rejections: dict[str, int] | None = None,
                             ) -> Instance:  # fmt: skip
    """:func:`generate_instance` with any trajectory backend (e.g. the LLM
    :class:`~travelgym.suites.behavior2trip.roleplay.RoleplayBackend`): a profile whose trajectory the backend
    cannot write validly is redrawn."""
    from travelgym.suites.behavior2trip.roleplay import RoleplayError

    rejections = rejections if rejections is not None else {}
    iid = instance_id(split, difficulty, index)
    d = rng_for(seed, "instance", split, difficulty, index)
    for _ in range(MAX_ATTEMPTS):
        drawn = _profile_and_pool(catalog, d, iid, difficulty, rejections)
        if drawn is None:
            continue
        profile, pool = drawn
        try:
            trajectory = await backend.agenerate(profile, pool, d)
        except RoleplayError:
            trajectory = None
        if trajectory is None or validate_trajectory(trajectory, pool):
            rejections["trajectory"] = rejections.get("trajectory", 0) + 1
            continue
        instance = _assemble(catalog, d, iid, split, difficulty, profile, trajectory, rejections)
        if instance is not None:
            return instance
    raise RuntimeError(f"{iid}: no valid trajectory after {MAX_ATTEMPTS} attempts")
