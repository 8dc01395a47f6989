"""The Chain-of-Action annotators and the annotation run (``travelgym chains``).

- :class:`LLMAnnotator`: any chat model (an OpenAI-compatible endpoint, ``local:smollm2``,
  ``hf:CKPT``) in the B2T text format, led by the Next Step Prompt after every observation; its
  thought is in the message that asks for the calls, so it precedes them.
- ``scripted``: the scripted planner, whose thoughts are written (``begin_step``) before the
  calls they describe.

An annotator's failure on one instance (a model error, a crash) is recorded on that instance's
line; it never stops the run.
"""

from __future__ import annotations

import asyncio
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError
from travelgym.suites.behavior2trip.chains import (
    FIRST_STEP_PROMPT,
    NEXT_STEP_PROMPT,
    ChainCall,
    ChainRecord,
    ChainStep,
    ChainWriter,
    rule_violations,
)

ANNOTATOR_USAGE = ("scripted, local:smollm2 (or local:GGUF), hf:CKPT, or a MODEL served at "
                   "--base-url")  # fmt: skip
NOT_ANNOTATORS = ("react", "b2t", "oracle")


class AnnotatorError(UserError, ValueError):
    """An ``--annotator`` that names no annotator."""


def annotator_messages(request: Any) -> list[dict[str, Any]]:
    """The chat an LLM annotator starts from: the B2T-Agent prompt without memory (the chain is
    tools only) and the task with the first step's rules."""
    from travelgym.suites.behavior2trip.agents.b2t_agent import system_prompt
    from travelgym.suites.behavior2trip.agents.prompts import user_message

    return [{"role": "system", "content": system_prompt(memory=False)},
            {"role": "user", "content": f"{user_message(request)}\n\n{FIRST_STEP_PROMPT}"}]  # fmt: skip


class LLMAnnotator:
    """A chat model annotating in (think, action, observation) cycles."""

    thought_in_message = True  # the thought is written in the message that makes the calls

    def __init__(self, client: Any, max_steps: int) -> None:
        self.client, self.max_steps = client, max_steps
        self.name = client.model

    async def solve(self, request: Any, env: Any) -> str | None:
        """Annotate one instance; the plan (the text inside ``<result>``) or ``None``."""
        from travelgym.llm.protocol import ChatMessage
        from travelgym.suites.behavior2trip.agents.b2t_step import apply_b2t_message

        env.messages = annotator_messages(request)
        for _ in range(self.max_steps):
            tick = time.perf_counter()
            messages = [ChatMessage.model_validate(m) for m in env.messages]
            response = await self.client.complete(messages)
            env.count_llm(response.usage, response.repairs)
            text = response.message.content or ""
            result = await apply_b2t_message(env, None, text, usage=response.usage, started=tick)
            if result.answer is not None:
                return result.answer
            # the paper injects the Next Step Prompt after each (think, action, observation)
            env.messages[-1]["content"] += f"\n\n{NEXT_STEP_PROMPT}"
        return None


def chain_planner(request: Any, env: Any) -> Any:
    """The scripted planner keeping Figure 7's first-step rule: its first acting step only
    searches hotels (at most 3 calls: the preferred ones, then relaxed); the destination's
    attractions, entertainment and weather are the next step, with a thought of its own."""
    from travelgym.suites.behavior2trip.agents.scripted import Planner

    class ChainPlanner(Planner):
        def gather(self) -> None:
            p = self.prefs
            self.hotels = self._first(
                ("AccommodationSearch", self.dest, p.hotel),
                ("AccommodationSearch", self.dest,
                 p.hotel and {"star_rating": p.hotel["star_rating"]}),
                ("AccommodationSearch", self.dest, None),
            )  # fmt: skip
            self.env.add_step(text=f"search {self.dest} hotels")
            self.env.begin_step(f"found {len(self.hotels)} hotels in {self.dest}. I will search "
                                "its attractions and entertainment that match the preferences, "
                                f"and its weather for the {self.ins.days} days from "
                                f"{self.ins.start_date}")  # fmt: skip
            hotels, first = self.hotels, self._first
            self._first = lambda *searches: hotels  # the hotels are known: no second search
            try:
                super().gather()
            finally:
                self._first = first

    return ChainPlanner(request, env)


class ScriptedAnnotator:
    """The scripted planner as an annotator (thoughts written before their calls)."""

    thought_in_message = False
    name = "scripted"

    async def solve(self, request: Any, env: Any) -> str | None:
        return chain_planner(request, env).run()


def make_annotator(spec: str, base_url: str | None, client_options: dict[str, Any] | None,
                   max_steps: int) -> tuple[Any, list[Any]]:  # fmt: skip
    """``(annotator, clients to close)`` for an ``--annotator`` spec (:class:`AnnotatorError`
    when it names none)."""
    text = (spec or "").strip()
    kind, sep, arg = text.partition(":")
    if text == "scripted":
        return ScriptedAnnotator(), []
    bad = (not text or text != spec or kind in NOT_ANNOTATORS or kind == "scripted"
           or (kind in ("local", "hf") and not arg) or any(c.isspace() for c in text))  # fmt: skip
    if bad:
        raise AnnotatorError(f"bad annotator {spec!r}: use {ANNOTATOR_USAGE}")
    from travelgym.runner.specs import make_model_client

    try:
        client = make_model_client(text, base_url, client_options)
    except ValueError as exc:
        raise AnnotatorError(f"bad annotator {spec!r}: {exc}") from None
    return LLMAnnotator(client, max_steps), [client]


def _chain(env: Any, in_message: bool) -> list[ChainStep]:
    steps = []
    for step in env.steps:
        at = (0 if in_message else env.thought_at.get(step.index)) if step.think else None
        calls = [ChainCall(id=c.id, name=c.name, arguments=c.arguments, ok=c.ok,
                           observation=env.observation_text(c)) for c in step.tool_calls]  # fmt: skip
        steps.append(ChainStep(index=step.index, thought=step.think, thought_at=at, calls=calls,
                               message=step.text, answer=step.answer,
                               invalid=[a.kind for a in step.invalid_actions]))  # fmt: skip
    return steps


async def annotate_one(instance: Any, annotator: Any, conn: Any, score_db: Any,
                       context: Any = None) -> ChainRecord:  # fmt: skip
    """Annotate one instance and score its plan; never raises for the annotator's failure."""
    from travelgym.llm.protocol import LLMError
    from travelgym.suites.behavior2trip.agents.base import TripRequest, TripToolSession
    from travelgym.suites.behavior2trip.scoring import score_plan

    started = time.perf_counter()
    env = TripToolSession(conn, keep_results=True, context=context)
    plan, termination, error = None, "step_limit", None
    try:
        plan = await annotator.solve(TripRequest.of(instance), env)
        termination = "answered" if plan is not None else "step_limit"
    except LLMError as exc:
        termination, error = "error", f"annotator: {exc}"
    except Exception as exc:  # noqa: BLE001 - one instance must never stop the annotation
        termination = "error"
        error = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"
    steps = _chain(env, annotator.thought_in_message)
    record = ChainRecord(instance_id=instance.instance_id, split=instance.split,
                         difficulty=instance.difficulty, annotator=annotator.name, steps=steps,
                         plan=plan, termination=termination, error=error,
                         invalid_actions=sum(len(s.invalid) for s in steps),
                         violations=rule_violations(steps), llm_calls=env.llm_calls)  # fmt: skip
    if plan is not None:
        try:
            record.score = score_plan(instance, f"<answer>{plan}</answer>", score_db)
            record.final = bool(record.score.get("final"))
        except Exception as exc:  # noqa: BLE001 - a scorer bug must not lose the chain
            record.error = f"scoring: {type(exc).__name__}: {exc}"
    record.duration_s = round(time.perf_counter() - started, 4)
    return record


async def annotate_all(instances: list[Any], annotator: Any, conn: Any, concurrency: int,
                       write: Callable[[ChainRecord], None] | None = None) -> list[ChainRecord]:  # fmt: skip
    """The chains of ``instances`` (``concurrency`` at a time), each passed to ``write`` in the
    instances' order as soon as it and those before it are done (``None``: returned instead)."""
    from travelgym.suites.behavior2trip.checks import PlanDB
    from travelgym.suites.behavior2trip.context import TripsContext

    score_db, context = PlanDB(conn), TripsContext(conn)  # their caches serve every instance
    gate = asyncio.Semaphore(concurrency)
    done: dict[int, ChainRecord] = {}
    kept: list[ChainRecord] = []
    emit = write or kept.append
    position = 0

    async def one(index: int, instance: Any) -> None:
        nonlocal position
        async with gate:
            done[index] = await annotate_one(instance, annotator, conn, score_db, context)
        while position in done:  # in order, whatever finishes first
            emit(done.pop(position))
            position += 1

    await asyncio.gather(*(one(i, x) for i, x in enumerate(instances)))
    return kept


def annotate_chains(annotator_spec: str, out: Path, options: Any, *,
                    task_ids: list[str] | None = None, limit: int | None = None,
                    base_url: str | None = None, client_options: dict[str, Any] | None = None,
                    concurrency: int = 4, db_seed: int = 0,
                    data_dir: Path | None = None) -> dict[str, Any]:  # fmt: skip
    """Annotate the instances the options select (explicit ids, else the split and difficulty,
    then the first ``limit``) with ``annotator_spec`` and write the chains file ``out`` with its
    manifest; return the summary."""
    from travelgym.db import connect_readonly
    from travelgym.suites.behavior2trip.instance_sets import load_split, select_instances, versions

    annotator, clients = make_annotator(annotator_spec, base_url, client_options,
                                        options.max_steps)  # fmt: skip
    # the instance set (the quality-filtered default or the unfiltered one) where it is an option
    chosen_set = {"instances": options.instances} if hasattr(options, "instances") else {}
    try:
        # only the chosen instances are built (the same bytes as in the full split)
        db, instances, sha = load_split(options.split, db_seed, data_dir, options.scale,
                                        task_ids=task_ids, difficulty=options.difficulty,
                                        limit=limit, **chosen_set)  # fmt: skip
        chosen = select_instances(instances, task_ids, options.difficulty, limit)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    conn = connect_readonly(db.path)
    writer = ChainWriter(out)
    try:
        asyncio.run(_annotate_and_close(chosen, annotator, conn, concurrency, clients, writer.add))
    except BaseException:
        writer.close()  # what was annotated stays in the .partial file
        raise
    finally:
        conn.close()
    meta = {"suite": "behavior2trip", "annotator": annotator.name, "split": options.split,
            "difficulty": options.difficulty, "db_scale": options.scale, "db_seed": db_seed,
            "db_content_hash": db.metadata.get("content_hash"), "instances_sha256": sha,
            "max_steps": options.max_steps, **chosen_set, **versions()}  # fmt: skip
    writer.finish(meta)
    return {"out": str(out), "annotator": annotator.name, "split": options.split,
            **writer.counts, "violations": dict(writer.violations)}  # fmt: skip


async def _annotate_and_close(instances, annotator, conn, concurrency, clients, write):
    try:
        return await annotate_all(instances, annotator, conn, concurrency, write)
    finally:
        for client in clients:
            close = getattr(client, "aclose", None)
            if close is not None:
                await close()
