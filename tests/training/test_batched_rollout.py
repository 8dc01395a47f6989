"""Batched rollouts against sequential ones with the tiny model, greedy in fp32: the same
tokens, masks and rewards; one batched generate stops each sequence at its own stop token or
its own token limit, as one-at-a-time generation does."""

from __future__ import annotations

import pytest

from tests.training.support import need_train_extra
from travelgym.suites.behavior2trip.environment import TripTrainingEnv

pytestmark = pytest.mark.train


@pytest.fixture(scope="module", autouse=True)
def train_extra():
    need_train_extra()


@pytest.fixture(scope="module")
def tiny(tiny_dir):
    from travelgym.llm.hf_client import load_model_and_tokenizer, stop_token_ids

    model, tok = load_model_and_tokenizer(str(tiny_dir))
    return model.float(), tok, stop_token_ids(tok)


def test_batched_generate_stops_each_sequence_like_single_generation(tiny):
    from travelgym.llm.hf_client import encode, generate_ids
    from travelgym.training.batched_generate import HFBatchGenerator

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
    batched = HFBatchGenerator(model, stop_ids=stop_ids, pad_id=tok.pad_token_id)(contexts, limits)
    assert batched == single
    assert single[0][-1] == extra and len(single[0]) < limits[0]
    assert all(len(out) <= n for out, n in zip(batched, limits, strict=True))
    assert any(
        len(out) == n and out[-1] not in stop_ids for out, n in zip(batched, limits, strict=True)
    )
    assert HFBatchGenerator(model, pad_id=tok.pad_token_id)([], []) == []
    # a limit of 0 asks for nothing; the others are unaffected
    assert HFBatchGenerator(model, stop_ids=stop_ids, pad_id=tok.pad_token_id)(
        contexts, [0, *limits[1:]]
    ) == [[], *single[1:]]
    # one sequence at a time (max_batch 1) gives the same tokens as the whole batch
    one = HFBatchGenerator(model, stop_ids=stop_ids, pad_id=tok.pad_token_id, max_batch=1)
    assert one(contexts, limits) == single
    with pytest.raises(ValueError, match="pad token"):
        HFBatchGenerator(model)
    with pytest.raises(ValueError, match="one max_new_tokens per context"):
        one(contexts, limits[:2])


def test_kept_caches_encode_only_new_tokens_and_change_no_token(tiny):
    """A second turn whose contexts extend the first turn's (context + reply + more tokens)
    encodes only the tokens past the stored caches, with the same tokens as encoding all;
    contexts sharing a prompt encode it once."""
    from travelgym.llm.hf_client import encode
    from travelgym.training.batched_generate import HFBatchGenerator

    model, tok, stops = tiny
    prompt = encode(tok, "Plan a three day trip to Hangzhou with West Lake and tea fields")
    contexts = [prompt, prompt, encode(tok, "Beijing day one:")]
    kept = HFBatchGenerator(model, stop_ids=stops, pad_id=tok.pad_token_id)
    fresh = HFBatchGenerator(model, stop_ids=stops, pad_id=tok.pad_token_id, reuse=False)
    first = kept(contexts, [6, 6, 6])
    assert first == fresh(contexts, [6, 6, 6])
    # the shared prompt is encoded once (the second copy feeds only its last token)
    assert kept.prefilled == len(prompt) + 1 + len(contexts[2])
    replies = [encode(tok, t) for t in ("Museum next", "Lake walk", "Train home")]
    second = [list(c) + out + r for c, out, r in zip(contexts, first, replies, strict=True)]
    before = kept.prefilled
    assert kept(second, [5, 5, 5]) == fresh(second, [5, 5, 5])
    # each second-turn context encodes only its last generated token and its reply; the
    # second one shares its first reply with the first one, encoded just before it
    assert kept.prefilled - before == len(replies[0]) + 1 + len(replies[1]) + len(replies[2]) + 1
    assert fresh.prefilled == sum(map(len, contexts)) + sum(map(len, second))
    # a context that is not an extension (edited history) still decodes correctly
    edited = [encode(tok, "Chengdu pandas and hotpot"), second[1][:-2]]
    assert kept(edited, [4, 4]) == fresh(edited, [4, 4])


def test_sampling_is_seeded_and_leaves_the_global_random_state(tiny):
    import torch

    from travelgym.llm.hf_client import encode
    from travelgym.training.batched_generate import HFBatchGenerator

    model, tok, stops = tiny
    contexts = [encode(tok, "Plan a trip"), encode(tok, "Xi'an day two")] * 2
    state = torch.random.get_rng_state()

    def draw(seed):
        return HFBatchGenerator(model, temperature=1.0, top_p=0.9, seed=seed, stop_ids=stops,
                                pad_id=tok.pad_token_id)(contexts, [8] * 4)  # fmt: skip

    a, b, c = draw(3), draw(3), draw(4)
    assert a == b and a != c
    assert torch.equal(torch.random.get_rng_state(), state)
    assert all(1 <= len(x) <= 8 for x in a)


@pytest.mark.slow
def test_batched_rollouts_equal_sequential_ones(trips_db, b2t_train_instances, tiny):
    instances = b2t_train_instances
    from travelgym.core.registry import get_suite
    from travelgym.llm.hf_client import generate_ids
    from travelgym.training.batched_generate import HFBatchGenerator
    from travelgym.training.batched_rollout import run_rollouts
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
    generator = HFBatchGenerator(model, stop_ids=stops, pad_id=tok.pad_token_id)

    def generate_batch(contexts, max_new):
        batches.append(len(contexts))
        return generator(contexts, max_new)

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
    # the later turns encoded only what the kept caches did not hold
    assert generator.prefilled < sum(len(r.prompt_ids) for r in batched) + sum(
        len(r.completion_ids) for r in batched
    )
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


def test_sampler_draws_each_token_with_its_probability():
    """The sampler's inverse-CDF draw: frequencies match the temperature / top-p distribution
    and tokens outside the nucleus are never drawn."""
    import torch

    from travelgym.training.batched_generate import HFBatchGenerator

    probs = torch.tensor([0.5, 0.3, 0.15, 0.05, 0.0])
    logits = torch.log(probs).expand(40_000, -1)
    for top_p, expected in ((None, probs), (0.7, torch.tensor([0.625, 0.375, 0, 0, 0]))):
        sampler = HFBatchGenerator(torch.nn.Linear(1, 1), temperature=1.0, top_p=top_p, seed=0,
                                   pad_id=0)  # fmt: skip
        drawn = sampler._pick(logits)
        freq = torch.bincount(drawn, minlength=5).float() / len(drawn)
        assert torch.allclose(freq, expected, atol=0.01), (top_p, freq)
        assert int(freq[expected == 0].sum() * len(drawn)) == 0


def test_preallocated_cache_layer_grows_and_selects_like_concatenation():
    import torch

    from travelgym.training.batched_generate import _preallocated_layer

    torch.manual_seed(0)
    k, v = torch.randn(3, 2, 4, 5), torch.randn(3, 2, 4, 5)
    layer = _preallocated_layer(k, v, room=1)
    steps = [(torch.randn(3, 2, n, 5), torch.randn(3, 2, n, 5)) for n in (1, 1, 3)]
    for nk, nv in steps:  # the second step already overflows the room of 1
        keys, values = layer.update(nk, nv)
        k, v = torch.cat([k, nk], dim=2), torch.cat([v, nv], dim=2)
        assert torch.equal(keys, k) and torch.equal(values, v)
    assert layer.get_seq_length() == 9
    layer.batch_select_indices(torch.tensor([2, 0]))
    assert torch.equal(layer.keys, k[[2, 0]]) and torch.equal(layer.values, v[[2, 0]])
    layer.update(k[:2, :, :1], v[:2, :, :1])
    assert layer.get_seq_length() == 10
