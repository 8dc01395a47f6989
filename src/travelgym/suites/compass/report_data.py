"""The COMPASS report's embedded data: episodes as the compact records the viewer reads (turns,
dialogue acts, tool calls as rows into shared tables of tool names, arguments and simulator
instructions, recommendations as indices into the verdicts) and the tasks they ran."""

from __future__ import annotations

from typing import Any

from travelgym.report.markup import MAX_ARGUMENT_CHARS, MAX_TEXT_CHARS, clip, finite, json_text
from travelgym.suites.compass.report_verdicts import Verdicts
from travelgym.suites.compass.tasks import STYLES, GroundTruth, Task
from travelgym.suites.compass.trajectory import Episode


class Encoder:
    """Turns episodes into the compact records the viewer reads."""

    def __init__(self, verdicts: Verdicts, max_result_chars: int) -> None:
        self.verdicts = verdicts
        self.max_result_chars = max_result_chars
        self.tools: list[str] = []
        self._tool_index: dict[str, int] = {}
        self.arguments: list[Any] = []  # distinct tool-call arguments (JSON values)
        self.prompts: list[str] = []  # distinct simulator instructions
        self._prompt_index: dict[str, int] = {}
        self._argument_index: dict[str, int] = {}
        self.results_cut = 0

    def tool(self, name: str) -> int:
        if name not in self._tool_index:
            self._tool_index[name] = len(self.tools)
            self.tools.append(name)
        return self._tool_index[name]

    def argument(self, value: Any) -> int:
        """Index of the arguments in the shared table (scripted agents repeat many calls)."""
        key = repr(value)  # distinguishes 1 from "1", and is faster than json.dumps
        if key not in self._argument_index:
            text = json_text(value)
            if len(text) > MAX_ARGUMENT_CHARS:  # keep huge arguments (code) readable, but bounded
                value = clip(text, MAX_ARGUMENT_CHARS)
            self._argument_index[key] = len(self.arguments)
            self.arguments.append(value)
        return self._argument_index[key]

    def call(self, c) -> list:
        result = None
        if c.result is not None:
            text = json_text(c.result)
            if len(text) > self.max_result_chars:
                self.results_cut += 1
            result = clip(text, self.max_result_chars)
        row = [self.tool(c.name), self.argument(c.arguments), 1 if c.ok else 0, c.result_chars,
               result, c.error_category, c.error_message]  # fmt: skip
        while row and row[-1] is None:
            row.pop()
        return row

    def turn(self, seed: int, task_id: str, t) -> dict[str, Any]:
        out: dict[str, Any] = {"i": t.index, "r": "u" if t.role == "user" else "a"}
        if t.text:
            out["x"] = clip(t.text, MAX_TEXT_CHARS)
        if t.acts:
            out["acts"] = [
                {k: v for k, v in (("t", a.type), ("c", a.constraint_index), ("d", a.detail))
                 if v is not None}
                for a in t.acts
            ]  # fmt: skip
        if t.prompt:
            if t.prompt not in self._prompt_index:
                self._prompt_index[t.prompt] = len(self.prompts)
                self.prompts.append(t.prompt)
            out["p"] = self._prompt_index[t.prompt]
        if t.tool_calls:
            out["calls"] = [self.call(c) for c in t.tool_calls]
        if t.recommendation:
            out["rec"] = t.recommendation
            out["v"] = self.verdicts.verdict(seed, task_id, t.recommendation)
        if t.error:
            out["err"] = t.error
        if t.duration_s:
            out["dur"] = round(t.duration_s, 3)
        if t.usage.total_tokens:
            out["tok"] = [t.usage.prompt_tokens, t.usage.completion_tokens]
        return out

    def episode(self, seed: int, e: Episode) -> dict[str, Any]:
        score = dict(e.score or {})
        out: dict[str, Any] = {
            "id": e.episode_id,
            "task": e.task_id,
            "trial": e.trial,
            "term": e.termination,
            "calls": sum(len(t.tool_calls) for t in e.turns),
            "dur": round(e.duration_s, 3),
            "turns": [self.turn(seed, e.task_id, t) for t in e.turns],
        }
        if e.persona:  # the conversation's persona (the task record's is the task file's)
            style = e.persona.get("style")
            out["per"] = {**e.persona, "style_text": STYLES.get(style, str(style))}
        if e.error:
            out["err"] = e.error
        if e.revealed_all_turn is not None:
            out["tall"] = e.revealed_all_turn
        if e.usage.total_tokens:
            out["tok"] = [e.usage.prompt_tokens, e.usage.completion_tokens]
        if e.llm_calls:
            out["llm"] = e.llm_calls
        if e.final_recommendation:
            out["final"] = e.final_recommendation
            index = self.verdicts.verdict(seed, e.task_id, e.final_recommendation)
            out["fv"] = index
            verdict = self.verdicts.items[index] if index is not None else {}
            if score and score.get("feasible") and score.get("rank") is None and "rank" in verdict:
                score["rank"], score["rank_percentile"] = verdict["rank"], verdict["pct"]
        if score:
            score.pop("recommendation", None)
            score.pop("task_id", None)
            out["score"] = finite(score)
        return out


def task_record(task: Task, truth: GroundTruth | None) -> dict[str, Any]:
    persona = task.persona.model_dump()
    persona["style_text"] = STYLES.get(task.persona.style, str(task.persona.style))
    objective = task.objective
    out: dict[str, Any] = {
        "level": task.level,
        "objective": objective.type,
        "metric": getattr(objective, "metric", None) or f"{len(objective.features)} features",
        "objective_text": objective.sentence(),
        "park": ", ".join(task.park.park_ids),
        "constraints": [
            {"kind": c.kind, "rev": c.revelation, "text": c.sentence()} for c in task.constraints
        ],
        "persona": persona,
        "story": task.story,
    }
    for revision in task.revisions:  # the version the user states first, until it revises it
        out["constraints"][revision.constraint_index]["initial"] = revision.initial.sentence()
    if truth is not None:
        out["truth"] = {"n": truth.feasible_count, "optimum": truth.optimum_value,
                        "plan": truth.optimal_plan}  # fmt: skip
    return out
