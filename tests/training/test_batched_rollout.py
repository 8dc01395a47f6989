"""Batched rollouts against sequential ones with the tiny model, greedy in fp32: the same
tokens, masks and rewards; one batched generate stops each sequence at its own stop token or
its own token limit, as one-at-a-time generation does."""

from __future__ import annotations

import pytest

from tests.training.support import need_train_extra
from travelgym.suites.behavior2trip.instances import ensure_instances, load_instances
from travelgym.suites.behavior2trip.training_env import TripTrainingEnv

pytestmark = pytest.mark.train


@pytest.fixture(scope="module", autouse=True)
def train_extra():
    need_train_extra()


@pytest.fixture(scope="module")
def instances(trips_database):
    paths = ensure_instances(trips_database, trips_database.path.parent.parent)
    return load_instances(paths["train"], check=False)[:2]


@pytest.fixture(scope="module")
def tiny(tiny_dir):
    from travelgym.llm.hf_client import load_model_and_tokenizer, stop_token_ids

    model, tok = load_model_and_tokenizer(str(tiny_dir))
    return model.float(), tok, stop_token_ids(tok)


def test_batched_generate_stops_each_sequence_like_single_generation(tiny):
    from travelgym.llm.hf_client import encode, generate_ids
    from travelgym.training.batched_rollout import hf_generate_batch

    model, tok, stops = tiny
    texts = ["<think>plan the trip", "<answer>[]", "Beijing day one: the Forbidden City and"]
    contexts = [encode(tok, t) for t in texts]
    assert len({len(c) for c in contexts}) == 3  # different lengths: left padding is exercised
    limits = [12, 5, 9]
    single = [generate_ids(model, c, n, stop_ids=stops, pad_id=tok.pad_token_id)
              for c, n in zip(contexts, limits, strict=True)]  # fmt: skip
    # an extra stop token that the first sequence emits early: it stops before its limit
    extra = single[0][2]
    stop_ids = [*stops, extra]
    single = [generate_ids(model, c, n, stop_ids=stop_ids, pad_id=tok.pad_token_id)
              for c, n in zip(contexts, limits, strict=True)]  # fmt: skip
    batched = hf_generate_batch(model, contexts, limits, stop_ids=stop_ids,
                                pad_id=tok.pad_token_id)  # fmt: skip
    assert batched == single
    assert single[0][-1] == extra and len(single[0]) < limits[0]
    assert all(len(out) <= n for out, n in zip(batched, limits, strict=True))
    assert any(
        len(out) == n and out[-1] not in stop_ids for out, n in zip(batched, limits, strict=True)
    )
    assert hf_generate_batch(model, [], [], pad_id=tok.pad_token_id) == []
    with pytest.raises(ValueError, match="pad token"):
        hf_generate_batch(model, contexts, limits)


def test_batched_rollouts_equal_sequential_ones(trips_db, instances, tiny):
    from travelgym.core.registry import get_suite
    from travelgym.llm.hf_client import generate_ids
    from travelgym.training.batched_rollout import hf_generate_batch, run_rollouts
    from travelgym.training.rollout import run_rollout

    model, tok, stops = tiny
    group = 4
    # two instances x a group of 4; the environments' own step limits (1-3) make episodes of
    # different lengths, so some rollouts finish while others go on
    items = [x.instance_id for x in instances for _ in range(group)]
    limits = [1 + i % 3 for i in range(len(items))]
    settings = {"max_turns": 3, "max_new_tokens": 10, "max_completion_length": 6000,
                "prompt_fn": get_suite("behavior2trip").compact_prompt()}  # fmt: skip
    seeds = list(range(len(items)))
    options = [{"instance_id": i} for i in items]

    def generate(ids, max_new):
        return generate_ids(model, ids, max_new, stop_ids=stops, pad_id=tok.pad_token_id)

    batches: list[int] = []

    def generate_batch(contexts, max_new):
        batches.append(len(contexts))
        return hf_generate_batch(model, contexts, max_new, stop_ids=stops,
                                 pad_id=tok.pad_token_id)  # fmt: skip

    sequential = []
    for limit, seed, option in zip(limits, seeds, options, strict=True):
        env = TripTrainingEnv(trips_db, instances, max_turns=limit)
        sequential.append(run_rollout(env, tok, generate, seed=seed, options=option, **settings))
        env.close()
    envs = [TripTrainingEnv(trips_db, instances, max_turns=n) for n in limits]
    batched = run_rollouts(envs, tok, generate_batch, seeds=seeds, options=options, **settings)
    for env in envs:
        env.close()
    assert [r.turns for r in sequential] == limits
    # one generate per turn over the rollouts still going: 8, then 5 (those with 2-3 turns), 2
    assert batches == [len(items), sum(n >= 2 for n in limits), sum(n >= 3 for n in limits)]
    for seq, bat, item_id in zip(sequential, batched, items, strict=True):
        assert bat.info.get("instance_id", item_id) == item_id
        assert bat.prompt_ids == seq.prompt_ids
        assert bat.completion_ids == seq.completion_ids
        assert bat.env_mask == seq.env_mask
        assert bat.reward == seq.reward and bat.breakdown == seq.breakdown
        assert (bat.turns, bat.stop) == (seq.turns, seq.stop)
        assert bat.messages == seq.messages
        assert 0 in bat.env_mask and 1 in bat.env_mask or bat.turns == 1
    with pytest.raises(ValueError, match="distinct environment"):
        run_rollouts([envs[0], envs[0]], tok, generate_batch)
