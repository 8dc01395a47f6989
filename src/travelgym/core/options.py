"""A suite's options: the ``Options`` model of its flags (and, for a suite that trains, its
``TrainingOptions``; the models of its ``command_options`` for commands that read only them),
each field made with :func:`suite_flag` being a command-line flag of the commands it names; the
command line builds them from here (no shared module declares one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict


class SuiteOptions(BaseModel):
    """A suite's own flags (``--level``, ``--split``...), shared by its commands. A field the
    model does not have is a validation error: a flag of another suite is never ignored. A
    field made with :func:`suite_flag` is also a command-line flag of the commands it names,
    added to them by the command line (no shared module declares it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


FLAG_KEY = "travelgym_flag"  # where suite_flag keeps its command-line metadata


def suite_flag(default: Any = None, *, help: str, commands: Sequence[str],
               metavar: str | None = None, path: str | None = None,
               conflicts: Sequence[str] = (), requires: Sequence[str] = (),
               counterpart: str | None = None, **field_kwargs: Any) -> Any:  # fmt: skip
    """A :class:`SuiteOptions` field that is also the flag ``--NAME`` of ``commands`` (e.g.
    ``("run", "score", "tasks", "ingest")``), with ``help``. Its click type follows the field's
    annotation (a ``Literal`` is a choice, ``int``/``float`` numbers, ``bool`` a switch);
    ``path``: ``"file"``, ``"dir"`` or ``"any"`` for an existing path given as a string;
    ``conflicts``/``requires``: other parameters of the command it cannot be combined with or
    needs (``task_ids`` is ``--tasks``); ``counterpart``: the flag doing its job in other
    suites, named when it is refused. Two suites may declare the same flag, each with its own
    meaning: the command takes its value as the chosen suite's model reads it (a choice of one
    suite is no error for another); a switch in one suite and a valued flag in another, or a
    flag named like one of travelgym's own options of the command, sets the later suite aside
    with the clash named (:func:`travelgym.core.registry.broken_suites`)."""
    from pydantic import Field

    meta = {"commands": list(commands), "metavar": metavar, "path": path,
            "conflicts": list(conflicts), "requires": list(requires),
            "counterpart": counterpart}  # fmt: skip
    return Field(default, description=help, json_schema_extra={FLAG_KEY: meta}, **field_kwargs)


def declared_flags(options: type[SuiteOptions]) -> dict[str, tuple[Any, dict[str, Any]]]:
    """The :func:`suite_flag` fields of an ``Options`` model: name -> (field info, metadata)."""
    found = {}
    for name, info in options.model_fields.items():
        extra = info.json_schema_extra
        meta = extra.get(FLAG_KEY) if isinstance(extra, dict) else None
        if meta:
            found[name] = (info, meta)
    return found


def suite_flag_models(suite: Any) -> list[type[SuiteOptions]]:
    """The models whose :func:`suite_flag` fields are ``suite``'s flags: its ``Options``, for a
    suite that trains its ``TrainingOptions`` (the flags of ``train grpo``), then its
    ``command_options`` (those of the commands that read only them, ``chains`` say)."""
    training = getattr(suite, "TrainingOptions", None)
    return ([suite.Options] + ([training] if training is not None else [])
            + list(getattr(suite, "command_options", ())))  # fmt: skip


def command_model(suite: Any, command: str) -> type[SuiteOptions]:
    """The model of ``suite`` that reads its flags of ``command``: the first of its
    :func:`suite_flag_models` declaring a flag for it, else its ``Options`` (shared by its
    commands)."""
    for model in suite_flag_models(suite):
        if any(command in meta["commands"] for _, meta in declared_flags(model).values()):
            return model
    return suite.Options


def is_switch(info: Any) -> bool:
    """Whether a flag field is an on/off switch (``bool``, optional or not)."""
    import typing

    args = [a for a in typing.get_args(info.annotation) if a is not type(None)]
    return info.annotation is bool or args == [bool]
