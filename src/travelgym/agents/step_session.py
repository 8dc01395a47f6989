"""A tool session that records an episode as steps: what every text-format agent loop (ReAct,
the B2T action format, native tool calls) writes into, one step per model message."""

from __future__ import annotations

from typing import Any

from travelgym.agents.tool_session import ToolSession
from travelgym.core.records import ToolCallRecord
from travelgym.llm.protocol import Repair, Usage


class StepSession(ToolSession):
    """:class:`ToolSession` plus the episode's steps, chat, model usage and calls. A suite
    gives the step model (:meth:`make_step`) and how a failed tool call is recorded as an
    invalid action (:meth:`invalid_call`)."""

    def __init__(self, registry: Any, context: Any, keep_results: bool = True) -> None:
        super().__init__(registry, context, keep_results)
        self.steps: list[Any] = []
        self.messages: list[dict[str, Any]] = []  # the agent's chat, for the trajectory
        self.usage = Usage()
        self.llm_calls = 0
        self._repairs: list[Repair] = []

    def default_call_id(self, parent: str | None) -> str:
        """``call_<step>_<n>``."""
        return f"call_{len(self.steps)}_{len(self.calls)}"

    def make_step(self, **fields: Any) -> Any:
        """The suite's step record of ``fields``."""
        raise NotImplementedError

    def invalid_call(self, index: int, call: ToolCallRecord) -> Any:
        """The invalid-action record of a failed tool call in step ``index``."""
        raise NotImplementedError

    def close_step(self, invalid: list[Any], **fields: Any) -> Any:
        """Close a step: it takes the tool calls made since the previous one (each failed call
        an invalid action after ``invalid``) and the repairs of the model replies counted
        since (:meth:`count_llm`)."""
        index = len(self.steps)
        calls = self.take_calls()
        invalid = [*invalid, *(self.invalid_call(index, c) for c in calls if not c.ok)]
        repairs = [*self._repairs, *fields.pop("repairs", [])]
        step = self.make_step(index=index, tool_calls=calls, invalid_actions=invalid,
                              repairs=repairs, **fields)  # fmt: skip
        self._repairs = []
        self.steps.append(step)
        return step

    def count_llm(self, usage: Usage, repairs: list[Repair] | None = None) -> None:
        """Count one model call: its usage, and its repairs for the step it opens."""
        self.usage = self.usage + usage
        self.llm_calls += 1
        self._repairs.extend(repairs or ())
