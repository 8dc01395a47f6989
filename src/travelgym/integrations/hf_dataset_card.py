"""The dataset card (``README.md``) of an exported dataset: YAML front matter that ``datasets``
and the Hub read (configs with their data files per split, licence, pretty name, tags) plus a
``travelgym`` block that ``run --tasks-from`` checks (versions, content hashes, the command);
then the schema, versions, licence and provenance for people."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from travelgym.core.errors import UserError
from travelgym.integrations.hf_dataset_card_yaml import CardDumper, CardLoader
from travelgym.safe_open import open_regular

CARD = "README.md"
LICENSE = "apache-2.0"  # the generated data is travelgym's own
MAX_CARD_BYTES = 4 << 20  # a card is kilobytes; the front matter is read whole


def canonical(value: Any) -> str:
    """One stable JSON text of ``value`` (sorted keys, no spaces): what hashes are taken of."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


# what each column of the files means (columns a suite adds to the tasks are its browsing ones)
MEANINGS = {
    "task_id": "the task's id (what runs, answers and scores key by)",
    "task_json": "the whole task record as JSON (the suite's pydantic model, `model_dump(mode="
    '"json")`), answer key left out: rebuild it with `Model.model_validate_json`',
    "trial": "the episode's trial number",
    "agent": "the agent spec that played the episode",
    "error": "why the episode failed (null when it ran to the end)",
    "score_json": "the episode's whole score as JSON",
    "episode_json": "the whole stored episode (trajectory, answer, score) as JSON",
}


def content_sha256(meta: dict[str, Any]) -> str:
    """The dataset's content hash: of every file's row hash and the data's identity (the
    metadata without the command and the hash itself)."""
    body = {k: v for k, v in meta.items() if k not in ("content_sha256", "command")}
    return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()


def _meaning(name: str, suite: Any) -> str:
    if name in suite.dataset_column_help:
        return suite.dataset_column_help[name]
    if name in MEANINGS:
        return MEANINGS[name]
    if name.startswith("score_"):
        return f"the score's `{name[6:]}` (null where the episode has none)"
    if name.endswith("_json"):
        return f"answer key: the task's `{name[:-5]}` as JSON"
    return "the task record's field of that name (also inside `task_json`)"


def _yaml(suite: Any, meta: dict[str, Any]) -> str:
    import yaml

    configs = [{"config_name": "default", "default": True,
                "data_files": [{"split": n, "path": s["file"]}
                               for n, s in meta["splits"].items()]}]  # fmt: skip
    if "ground_truth" in meta:
        configs.append({"config_name": "ground_truth",
                        "data_files": [{"split": n, "path": s["file"]}
                                       for n, s in meta["ground_truth"].items()]})  # fmt: skip
    if "episodes" in meta:
        configs.append({"config_name": "episodes",
                        "data_files": [{"split": "run", "path": meta["episodes"]["file"]}]})  # fmt: skip
    front = {"pretty_name": f"travelgym {suite.title}", "license": LICENSE,
             "tags": ["travelgym", suite.name, "travel-planning", "agents", "benchmark"],
             "configs": configs, "travelgym": meta}  # fmt: skip
    return yaml.dump(front, Dumper=CardDumper, sort_keys=False, allow_unicode=True, width=1000)


def render_card(suite: Any, meta: dict[str, Any], tables: list[Any]) -> str:
    """The card's text: front matter, then the schema, versions, licence and provenance."""
    from travelgym.version import __version__

    lines = ["---", _yaml(suite, meta).rstrip(), "---", "", f"# travelgym {suite.title}", ""]
    lines += [suite.description[:1].upper() + suite.description[1:] + ".", "",
              "Load the tasks with `datasets.load_dataset(\"parquet\", data_dir=DIR)` (one split "
              "per file under `data/`), or `load_dataset(DIR)` and `load_dataset(DIR, "
              "\"ground_truth\")` / `\"episodes\"` for the other configs. Run them with "
              f"`travelgym run {suite.name} --tasks-from DIR`, which checks the hashes below.",
              "", "## Files and schema", ""]  # fmt: skip
    for table in tables:
        lines += [f"`{table.path}`: {len(table.rows)} rows, rows sha256 `{table.sha256}`", "",
                  "| column | type | meaning |", "| --- | --- | --- |"]  # fmt: skip
        lines += [f"| `{n}` | {t} | {_meaning(n, suite)} |" for n, t in table.columns]
        lines.append("")
    lines += ["## Versions and content hashes", "",
              f"- content sha256 (`travelgym.content_sha256`): `{meta['content_sha256']}`",
              f"- written by travelgym {__version__}, dataset format {meta['format']}",
              f"- database seed: {meta['db_seed']}"]  # fmt: skip
    for name, split in meta["splits"].items():
        data = ", ".join(f"{k} {v}" for k, v in split["data"].items())
        lines.append(f"- split `{name}`: database content hash `{split['db_content_hash']}`, "
                     f"task/instance file sha256 `{split['tasks_sha256']}`"
                     + (f"; {data}" if data else ""))  # fmt: skip
    lines += ["", "## Answer key", "",
              "The task columns never hold an answer key: "
              + (f"`{'`, `'.join(suite.answer_key_fields)}` is left out of `task_json`. "
                 if suite.answer_key_fields else "")
              + ("It is in `ground_truth/` (written with `--ground-truth`)."
                 if "ground_truth" in meta else "`--ground-truth` writes it to `ground_truth/`."),
              "", "## Licence", "",
              f"{LICENSE}: the data is generated by travelgym (Apache-2.0). Data a suite reads "
              "from files you supplied keeps the licence of those files.", "",
              "## How it was generated", "", "```", meta["command"] or "(not recorded)", "```",
              "", "Every task is a deterministic function of the seeds and versions above; the "
              "same command with the same travelgym version writes the same rows."]  # fmt: skip
    return "\n".join(lines) + "\n"


def _yaml_problem(exc: Exception) -> str:
    """A YAML error as one short phrase: the problem and where it is."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is None or problem is None:
        return str(exc)
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"


def read_card(directory: Path) -> dict[str, Any]:
    """The ``travelgym`` block of ``directory``'s card; a one-line error when the directory is
    missing or no travelgym dataset."""
    import yaml

    if not directory.is_dir():
        raise UserError(f"--tasks-from {directory}: no such directory")
    path = directory / CARD
    try:
        with open_regular(path) as handle:
            data = handle.read(MAX_CARD_BYTES + 1)
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise UserError(f"--tasks-from {directory}: not a travelgym dataset (no {CARD})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None
    if len(data) > MAX_CARD_BYTES:
        raise UserError(f"{path}: larger than the {MAX_CARD_BYTES} bytes a card may have")
    parts = text.split("\n---", 1) if text.startswith("---\n") else []
    try:
        front = yaml.load(parts[0][4:], Loader=CardLoader) if len(parts) == 2 else None
    except (yaml.YAMLError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else _yaml_problem(exc)
        raise UserError(
            f"{path}: front matter is not valid YAML ({reason})".replace("\n", " ")
        ) from None
    meta = front.get("travelgym") if isinstance(front, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get("splits"), dict):
        raise UserError(f"--tasks-from {directory}: not a travelgym dataset (its {CARD} has no "
                        "travelgym block)")  # fmt: skip
    if str(meta.get("format")) != "1":
        raise UserError(f"{path}: dataset format {meta.get('format')!r}, this travelgym reads 1")
    if meta.get("content_sha256") != content_sha256(meta):
        raise UserError(f"{path}: the card's travelgym block was changed (its content_sha256 "
                        "does not match)")  # fmt: skip
    return meta
