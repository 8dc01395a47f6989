"""The loss mask of multi-turn rollouts, token by token: model tokens 1, environment tokens
(tool and memory responses, user replies, template glue) 0, and the token stream is the chat
the model saw. Real TripTrainingEnv / CompassTrainingEnv episodes, tokenized by the tiny model's tokenizer;
the model turns are scripted B2T actions (and one real tiny-model rollout)."""

from __future__ import annotations

import json

import pytest

from tests.training.support import need_train_extra
from travelgym.llm.hf_client import chat_text, encode
from travelgym.llm.prompted_tools import to_prompted_messages
from travelgym.suites.behavior2trip.environment import TripTrainingEnv
from travelgym.suites.compass.environment import CompassTrainingEnv
from travelgym.suites.compass.solver import solve
from travelgym.suites.compass.tasks import load_tasks
from travelgym.training.rollout import run_rollout, tokenize_chat

pytestmark = pytest.mark.train


@pytest.fixture(scope="module", autouse=True)
def train_extra():
    need_train_extra()


@pytest.fixture(scope="module")
def instances(b2t_train_instances):
    return b2t_train_instances


def b2t_actions(city: str) -> list[str]:
    call = {"name": "AttractionSearch", "arguments": {"city": city, "n": 2}}
    return [
        f"<think>Find sights.</think>\n<tool_call>{json.dumps(call)}</tool_call>\n"
        f"<memory>{json.dumps({'action': 'write', 'key': 'city', 'value': city})}</memory>",
        '<memory>{"action": "read", "key": "city"}</memory>',
        f"<answer>{json.dumps([{'day': 1, 'city': city}])}</answer>",
    ]


class Scripted:
    """A ``generate`` that emits the given messages (each closed by the EOS token) and
    records every context it was given."""

    def __init__(self, tokenizer, texts: list[str], close: bool = True) -> None:
        self.tokenizer, self.texts, self.close = tokenizer, list(texts), close
        self.contexts: list[list[int]] = []
        self.outputs: list[list[int]] = []

    def __call__(self, ids: list[int], max_new: int) -> list[int]:
        self.contexts.append(list(ids))
        out = encode(self.tokenizer, self.texts.pop(0))
        out += [self.tokenizer.eos_token_id] if self.close else []
        self.outputs.append(out[:max_new])
        return self.outputs[-1]


def runs(mask: list[int], ids: list[int]) -> list[tuple[int, list[int]]]:
    """Maximal runs of equal mask values: ``[(mask value, ids), ...]``."""
    out: list[tuple[int, list[int]]] = []
    for bit, token in zip(mask, ids, strict=True):
        if not out or out[-1][0] != bit:
            out.append((bit, []))
        out[-1][1].append(token)
    return out


def test_trip_rollout_masks_every_environment_token(trips_db, instances, tiny_tokenizer):
    tok = tiny_tokenizer
    env = TripTrainingEnv(trips_db, instances, max_turns=6)
    script = Scripted(tok, b2t_actions("Beijing"))
    rollout = run_rollout(env, tok, script, options={"index": 0})
    assert rollout.stop == "terminated" and rollout.turns == 3
    assert len(rollout.completion_ids) == len(rollout.env_mask)
    segments = runs(rollout.env_mask, rollout.completion_ids)
    # model turns: exactly the generated tokens, each a run of 1s; everything between them is 0
    assert [ids for bit, ids in segments if bit == 1] == script.outputs
    assert [bit for bit, _ in segments] == [1, 0, 1, 0, 1]
    env_texts = [tok.decode(ids) for bit, ids in segments if bit == 0]
    observations = [m["content"] for m in env.messages if m["role"] == "user"][1:]
    assert len(observations) == 2
    assert "<tool_response>" in observations[0] and "<memory_response>" in observations[0]
    assert "<memory_response>" in observations[1]
    for text, observation in zip(env_texts, observations, strict=True):
        assert observation in text  # the whole tool / memory response is masked
        assert text.endswith("<|im_start|>assistant\n")  # up to the next generation prompt
    # each model turn saw exactly the stream so far
    for i, context in enumerate(script.contexts):
        done = sum(len(o) for o in script.outputs[:i])
        assert context[: len(rollout.prompt_ids)] == rollout.prompt_ids
        assert context[len(rollout.prompt_ids) :] == rollout.completion_ids[: len(context) - len(
            rollout.prompt_ids)]  # fmt: skip
        assert len(context) - len(rollout.prompt_ids) >= done
    # the stream decodes to the chat the environment recorded (the template closes the last turn)
    chat = chat_text(tok, env.messages, False)
    seen = tok.decode(rollout.prompt_ids + rollout.completion_ids)
    assert chat == seen + "\n"
    assert rollout.prompt_ids == encode(tok, chat_text(tok, env.messages[:2], True))
    # the reward is the environment's terminal reward
    assert rollout.reward == env.reward.total and rollout.breakdown == env.reward.model_dump()
    # SFT tokenization of the same chat gives the same tokens and mask
    ids, mask = tokenize_chat(tok, env.messages)
    assert ids == rollout.prompt_ids + rollout.completion_ids
    assert mask == [0] * len(rollout.prompt_ids) + rollout.env_mask
    env.close()


def test_no_loss_mask_ablation_keeps_every_token(trips_db, instances, tiny_tokenizer):
    tok = tiny_tokenizer
    masked = run_rollout(TripTrainingEnv(trips_db, instances), tok, Scripted(tok, b2t_actions("Beijing")),
                         options={"index": 1})  # fmt: skip
    kept = run_rollout(TripTrainingEnv(trips_db, instances), tok, Scripted(tok, b2t_actions("Beijing")),
                       options={"index": 1}, loss_mask=False)  # fmt: skip
    assert kept.completion_ids == masked.completion_ids
    assert set(kept.env_mask) == {1} and 0 in masked.env_mask
    assert kept.reward == masked.reward


def test_memory_ablation_and_prefix_and_budget(trips_db, instances, tiny_tokenizer):
    tok = tiny_tokenizer
    env = TripTrainingEnv(trips_db, instances, memory=False)
    texts = [a.removeprefix("<think>") if a.startswith("<think>") else "ok</think>" + a
             for a in b2t_actions("Beijing")]  # fmt: skip
    rollout = run_rollout(env, tok, Scripted(tok, texts), options={"index": 0},
                          assistant_prefix="<think>")  # fmt: skip
    assert env.messages[2]["content"].startswith("<think>Find sights.</think>")
    prefix = encode(tok, "<think>")
    assert tok.decode(rollout.prompt_ids).endswith("<|im_start|>assistant\n<think>")
    for bit, ids in runs(rollout.env_mask, rollout.completion_ids):
        if bit == 0:
            assert ids[-len(prefix) :] == prefix  # the prefix is the environment's, masked
    assert rollout.breakdown["p_action"] == -1.0  # <memory> is invalid without the module
    # a budget too small for the next turn ends the rollout, scored as undelivered
    env = TripTrainingEnv(trips_db, instances)
    first = len(encode(tok, b2t_actions("Beijing")[0])) + 1
    cut = run_rollout(env, tok, Scripted(tok, b2t_actions("Beijing")), options={"index": 0},
                      max_completion_length=first + 10)  # fmt: skip
    assert cut.stop == "token_budget" and cut.turns == 1 and len(cut.completion_ids) == first
    assert cut.breakdown["delivered"] is False and cut.reward == 0.0
    # a turn cut by max_new_tokens is closed by the template, as environment tokens
    env = TripTrainingEnv(trips_db, instances, max_turns=2)
    open_turns = Scripted(tok, ["<think>" + "x" * 400, "<answer>[]</answer>"], close=False)
    rollout = run_rollout(env, tok, open_turns, options={"index": 0}, max_new_tokens=20)
    first_env = next(ids for bit, ids in runs(rollout.env_mask, rollout.completion_ids) if bit == 0)
    assert tok.decode(first_env).startswith("<|im_end|>")
    assert tok.decode(rollout.prompt_ids + rollout.completion_ids) + "<|im_end|>\n" == chat_text(
        tok, env.messages, False)  # fmt: skip


def test_tiny_model_rollout(trips_db, instances, tiny_dir, tiny_tokenizer):
    from travelgym.llm.hf_client import generate_ids, load_model_and_tokenizer, stop_token_ids

    model, tok = load_model_and_tokenizer(str(tiny_dir))
    stops = stop_token_ids(tok)
    made: list[int] = []

    def generate(ids, max_new):
        out = generate_ids(model, ids, max_new, temperature=1.0, seed=len(made), stop_ids=stops,
                           pad_id=tok.pad_token_id)  # fmt: skip
        made.append(len(out))
        return out

    env = TripTrainingEnv(trips_db, instances, max_turns=3)
    rollout = run_rollout(env, tok, generate, options={"index": 0}, max_new_tokens=12)
    assert rollout.turns == len(made) and 1 <= rollout.turns <= 3
    assert sum(rollout.env_mask) == sum(made)
    assert rollout.episode.instance_id == instances[0].instance_id
    assert len(rollout.episode.steps) == rollout.turns


def test_compass_rollout_masks_tool_results_and_user_replies(compass_db, tiny_tokenizer):
    tok = tiny_tokenizer
    task = next(t for t in load_tasks() if t.level == 1)
    from travelgym.db import connect_readonly

    conn = connect_readonly(compass_db)
    truth = solve(conn, task)
    conn.close()
    env = CompassTrainingEnv(compass_db, [task], {task.task_id: truth}, max_turns=3)
    call = json.dumps(
        {"name": "search_airports", "arguments": {"park_name": task.park.park_ids[0]}}
    )
    reply = json.dumps({"message": "Here it is.", "recommendation": truth.optimal_plan})
    script = Scripted(tok, [f"<tool_call>\n{call}\n</tool_call>", reply, reply, reply])
    rollout = run_rollout(env, tok, script, options={"task_id": task.task_id}, max_turns=4)
    assert rollout.stop in ("terminated", "truncated")
    segments = runs(rollout.env_mask, rollout.completion_ids)
    assert [ids for bit, ids in segments if bit == 1] == script.outputs[: rollout.turns]
    env_texts = [tok.decode(ids) for bit, ids in segments if bit == 0]
    assert "<tool_response>" in env_texts[0]  # the tool result, masked
    assert "<|im_start|>user" in env_texts[1]  # the simulated user's reply, masked
    assert "<tools>" in tok.decode(rollout.prompt_ids)  # tools are prompted
    assert rollout.messages == to_prompted_messages(rollout.messages, None)  # plain text chat
    assert chat_text(tok, rollout.messages, False) == tok.decode(
        rollout.prompt_ids + rollout.completion_ids) + "\n"  # fmt: skip
    assert rollout.reward == env.reward.total
    env.close()
