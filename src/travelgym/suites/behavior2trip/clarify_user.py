"""The simulated traveller of one clarification episode (RQ1): it answers the agent's
``AskUser`` calls from the hidden profile, by the template rules
(:func:`~travelgym.suites.behavior2trip.clarify.template_answer`) or through a model
(:func:`~travelgym.suites.behavior2trip.clarify_llm.llm_answer`), and logs the exchanges."""

from __future__ import annotations

import time
from typing import Any

from travelgym.llm.protocol import Usage
from travelgym.suites.behavior2trip.clarify import (
    ASK_USER,
    DEFAULT_CLARIFY_TURNS,
    MAX_QUESTION_CHARS,
    Clarification,
    ClarifyError,
    Exchange,
    template_answer,
)
from travelgym.suites.behavior2trip.clarify_llm import llm_answer
from travelgym.toolkit.errors import ErrorCategory, ToolResult


class SimulatedUser:
    """The user of one episode: answers ``AskUser`` calls from the hidden ``profile`` with the
    template rules, or with ``client`` (an LLM user) when one is given."""

    def __init__(self, profile: Any, limit: int = DEFAULT_CLARIFY_TURNS, client: Any = None,
                 name: str = "template") -> None:  # fmt: skip
        self.profile, self.client = profile, client
        self.log = Clarification(user=name, limit=limit)
        self.usage = Usage()  # of the LLM user's model calls

    async def answer(self, question: str) -> tuple[str, list[str]]:
        """The reply to one question (raises :class:`ClarifyError` when an LLM user fails)."""
        if self.client is None:
            return template_answer(question, self.profile)
        reply, usage = await llm_answer(self.client, self.profile, question, self.log.exchanges)
        self.usage = self.usage + usage
        return reply, []

    async def ask(self, arguments: Any) -> ToolResult:
        """Serve one ``AskUser`` call: validated, counted, answered (never raises)."""
        question = arguments.get("question") if isinstance(arguments, dict) else None
        if not isinstance(question, str) or not question.strip():
            message = "AskUser needs one parameter 'question' (a non-empty text)"
            return ToolResult.failure(ASK_USER, ErrorCategory.PARAMETER, message)
        question = question.strip()[:MAX_QUESTION_CHARS]
        if self.log.turns >= self.log.limit:
            message = (f"the clarification limit of {self.log.limit} questions is reached; plan "
                       "with what you know")  # fmt: skip
            self.log.exchanges.append(Exchange(turn=0, question=question, error=message))
            return ToolResult.failure(ASK_USER, ErrorCategory.CONTENT, message)
        try:
            reply, topics = await self.answer(question)
        except ClarifyError as exc:
            self.log.exchanges.append(Exchange(turn=0, question=question, error=str(exc)))
            return ToolResult.failure(ASK_USER, ErrorCategory.CONTENT,
                                      f"the user could not answer: {exc}")  # fmt: skip
        self.log.turns += 1
        self.log.exchanges.append(Exchange(turn=self.log.turns, question=question, answer=reply,
                                           topics=topics))  # fmt: skip
        left = self.log.limit - self.log.turns
        return ToolResult.success(ASK_USER, {"answer": reply, "turn": self.log.turns,
                                             "turns_left": left})  # fmt: skip

    async def acall(self, env: Any, arguments: Any, call_id: str | None = None) -> Any:
        """Run an ``AskUser`` call in ``env`` (a tool session) and record it like a tool call."""
        start = time.perf_counter()
        result = await self.ask(arguments)
        shown = arguments if isinstance(arguments, dict) else {"raw": str(arguments)[:500]}
        return env.record(ASK_USER, shown, result, (time.perf_counter() - start) * 1000, call_id)
