"""Chain-of-Action annotation (paper Section 3.2.3, Figure 7): gold chains of Behavior2Trip
instances, their file format and their use as SFT chats.

An annotator (an LLM or the scripted planner, :mod:`~travelgym.suites.behavior2trip.chain_annotators`)
works through an instance in (think, action, observation) cycles; after each cycle the
:data:`NEXT_STEP_PROMPT` is appended to the observation message, as the paper injects it. Each
instance gives one :class:`ChainRecord`: every step's thought, its tool calls and their
observations in order, and the final plan with the 32 checks' verdicts. The records are a
versioned JSONL file with a ``.manifest.json`` (:mod:`travelgym.datafiles`). ``travelgym export
sft --chains`` turns them into B2T-Agent chats (:func:`chain_chat`), the paper's SFT baseline.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from travelgym.core.errors import UserError

CHAINS_FORMAT_VERSION = "1"
PROMPT_VERSION = "1"
MAX_THOUGHT_WORDS = 100
FIRST_STEP_TOOLS = 3

# Figure 7's Next Step Prompt, in our words and with its rules
NEXT_STEP_PROMPT = """Next step. Look again at what the traveller asked for, then sum up in a short thought (at most 100 words, only what matters, no repetition) what the tool results so far have told you, and what is still missing for a plan as detailed as the plan format. Then call a few tools for that missing part only: you can work over several steps, so do not try to settle everything at once. Everything in the plan must come from tool results: never guess dates, attractions of the destination or their details. When the destination is not the departure city, look up the transport both ways (out on the first day, back on the last). When you have all you need, end the task with the plan inside <result>...</result>, alone in its message, with no tool call beside it."""

FIRST_STEP_PROMPT = """Work in steps: in each message write a short <think> (at most 100 words) summing up what you know and what you need next, then call a few tools. In this first step call at most 3 tools, to settle the three most important facts (for example the destination's hotels, its weather and the transport from the departure city); only after that go on with the rest. Never guess dates, attractions or their details: use what the tools return. End the task with the plan inside <result>...</result>, alone in its message."""

Termination = Literal["answered", "step_limit", "error"]


class ChainCall(BaseModel):
    """One tool call of a step and the observation the annotator read."""

    id: str
    name: str
    arguments: Any = None
    ok: bool = True
    observation: str = ""


class ChainStep(BaseModel):
    """One (think, action, observation) cycle. ``thought_at``: how many of the step's calls had
    run when its thought was written (0: before all of them; ``None``: no thought)."""

    index: int
    thought: str | None = None
    thought_at: int | None = None
    calls: list[ChainCall] = Field(default_factory=list)
    message: str = ""  # the annotator's raw message (scripted: a note)
    answer: bool = False
    invalid: list[str] = Field(default_factory=list)  # kinds of its invalid actions


class ChainRecord(BaseModel):
    """One instance's gold chain: its steps in order, the plan and the checks' verdicts."""

    format_version: str = CHAINS_FORMAT_VERSION
    instance_id: str
    split: str
    difficulty: str
    annotator: str
    steps: list[ChainStep] = Field(default_factory=list)
    plan: str | None = None  # the text inside <result> (None: no plan)
    termination: Termination = "step_limit"
    error: str | None = None  # why the annotator failed on this instance
    score: dict[str, Any] | None = None  # score_plan's verdict (checks, C/UPC counts, final)
    final: bool = False
    invalid_actions: int = 0
    violations: list[str] = Field(default_factory=list)  # the Next Step Prompt's rules broken
    llm_calls: int = 0
    duration_s: float = 0.0


class ChainsFileError(UserError, ValueError):
    """A chains file that cannot be read (the message names the file and line)."""


def rule_violations(steps: list[ChainStep]) -> list[str]:
    """The Next Step Prompt's rules a chain breaks: ``first_step_tools`` (more than 3 tools in
    the first step with calls), ``long_thought`` (a thought over 100 words), ``no_thought`` (a
    step with calls and no thought), ``thought_after_calls``."""
    found: list[str] = []
    acting = [s for s in steps if s.calls]
    if acting and len(acting[0].calls) > FIRST_STEP_TOOLS:
        found.append("first_step_tools")
    if any(s.thought and len(s.thought.split()) > MAX_THOUGHT_WORDS for s in steps):
        found.append("long_thought")
    if any(not s.thought for s in acting):
        found.append("no_thought")
    if any(s.thought_at for s in acting):
        found.append("thought_after_calls")
    return found


class ChainWriter:
    """Writes chains as they are annotated to ``PATH.partial`` (flushed line by line, so an
    interrupted run keeps what it finished), then renames it to ``path`` with its manifest."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.partial, "w", encoding="utf-8")  # noqa: SIM115 - closed by finish
        self._digest = hashlib.sha256()
        self.counts = {"n": 0, "plans": 0, "final": 0, "errors": 0, "steps": 0, "tool_calls": 0}
        self.violations: Counter = Counter()

    def add(self, record: ChainRecord) -> None:
        """Append one record."""
        line = record.model_dump_json() + "\n"
        self._fh.write(line)
        self._fh.flush()
        self._digest.update(line.encode())
        c = self.counts
        c["n"] += 1
        c["plans"] += record.plan is not None
        c["final"] += record.final
        c["errors"] += record.error is not None
        c["steps"] += len(record.steps)
        c["tool_calls"] += sum(len(s.calls) for s in record.steps)
        self.violations.update(record.violations)

    def finish(self, meta: dict[str, Any]) -> str:
        """Close the file, move it into place and write its manifest (``meta`` plus the format
        and prompt versions, sha256 and counts); return the sha256."""
        from travelgym.datafiles import write_manifest

        self._fh.close()
        os.replace(self.partial, self.path)
        sha = self._digest.hexdigest()
        counts = {k: self.counts[k] for k in ("n", "plans", "final", "errors")}
        write_manifest(self.path, {**meta, "kind": "chains", "sha256": sha, **counts,
                                   "format_version": CHAINS_FORMAT_VERSION,
                                   "prompt_version": PROMPT_VERSION})  # fmt: skip
        return sha

    def close(self) -> None:
        """Close the file without moving it (an interrupted run: the ``.partial`` stays)."""
        self._fh.close()


def write_chains(records: list[ChainRecord], path: Path, meta: dict[str, Any]) -> str:
    """Write the records and their manifest at once (:class:`ChainWriter`); the sha256."""
    writer = ChainWriter(path)
    for record in records:
        writer.add(record)
    return writer.finish(meta)


def read_chains(path: Path) -> Iterator[ChainRecord]:
    """The records of a chains file, one at a time (:class:`ChainsFileError` naming the line)."""
    from travelgym.jsonl import JsonLinesError, iter_json_lines

    try:
        for number, value in iter_json_lines(path):
            if not isinstance(value, dict) or value.get("format_version") != CHAINS_FORMAT_VERSION:
                raise ChainsFileError(f"{path}:{number}: not a chains record of format "
                                      f"{CHAINS_FORMAT_VERSION}")  # fmt: skip
            try:
                yield ChainRecord.model_validate(value)
            except ValidationError as exc:
                first = exc.errors(include_url=False)[0]
                where = ".".join(str(p) for p in first["loc"])
                raise ChainsFileError(f"{path}:{number}: {where}: {first['msg']}") from None
    except JsonLinesError as exc:
        raise ChainsFileError(str(exc)) from None


def chains_manifest(path: Path) -> dict[str, Any]:
    """The manifest of a chains file (:class:`ChainsFileError` when it has none)."""
    from travelgym.datafiles import manifest_path, read_manifest

    try:
        meta = read_manifest(path)
    except (OSError, ValueError) as exc:
        raise ChainsFileError(f"{path}: cannot read its manifest {manifest_path(path).name} "
                              f"({exc})") from None  # fmt: skip
    if not isinstance(meta, dict) or meta.get("kind") != "chains":
        raise ChainsFileError(f"{path}: its manifest is not a chains manifest")
    return meta


def chain_chat(record: ChainRecord, instance: Any) -> list[dict[str, Any]]:
    """The B2T-Agent chat of an annotated chain (what ``train sft`` reads): the B2T-Agent system
    prompt and task message; one assistant message per step with calls (its thought as
    ``<think>``, its calls as ``<tool_call>`` blocks) answered by a user message of
    ``<tool_response>`` blocks (without the Next Step Prompt, which the agent never sees at
    inference); the plan as the last assistant message's ``<answer>``. The thoughts of steps
    without calls go into the next message."""
    from travelgym.agents.b2t_format import TOOL_RESPONSE, format_responses, format_tool_call
    from travelgym.suites.behavior2trip.agents.b2t_agent import initial_messages
    from travelgym.suites.behavior2trip.agents.base import TripRequest

    out = initial_messages(TripRequest.of(instance))
    notes: list[str] = []
    for step in record.steps:
        if step.thought:
            notes.append(step.thought)
        if step.answer:
            break
        if not step.calls:
            continue
        think, notes = _think(notes), []
        blocks = [format_tool_call(c.name, c.arguments) for c in step.calls]
        out.append({"role": "assistant", "content": think + "\n".join(blocks)})
        responses = [(TOOL_RESPONSE, c.observation) for c in step.calls]
        out.append({"role": "user", "content": format_responses(responses)})
    out.append({"role": "assistant", "content": f"{_think(notes)}<answer>{record.plan}</answer>"})
    return out


def _think(notes: list[str]) -> str:
    """The ``<think>`` block of a message (empty without thoughts)."""
    joined = "\n".join(notes)
    return f"<think>{joined}</think>\n" if notes else ""


def chain_episode(record: ChainRecord) -> dict[str, Any]:
    """What :func:`~travelgym.suites.behavior2trip.training.sft_keep` reads of a chain."""
    return {"episode_id": record.instance_id, "score": record.score,
            "invalid_actions": record.invalid_actions}  # fmt: skip


def chain_examples(path: Path, min_score: float, data_dir: Path | None,
                   **filters: Any) -> Iterator[tuple[tuple[list, list] | None, str | None]]:  # fmt: skip
    """``((messages, tools), None)`` for each chain of ``path`` kept for SFT (no tools: the
    B2T format lists them in its system prompt), ``(None, reason)`` for each
    left out (``no_plan``, ``not_final`` unless ``keep_failing``, the other filters of
    :func:`~travelgym.suites.behavior2trip.training.sft_keep`). The instances come from the
    split file the manifest names (checked against its sha256)."""
    from travelgym.suites.behavior2trip.training import sft_keep

    meta = chains_manifest(path)
    instances: dict[str, Any] | None = None
    for record in read_chains(path):
        if record.plan is None or record.score is None:
            yield None, "no_plan" if record.error is None else "annotator_error"
            continue
        reason = sft_keep(chain_episode(record), min_score, **filters)
        if reason is not None:
            yield None, reason
            continue
        if instances is None:
            instances = _instances_of(meta, path, data_dir)
        if record.instance_id not in instances:
            raise ChainsFileError(f"{path}: unknown instance {record.instance_id!r}")
        yield (chain_chat(record, instances[record.instance_id]), []), None


def _instances_of(meta: dict[str, Any], path: Path, data_dir: Path | None) -> dict[str, Any]:
    from travelgym.suites.behavior2trip.instance_sets import load_split

    split, scale = meta.get("split", "train"), meta.get("db_scale", "small")
    chosen_set = {"instances": meta["instances"]} if "instances" in meta else {}
    _, instances, sha = load_split(split, int(meta.get("db_seed", 0)), data_dir, scale,
                                   **chosen_set)  # fmt: skip
    want = meta.get("instances_sha256")
    if want and sha != want:
        raise ChainsFileError(f"{path}: annotated on another {split} instance file (sha256 "
                              "differs); pass the chains' --data-dir")  # fmt: skip
    return {x.instance_id: x for x in instances}


def summary_text(result: dict[str, Any]) -> str:
    """The ``travelgym chains`` summary as text."""
    n = result["n"]
    rate = 100 * result["final"] / n if n else 0.0
    lines = [f"wrote {n} chain(s) by {result['annotator']} to {result['out']} "
             f"({result['split']} split)",
             f"  plans {result['plans']}, Final {result['final']} ({rate:.1f}%), "
             f"annotator errors {result['errors']}, steps {result['steps']}, "
             f"tool calls {result['tool_calls']}",
             "  rule violations: " + (", ".join(f"{k} {v}" for k, v in
                                       sorted(result["violations"].items())) or "none")]  # fmt: skip
    return "\n".join(lines)
