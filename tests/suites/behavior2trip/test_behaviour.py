"""Behaviour trajectories (Figure 9): pools and the deterministic generator on small inline POI
lists and on the database, the rule validator on broken trajectories, and the LLM role-play
backend against the local OpenAI-compatible server."""

from __future__ import annotations

import json
import re

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Reply
from travelgym.llm import OpenAIChatClient
from travelgym.suites.behavior2trip import vocab
from travelgym.suites.behavior2trip.behaviour import (
    DeterministicBackend,
    build_pool,
    generate_trajectory,
)
from travelgym.suites.behavior2trip.behaviour_pool import CandidatePool, PoiCatalog
from travelgym.suites.behavior2trip.behaviour_rules import validate_trajectory
from travelgym.suites.behavior2trip.preferences import Poi, poi_matches
from travelgym.suites.behavior2trip.profiles import DIFFICULTIES, Profile, rng_for, sample_profile
from travelgym.suites.behavior2trip.roleplay import (
    RoleplayBackend,
    RoleplayError,
    extract_json,
    parse_session,
)

CITIES = ("Shanghai", "Chengdu", "Xi'an", "Hangzhou", "Guilin")


def tiny_catalog() -> PoiCatalog:
    """A few dozen POIs per city, every category, transport from Beijing."""
    pois = []
    for c, city in enumerate(CITIES):
        for i in range(15):
            facilities = vocab.FACILITIES[: 1 + i % 6]
            pois.append(Poi(f"H{c}{i:02d}", f"{city} Hotel {i}", "hotel", city, 200.0 + 60 * i,
                            vocab.STAR_LEVELS[i % 5], facilities=facilities))  # fmt: skip
        for i in range(16):
            pois.append(Poi(f"R{c}{i:02d}", f"{city} Kitchen {i}", "restaurant", city, 60.0 + 10 * i,
                            ("Hot Pot", "Cantonese", "Seafood", "Buffet")[i % 4],
                            vocab.PRICE_LEVELS[(i // 4) % 2], ("Quiet", "Lively")[(i // 8) % 2]))  # fmt: skip
        for i in range(12):
            pois.append(Poi(f"A{c}{i:02d}", f"{city} Sight {i}", "attraction", city, 10.0 * i,
                            ("Museum/Exhibition", "Park/Square", "Natural Landscape")[i % 3],
                            vocab.WALKING_TOLERANCE[(i // 3) % 3]))  # fmt: skip
        for i in range(5):
            pois.append(Poi(f"E{c}{i:02d}", f"{city} Club {i}", "entertainment", city, 100.0,
                            vocab.ENTERTAINMENT_TYPES[i]))  # fmt: skip
        for i in range(3):
            for seat, code in (("Economy Class", "Y"), ("Business Class", "C")):
                pois.append(Poi(f"MU{c}{i}-{code}", f"MU{c}{i} Beijing-{city}", "flight", city,
                                900.0, "Airplane", seat, origin="Beijing"))  # fmt: skip
            for seat, code in (("Second Class Seat", "2"), ("First Class Seat", "1")):
                pois.append(Poi(f"G{c}{i}-{code}", f"G{c}{i} Beijing South-{city}", "train", city,
                                500.0, "High-speed Rail", seat, origin="Beijing"))  # fmt: skip
    return PoiCatalog(pois)


PERSONA = {"age": 36, "education": "Master's Degree", "occupation": "Lawyer", "home_city": "Beijing",
           "family_status": "Married with young children"}  # fmt: skip
ALL_PREFS = {
    "hotel_preferences": {"star_requirement": ["4-Star/Upscale", "5-Star/Luxury"],
                          "essential_facilities": ["Free WiFi"]},
    "attraction_preferences": {"preferred_attraction_types": ["Museum/Exhibition", "Park/Square"],
                               "walking_tolerance": "Medium (3-5km)"},
    "dining_requirements": {"cuisine_preferences": ["Hot Pot", "Seafood"],
                            "price_level": vocab.PRICE_LEVELS[0]},
    "transportation_preferences": {"intercity_transport": "High-speed Rail",
                                   "seat_class": "Second Class Seat"},
}  # fmt: skip
ACTIVE = {"easy": ["dining_requirements"],
          "medium": ["hotel_preferences", "transportation_preferences"],
          "hard": list(ALL_PREFS)}  # fmt: skip


def tiny_profile(difficulty: str) -> Profile:
    prefs = {k: ALL_PREFS[k] for k in ACTIVE[difficulty]}
    return Profile.model_validate({"profile_id": f"t-{difficulty}", "difficulty": difficulty,
                                   "persona": PERSONA, "preferences": prefs})  # fmt: skip


@pytest.fixture(scope="module")
def catalog():
    return tiny_catalog()


def pool_and_trajectory(catalog, difficulty, seed):
    profile = tiny_profile(difficulty)
    d = rng_for(seed, "tiny", difficulty)
    pool = build_pool(profile, catalog, d)
    return profile, pool, generate_trajectory(profile, pool, d)


# --- generator on inline POIs ------------------------------------------------------------------


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_inline_trajectories_follow_the_rules(catalog, difficulty):
    for seed in range(40):
        profile, pool, traj = pool_and_trajectory(catalog, difficulty, seed)
        assert validate_trajectory(traj, pool) == [], seed
        noise = [a for a in traj if pool.by_id[a.poi_id][1]]
        assert all(a.action_type == "click" for a in noise)
        assert len(noise) <= {"easy": 0, "medium": 1, "hard": 9}[difficulty]
        for a in traj:  # matched POIs really match the hidden preferences, noise does not
            assert (
                poi_matches(profile.preferences, catalog.pois[a.poi_id]) != pool.by_id[a.poi_id][1]
            )
        stamps = [a.timestamp for a in traj]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
        assert stamps[0].startswith("2024-") and stamps[-1].startswith("2024-")
        assert len({a.poi_type for a in traj}) >= 2
        assert any(a.action_type == "book" for a in traj)
        for t in pool.threads:  # one city and one category per thread, in plan order
            assert {p.city for p in t.matched + t.noise} == {t.city}
            assert {p.focus for p in t.matched + t.noise} == {t.focus}


def test_generator_is_deterministic(catalog):
    a = pool_and_trajectory(catalog, "hard", 7)[2]
    b = pool_and_trajectory(catalog, "hard", 7)[2]
    c = pool_and_trajectory(catalog, "hard", 8)[2]
    assert a == b and a != c


@pytest.mark.anyio
async def test_deterministic_backend_interface(catalog):
    profile = tiny_profile("medium")
    pool = build_pool(profile, catalog, rng_for(1, "b"))
    backend = DeterministicBackend()
    traj = await backend.agenerate(profile, pool, rng_for(1, "t"))
    assert traj == backend.generate(profile, pool, rng_for(1, "t"))
    assert validate_trajectory(traj, pool) == []


# --- broken trajectories -----------------------------------------------------------------------


@pytest.fixture
def good(catalog):
    for seed in range(200):
        _, pool, traj = pool_and_trajectory(catalog, "hard", seed)
        kinds = {a.action_type for a in traj}
        if len({a.session for a in traj}) > 6 and {"book", "add_to_favorites"} <= kinds:
            assert validate_trajectory(traj, pool) == []
            return pool, traj
    raise AssertionError("no rich trajectory")


def rules(traj, pool):
    return {p.split(":")[0] for p in validate_trajectory(traj, pool)}


def first(traj, kind):
    return next(i for i, a in enumerate(traj) if a.action_type == kind)


def test_favourite_before_click_is_rejected(good):
    pool, traj = good
    i = first(traj, "add_to_favorites")
    poi = traj[i].poi_id
    broken = [a for a in traj if not (a.poi_id == poi and a.action_type == "click")]
    assert "funnel" in rules(broken, pool)


def test_book_without_favourite_is_rejected(good):
    pool, traj = good
    poi = traj[first(traj, "book")].poi_id
    broken = [a for a in traj if not (a.poi_id == poi and a.action_type == "add_to_favorites")]
    assert "funnel" in rules(broken, pool)


def test_noise_favourite_and_clusters_are_rejected(good):
    pool, traj = good
    i = next(i for i, a in enumerate(traj) if pool.by_id[a.poi_id][1])
    faved = list(traj)
    faved[i] = traj[i].model_copy(update={"action_type": "add_to_favorites"})
    assert "noise_action" in rules(faved, pool)
    clustered = _restamp([*traj[: i + 1], traj[i], *traj[i + 1 :]])
    assert rules(clustered, pool) == {"noise_clustered", "noise_budget"} - (
        set()
        if sum(pool.by_id[a.poi_id][1] for a in clustered) > pool.max_noise
        else {"noise_budget"}
    )


def test_rebooking_is_rejected(good):
    pool, traj = good
    b = traj[first(traj, "book")]
    broken = _restamp([*traj, b.model_copy(update={"session": traj[-1].session})])
    assert "rebooked" in rules(broken, pool)


def test_timestamps_must_increase_within_2024(good):
    pool, traj = good
    swapped = list(traj)
    swapped[3], swapped[4] = traj[4].model_copy(update={"timestamp": traj[3].timestamp}), traj[3]
    assert "timestamp" in rules(swapped, pool)
    old = [a.model_copy(update={"timestamp": "2023" + a.timestamp[4:]}) for a in traj]
    assert "timestamp" in rules(old, pool)


def test_sessions_keep_one_city_and_one_category(good):
    pool, traj = good
    # merge the first two sessions: another category (and maybe city) in one session
    merged = [a.model_copy(update={"session": 1}) if a.session == 2 else a for a in traj]
    merged = [
        a.model_copy(update={"session": a.session - 1}) if a.session > 2 else a for a in merged
    ]
    assert {"session_topic", "session_city"} & rules(merged, pool)
    jumped = [a.model_copy(update={"session": a.session + 5}) if a.session > 2 else a for a in traj]
    assert "session_order" in rules(jumped, pool)


def test_unknown_and_misdescribed_pois_are_rejected(good):
    pool, traj = good
    fake = [traj[0].model_copy(update={"poi_id": "H99999"}), *traj[1:]]
    assert "unknown_poi" in rules(fake, pool)
    renamed = [traj[0].model_copy(update={"poi_name": "Invented Palace"}), *traj[1:]]
    assert rules(renamed, pool) == {"poi_mismatch"}


def test_plan_order_no_booking_diversity_budget_commitment(good, catalog):
    pool, traj = good
    sessions = sorted({a.session for a in traj})
    by_session = {s: [a for a in traj if a.session == s] for s in sessions}
    # an accommodation or transport session moved after the block's last session
    early = next(
        s for s in sessions if by_session[s][0].poi_type in ("hotel", "flight", "train", "bus")
    )
    city = by_session[early][0].city
    last = max(s for s in sessions if by_session[s][0].city == city)
    assert last != early
    order = [s for s in sessions if s != early]
    order.insert(order.index(last) + 1, early)
    moved = [a.model_copy(update={"session": n + 1}) for n, s in enumerate(order) for a in by_session[s]]  # fmt: skip
    assert "plan_order" in rules(_restamp(moved), pool)
    no_book = [a for a in traj if a.action_type != "book"]
    assert "no_booking" in rules(no_book, pool)
    single = [a for a in traj if a.session == 1]
    assert "category_diversity" in rules(single, pool)
    strict = CandidatePool(pool.profile_id, pool.difficulty, pool.threads, max_noise=0)
    assert "noise_budget" in rules(traj, strict)
    # a click-only session of the same thread after its booking session
    b = traj[first(traj, "book")]
    rows = [a for a in traj if a.session <= b.session]
    extra = b.model_copy(update={"action_type": "click", "session": b.session + 1})
    rest = [a.model_copy(update={"session": a.session + 1}) for a in traj if a.session > b.session]
    assert "commitment" in rules(_restamp([*rows, extra, *rest]), pool)


def _restamp(actions):
    """Fresh, increasing timestamps (to isolate the rule under test)."""
    return [a.model_copy(update={"timestamp": f"2024-03-{1 + i // 1000:02d}T{(i // 60) % 24:02d}:{i % 60:02d}:00"})
            for i, a in enumerate(actions)]  # fmt: skip


# --- on the database ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def db_catalog(trips_db):
    return PoiCatalog.from_database(trips_db)


def test_catalog_loads_every_poi_table(db_catalog, trips_db):
    from travelgym.db import connect_readonly

    conn = connect_readonly(trips_db)
    for table, poi_type in (("hotels", "hotel"), ("restaurants", "restaurant"),
                            ("attractions", "attraction"), ("entertainment", "entertainment"),
                            ("buses", "bus")):  # fmt: skip
        n = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        assert sum(p.poi_type == poi_type for p in db_catalog.pois.values()) == n
    conn.close()
    assert set(db_catalog.cities) == set(vocab.CITIES)


def test_memoised_matching_equals_poi_matches(db_catalog):
    for i in range(60):
        profile = sample_profile(rng_for(9, "m", i), "m", "hard")
        home = profile.persona.home_city
        for city in db_catalog.cities[i % 6 :: 6]:
            for focus in ("hotel", "restaurant", "attraction", "transport", "entertainment"):
                group = db_catalog.group(focus, city, home)
                expected = [p for p in group if poi_matches(profile.preferences, p)]
                got = db_catalog.matched(focus, city, home, profile.preferences)
                assert sorted(p.poi_id for p in got) == sorted(p.poi_id for p in expected)
                noise = db_catalog.unmatched(focus, city, home, profile.preferences)
                assert len(noise) + len(expected) == len(group)


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_database_sample_validates(db_catalog, difficulty):
    done = 0
    for i in range(150):
        d = rng_for(11, "sample", difficulty, i)
        profile = sample_profile(d, f"s{i}", difficulty)
        try:
            pool = build_pool(profile, db_catalog, d)
        except ValueError:
            continue
        traj = generate_trajectory(profile, pool, d)
        assert validate_trajectory(traj, pool) == [], (i, validate_trajectory(traj, pool))
        done += 1
    assert done >= 120


# --- the LLM role-play backend -----------------------------------------------------------------


def scripted_session(body):
    """A well-behaved role-play reply: click the matched POIs (one noise click after the first),
    favourite and book the first matched POI."""
    prompt = body["messages"][-1]["content"]
    matched_part, noise_part = prompt.split("## Noise POIs")
    matched = re.findall(r'poi_id: "([^"]+)", poi_name: "([^"]+)"', matched_part)
    noise = re.findall(r'poi_id: "([^"]+)", poi_name: "([^"]+)"', noise_part)
    records = []
    for n, (pid, name) in enumerate(matched):
        records.append({"action_type": "click", "poi_id": pid, "poi_name": name})
        if n == 0 and noise:
            records.append({"action_type": "click", "poi_id": noise[0][0], "poi_name": noise[0][1]})
    pid, name = matched[0]
    records += [{"action_type": "add_to_favorites", "poi_id": pid, "poi_name": name},
                {"action_type": "book", "poi_id": pid, "poi_name": name}]  # fmt: skip
    return Reply("```json\n" + json.dumps(records) + "\n```")


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=scripted_session) as srv:
        yield srv


def llm(server):
    return OpenAIChatClient("fake-model", base_url=server.base_url, max_retries=0)


@pytest.mark.anyio
async def test_roleplay_backend_writes_a_valid_trajectory(server, catalog):
    profile = tiny_profile("hard")
    pool = build_pool(profile, catalog, rng_for(2, "llm"))
    async with llm(server) as client:
        rp = RoleplayBackend(client)
        traj = await rp.agenerate(profile, pool, rng_for(2, "llm-t"))
    assert validate_trajectory(traj, pool) == []
    assert len(server.requests) == traj[-1].session  # one call per session
    prompt = server.requests[0]["messages"][0]["content"]
    assert "# BEHAVIORAL RULES" in prompt and "Preference-Matched POIs" in prompt
    assert '"Beijing"' in prompt  # the profile (home city) is in the prompt
    assert all(a.timestamp.startswith("2024-") for a in traj)
    assert rp.rejected == 0 and rp.usage.total_tokens > 0


@pytest.mark.anyio
async def test_roleplay_rejects_malformed_and_rule_breaking_replies(server, catalog):
    profile = tiny_profile("medium")
    pool = build_pool(profile, catalog, rng_for(3, "llm"))
    first_matched = pool.threads[0].matched[0]
    bad_book = json.dumps([{"action_type": "book", "poi_id": first_matched.poi_id,
                            "poi_name": first_matched.name}])  # fmt: skip
    server.push(Reply("[{'action_type': click, poi_id: ...]  oops"),  # malformed JSON
                Reply(bad_book),  # books without click and favourite: funnel violation
                Reply('[{"action_type": "click", "poi_id": "NOPE", "poi_name": "Invented"}]'))  # fmt: skip
    async with llm(server) as client:
        rp = RoleplayBackend(client, max_attempts=4)
        traj = await rp.agenerate(profile, pool, rng_for(3, "llm-t"))
    assert validate_trajectory(traj, pool) == []
    assert rp.rejected == 3
    assert len(server.requests) == traj[-1].session + 3


@pytest.mark.anyio
async def test_roleplay_gives_up_after_max_attempts(server, catalog):
    profile = tiny_profile("easy")
    pool = build_pool(profile, catalog, rng_for(4, "llm"))
    server.push(*[Reply("no JSON here, sorry")] * 2)
    async with llm(server) as client:
        with pytest.raises(RoleplayError, match="rejected replies"):
            await RoleplayBackend(client, max_attempts=2).agenerate(profile, pool, rng_for(4, "t"))


def test_session_parsing(catalog):
    cands = {p.poi_id: p for p in catalog.group("hotel", "Shanghai")[:3]}
    pid = next(iter(cands))
    steps = parse_session(
        f'Here you go: {{"actions": [{{"action_type": "Favorite", "poi_id": "{pid}"}},]}}', cands
    )
    assert steps == [("add_to_favorites", cands[pid])]
    for bad in (
        "[]",
        f'[{{"action_type": "like", "poi_id": "{pid}"}}]',
        '[{"action_type": "click"}]',
        "[1, 2]",
    ):
        with pytest.raises(ValueError):
            parse_session(bad, cands)
    assert extract_json('"a": 1, "b": [2]') == {"a": 1, "b": [2]}
