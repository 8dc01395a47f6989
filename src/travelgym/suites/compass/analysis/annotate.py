"""Human annotation of the user simulator (COMPASS Section 4.2, Appendix H, Table 3).

``export_sheet`` draws a seeded sample of conversations from a run directory and writes one row
per user response (turn 0, the opening request, excluded) with what an annotator needs: the
persona, the user's script so far (hard constraints revealed up to this turn, the objective,
the communication style), the simulator's instruction for the turn, the agent message the user
answered and the user's response, followed by empty columns for the six error flags (true /
false) and the two 1-5 rubrics.

``summarize_sheet`` reads a filled sheet back (CSV or JSONL) and computes Table 3's figures:
the share of responses flagged for each error type, and for each rubric the mean, standard
deviation, median, quartiles and the distribution of scores. Rows that are unfilled or
malformed are listed by number and left out; the function never raises for a bad row.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from travelgym.atomic import write_text_atomic
from travelgym.core.errors import UserError
from travelgym.runner.run_manifest import read_manifest
from travelgym.runner.store import read_episodes
from travelgym.suites.compass.revisions import stated_constraints
from travelgym.suites.compass.tasks import STYLES, Task, load_tasks
from travelgym.suites.compass.trajectory import Episode

# The six error flags of Appendix H, in the paper's order, with its names.
FLAGS = {
    "factual_hallucination": "Factual hallucination",
    "revelation_instruction_failure": "Revelation instruction-following failure",
    "revelation_accuracy_failure": "Revelation accuracy failure",
    "recommendation_check_failure": "Recommendation check failure",
    "repetition_failure": "Repetition failure",
    "critical_comments": "Critical comments",
}
RUBRICS = {"clarity": "Clarity", "contextual_appropriateness": "Contextual appropriateness"}
CONTEXT_COLUMNS = (
    "row_id", "run", "user_simulator", "episode_id", "task_id", "level", "turn",
    "persona_trust", "persona_reliability", "persona_revelation_speed", "persona_style",
    "objective", "hard_constraints_so_far", "instruction_details", "simulator_instruction",
    "agent_message", "agent_recommendation", "user_response",
)  # fmt: skip
ANNOTATION_COLUMNS = (*FLAGS, *RUBRICS, "comment")
COLUMNS = (*CONTEXT_COLUMNS, *ANNOTATION_COLUMNS)
DEFAULT_CONVERSATIONS = 45  # as in the paper (198 responses from 45 conversations)
TRUE_WORDS = {"true", "t", "yes", "y", "1", "x"}
FALSE_WORDS = {"false", "f", "no", "n", "0"}


class AnnotationError(UserError):
    """A sheet that cannot be read at all (the message says why)."""


@dataclass
class ExportResult:
    path: Path
    conversations: int
    rows: int
    eligible: int  # conversations with at least one user response after the opening


# --------------------------------------------------------------------------- export


def _constraint_text(task: Task | None, index: int | None, constraint: dict | None,
                     revised: list[int] | None = None) -> str:  # fmt: skip
    """The constraint as the user stated it, with the revisions in ``revised`` made."""
    if task is not None and index is not None and 0 <= index < len(task.constraints):
        return stated_constraints(task, revised or [])[index].sentence()
    if constraint:
        return json.dumps(constraint, sort_keys=True)
    return f"constraint #{index}"


def _act_line(task: Task | None, act, revised: list[int] | None = None) -> str:
    if act.type in ("reveal", "restate", "answer", "revise"):
        line = f"{act.type} #{act.constraint_index}: " + _constraint_text(
            task, act.constraint_index, act.constraint, revised
        )
        if act.detail:
            line += f" (was: {act.detail})" if act.type == "revise" else f" (asked: {act.detail})"
        return line
    if act.type == "flag_violation":
        where = f" #{act.constraint_index}" if act.constraint_index is not None else ""
        return f"flag_violation{where}: {act.detail or ''}".rstrip()
    if act.type in ("no_preference", "restate_objective", "undecided") and act.detail:
        return f"{act.type}: {act.detail}"
    return act.type


def conversation_rows(episode: Episode, task: Task | None, run: str, user: str) -> list[dict]:
    """One row per user response after the opening request, with its annotation context."""
    rows: list[dict[str, Any]] = []
    revealed: list[int] = []
    revised: list[int] = []
    last_agent = None
    persona = episode.persona or (task.persona.model_dump() if task else {})
    style = persona.get("style")
    if task is not None:
        objective = task.objective.sentence()
    else:
        opening = next((a for t in episode.turns[:1] for a in t.acts if a.type == "open"), None)
        objective = json.dumps(opening.objective, sort_keys=True) if opening else ""
    for turn in episode.turns:
        if turn.role == "agent":
            last_agent = turn
            continue
        new = [a.constraint_index for a in turn.acts
               if a.type in ("reveal", "answer") and a.constraint_index is not None
               and a.constraint_index not in revealed]  # fmt: skip
        changed = [a.constraint_index for a in turn.acts
                   if a.type == "revise" and a.constraint_index is not None]  # fmt: skip
        revised += changed
        if turn.index > 0:
            marks = {**dict.fromkeys(changed, "[revised this turn] "),
                     **dict.fromkeys(new, "[new this turn] ")}  # fmt: skip
            constraints = [
                marks.get(i, "") + _constraint_text(task, i, None, revised) for i in revealed + new
            ]
            agent_text = ""
            recommendation = ""
            if last_agent is not None:
                agent_text = last_agent.text or (f"(error: {last_agent.error})" if last_agent.error
                                                 else "")  # fmt: skip
                if last_agent.recommendation:
                    recommendation = json.dumps(last_agent.recommendation, sort_keys=True)
            rows.append({
                "row_id": f"{episode.episode_id}:t{turn.index}",
                "run": run,
                "user_simulator": user,
                "episode_id": episode.episode_id,
                "task_id": episode.task_id,
                "level": task.level if task else "",
                "turn": turn.index,
                "persona_trust": persona.get("trust", ""),
                "persona_reliability": persona.get("reliability", ""),
                "persona_revelation_speed": persona.get("revelation_speed", ""),
                "persona_style": f"{style}: {STYLES.get(style, '')}" if style else "",
                "objective": objective,
                "hard_constraints_so_far": "\n".join(constraints),
                "instruction_details": "\n".join(_act_line(task, a, revised) for a in turn.acts),
                "simulator_instruction": turn.prompt or "",
                "agent_message": agent_text,
                "agent_recommendation": recommendation,
                "user_response": turn.text,
                **{c: None for c in ANNOTATION_COLUMNS},
            })  # fmt: skip
        revealed += new
    return rows


def sample_rows(
    episodes: list[Episode],
    tasks: dict[str, Task],
    *,
    conversations: int = DEFAULT_CONVERSATIONS,
    seed: int = 0,
    responses: int | None = None,
    run: str = "",
    user: str = "",
) -> tuple[list[dict[str, Any]], int]:
    """A seeded sample of ``conversations`` conversations and their user responses (all of
    them, or a seeded sample of ``responses`` rows kept in conversation order); returns the
    rows and the number of eligible conversations."""
    eligible = [e for e in episodes if any(t.role == "user" and t.index > 0 for t in e.turns)]
    eligible.sort(key=lambda e: (e.task_id, e.trial, e.episode_id))
    rng = random.Random(seed)
    chosen = rng.sample(eligible, min(conversations, len(eligible)))
    chosen.sort(key=lambda e: (e.task_id, e.trial, e.episode_id))
    rows = [r for e in chosen for r in conversation_rows(e, tasks.get(e.task_id), run, user)]
    if responses is not None and responses < len(rows):
        keep = sorted(rng.sample(range(len(rows)), responses))
        rows = [rows[i] for i in keep]
    return rows, len(eligible)


def export_sheet(
    run_dir: Path,
    out: Path,
    *,
    conversations: int = DEFAULT_CONVERSATIONS,
    seed: int = 0,
    fmt: str = "csv",
    responses: int | None = None,
) -> ExportResult:
    """Write the annotation sheet of a run directory as CSV or JSONL."""
    run_dir = Path(run_dir)
    manifest = read_manifest(run_dir)
    episodes = read_episodes(run_dir)
    tasks = {t.task_id: t for t in load_tasks()}
    run = manifest.get("agent") or (episodes[0].agent if episodes else run_dir.name)
    rows, eligible = sample_rows(episodes, tasks, conversations=conversations, seed=seed,
                                 responses=responses, run=run,
                                 user=manifest.get("user", ""))  # fmt: skip
    if fmt == "jsonl":
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    elif fmt == "csv":
        buffer = io.StringIO(newline="")
        writer = csv.DictWriter(buffer, fieldnames=list(COLUMNS))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
        text = buffer.getvalue()
    else:
        raise ValueError(f"unknown format {fmt!r}: use csv or jsonl")
    out = write_text_atomic(out, text)
    return ExportResult(path=out, conversations=len({r["episode_id"] for r in rows}),
                        rows=len(rows), eligible=eligible)  # fmt: skip


# --------------------------------------------------------------------------- summarize


@dataclass
class SheetRow:
    number: int  # spreadsheet row (header = 1) for CSV, line number for JSONL
    values: dict[str, Any]
    problems: list[str] = field(default_factory=list)


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def parse_flag(value: Any) -> bool:
    """true/false, yes/no, 1/0, t/f, y/n or x (marked) in any case; raises ValueError."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    raise ValueError(f"{value!r} is not true or false")


def parse_rubric(value: Any) -> int:
    """An integer score from 1 to 5 ("4", "4.0" and 4.0 are read as 4); raises ValueError."""
    number: float | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or number != int(number) or not 1 <= number <= 5:
        raise ValueError(f"{value!r} is not an integer from 1 to 5")
    return int(number)


def read_sheet(path: Path) -> tuple[list[SheetRow], str]:
    """The rows of a CSV or JSONL sheet (format from the suffix, else from the first
    character); structural problems of a row are recorded on it, not raised."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise AnnotationError(f"{path}: cannot read the sheet: {exc}") from None
    suffix = path.suffix.lower()
    is_jsonl = suffix in (".jsonl", ".ndjson", ".json") or (
        suffix != ".csv" and text.lstrip().startswith("{")
    )
    if is_jsonl:
        return _read_jsonl(text), "jsonl"
    return _read_csv(text, path), "csv"


def _read_jsonl(text: str) -> list[SheetRow]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            rows.append(SheetRow(number, {}, [f"not valid JSON ({exc.msg})"]))
            continue
        if not isinstance(value, dict):
            rows.append(SheetRow(number, {}, ["not a JSON object"]))
            continue
        rows.append(SheetRow(number, value))
    missing = [c for c in ANNOTATION_COLUMNS[:-1] if rows and not any(c in r.values for r in rows)]
    if missing and all(not r.problems for r in rows):
        raise AnnotationError(f"no row has the annotation field(s): {', '.join(missing)}")
    return rows


def _read_csv(text: str, path: Path) -> list[SheetRow]:
    first = text.split("\n", 1)[0]
    delimiter = ";" if first.count(";") > first.count(",") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise AnnotationError(f"{path}: unreadable CSV header: {exc}") from None
    if not header:
        return []
    header = [h.strip() for h in header]
    missing = [c for c in ANNOTATION_COLUMNS[:-1] if c not in header]
    if missing:
        raise AnnotationError(f"{path}: the header lacks the column(s): {', '.join(missing)}")
    rows = []
    number = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            number += 1
            rows.append(SheetRow(number, {}, [f"unreadable CSV ({exc})"]))
            continue
        number += 1
        if not cells or all(not c.strip() for c in cells):
            continue  # a blank line
        row = SheetRow(number, dict(zip(header, cells, strict=False)))
        if len(cells) != len(header):
            row.problems.append(f"has {len(cells)} fields, the header has {len(header)}")
        rows.append(row)
    return rows


def _check(row: SheetRow) -> tuple[str, dict[str, Any]]:
    """('ok' | 'unfilled' | 'malformed', parsed annotations); problems go on the row."""
    if row.problems:
        return "malformed", {}
    wanted = (*FLAGS, *RUBRICS)
    if all(_is_blank(row.values.get(c)) for c in wanted):
        return "unfilled", {}
    parsed: dict[str, Any] = {}
    parsers = [(c, parse_flag) for c in FLAGS] + [(c, parse_rubric) for c in RUBRICS]
    for column, parse in parsers:
        value = row.values.get(column)
        if _is_blank(value):
            row.problems.append(f"{column}: missing")
            continue
        try:
            parsed[column] = parse(value)
        except ValueError as exc:
            row.problems.append(f"{column}: {exc}")
    return ("malformed", {}) if row.problems else ("ok", parsed)


def _quantile(sorted_values: list[int], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default method)."""
    position = (len(sorted_values) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def rubric_stats(values: list[int]) -> dict[str, Any]:
    """Mean, sample standard deviation (n - 1), median, quartiles, min/max and the
    distribution (counts and percentages) of 1-5 scores; the share below 3."""
    n = len(values)
    counts = {str(k): values.count(k) for k in range(1, 6)}
    if not n:
        return {"n": 0, "mean": None, "std": None, "median": None, "q1": None, "q3": None,
                "min": None, "max": None, "counts": counts,
                "percent": {k: 0.0 for k in counts}, "below_3": None}  # fmt: skip
    ordered = sorted(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else None
    return {
        "n": n,
        "mean": round(mean, 4),
        "std": round(std, 4) if std is not None else None,
        "median": _quantile(ordered, 0.5),
        "q1": _quantile(ordered, 0.25),
        "q3": _quantile(ordered, 0.75),
        "min": ordered[0],
        "max": ordered[-1],
        "counts": counts,
        "percent": {k: round(100 * c / n, 2) for k, c in counts.items()},
        "below_3": round(100 * sum(v < 3 for v in values) / n, 2),
    }


def summarize_rows(rows: list[SheetRow]) -> dict[str, Any]:
    """Table 3's statistics over the rows that are fully and correctly annotated."""
    annotated: list[tuple[SheetRow, dict[str, Any]]] = []
    unfilled: list[int] = []
    malformed: list[dict[str, Any]] = []
    for row in rows:
        status, parsed = _check(row)
        if status == "ok":
            annotated.append((row, parsed))
        elif status == "unfilled":
            unfilled.append(row.number)
        else:
            malformed.append({"row": row.number, "row_id": row.values.get("row_id"),
                              "problems": list(row.problems)})  # fmt: skip
    n = len(annotated)
    errors = {}
    for flag, label in FLAGS.items():
        count = sum(p[flag] for _, p in annotated)
        errors[flag] = {"label": label, "count": count, "n": n,
                        "rate": round(100 * count / n, 2) if n else None}  # fmt: skip
    rubrics = {}
    for rubric, label in RUBRICS.items():
        rubrics[rubric] = {"label": label, **rubric_stats([p[rubric] for _, p in annotated])}
    flagged = sum(any(p[f] for f in FLAGS) for _, p in annotated)
    conversations = {str(r.values.get("episode_id")) for r, _ in annotated
                     if not _is_blank(r.values.get("episode_id"))}  # fmt: skip
    return {
        "rows": len(rows),
        "annotated": n,
        "conversations": len(conversations),
        "any_error": {
            "label": "Any error",
            "count": flagged,
            "n": n,
            "rate": round(100 * flagged / n, 2) if n else None,
        },  # fmt: skip
        "errors": errors,
        "rubrics": rubrics,
        "unfilled": unfilled,
        "malformed": malformed,
    }


def summarize_sheet(path: Path) -> dict[str, Any]:
    """Read a filled sheet and compute Table 3 (see :func:`summarize_rows`)."""
    rows, fmt = read_sheet(path)
    result = summarize_rows(rows)
    result["format"] = fmt
    result["path"] = str(path)
    result["row_numbering"] = "spreadsheet rows (header = row 1)" if fmt == "csv" else "lines"
    return result


def _num(value: Any, digits: int = 2) -> str:
    """Fixed decimals; '-' for no value."""
    return "-" if value is None else f"{value:.{digits}f}"


def number_ranges(numbers: list[int]) -> str:
    """``[2, 3, 4, 7, 9, 10]`` -> ``"2-4, 7, 9-10"``."""
    parts: list[list[int]] = []
    for n in sorted(set(numbers)):
        if parts and parts[-1][1] == n - 1:
            parts[-1][1] = n
        else:
            parts.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in parts)


def format_summary(result: dict[str, Any]) -> str:
    """Table 3 as plain text, then the rows that were left out and why."""
    word = "row" if result.get("format", "csv") == "csv" else "line"
    lines = [
        f"{result['annotated']} annotated response(s) of {result['rows']} row(s) from "
        f"{result['conversations']} conversation(s); {len(result['unfilled'])} unfilled, "
        f"{len(result['malformed'])} malformed (left out)",
        "",
        f"{'Error type':<44} {'rate (%)':>8} {'count':>9}",
    ]
    for flag in result["errors"].values():
        lines.append(f"{flag['label']:<44} {_num(flag['rate'], 1):>8} "
                     f"{flag['count']:>4}/{flag['n']:<4}")  # fmt: skip
    any_error = result["any_error"]
    lines.append(f"{'Any error':<44} {_num(any_error['rate'], 1):>8} "
                 f"{any_error['count']:>4}/{any_error['n']:<4}")  # fmt: skip
    lines += ["", f"{'Rubric':<28} {'mean':>6} {'std':>6} {'median':>6} {'Q1':>5} {'Q3':>5} "
              f"{'<3 (%)':>7}   counts 1/2/3/4/5"]  # fmt: skip
    for rubric in result["rubrics"].values():
        counts = "/".join(str(rubric["counts"][str(k)]) for k in range(1, 6))
        lines.append(f"{rubric['label']:<28} {_num(rubric['mean']):>6} {_num(rubric['std']):>6} "
                     f"{_num(rubric['median'], 1):>6} {_num(rubric['q1'], 1):>5} "
                     f"{_num(rubric['q3'], 1):>5} {_num(rubric['below_3'], 1):>7}   {counts}")  # fmt: skip
    if result["unfilled"]:
        lines += ["", f"unfilled {word}s (left out): {number_ranges(result['unfilled'])}"]
    if result["malformed"]:
        lines += ["", f"malformed {word}s (left out):"]
        for bad in result["malformed"]:
            ident = f" ({bad['row_id']})" if bad.get("row_id") else ""
            lines.append(f"  {word} {bad['row']}{ident}: {'; '.join(bad['problems'])}")
    return "\n".join(lines)
