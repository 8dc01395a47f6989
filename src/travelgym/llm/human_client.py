"""``human:NAME``: a person at the terminal as the chat model (``travelgym play --as agent``).

Each time the agent asks for a completion, :class:`HumanChatClient` shows what is new in the
chat (the system prompt and task at the start, tool results, the other side's replies) and
reads the person's turn (:mod:`travelgym.llm.human_input`): a message, or tool calls by name
with arguments, which the agent runs as it runs a model's. End-of-input, ``/quit`` and Ctrl-C
end the episode: the client raises :class:`PlayerQuit`, an :class:`LLMError` that the suites
record as the agent's (or user's) error, so the episode is stored, marked as ended by the
player, and scored on what was delivered so far.

:class:`Terminal` is the line-based terminal both this client and the suites' human user
backends (``travelgym play --as user``) talk through.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, TextIO

from travelgym.llm.human_input import InputError, describe_tools, parse_line, tools_by_name
from travelgym.llm.protocol import ChatMessage, ChatResponse, LLMError, ToolCall
from travelgym.terminal import printable

PLAYER_QUIT = "ended_by_player"
MAX_SHOWN_CHARS = 4000  # longer tool results are cut on screen (``/full`` shows them whole)

HELP = """Your turn as the agent. Type one of:
  a message               your reply: it ends your step (write it in the format the system
                          prompt asks for; /system shows the prompt again)
  TOOL key=value ...      call a tool (values are typed by its schema: nights=2, flag=true;
                          quote values with spaces: location="Grand Canyon")
  TOOL {"key": "value"}   call a tool with JSON arguments
  CALL; CALL              several tool calls at once
Commands:
  /tools [TOOL]           the tools and their parameters (one tool in full)
  /system                 the system prompt again
  /full                   the last tool results in full (long ones are cut on screen)
  /say TEXT               send TEXT as your message (when it looks like a tool call)
  /multi                  type a message over several lines, ended by a line /end
  /help                   this help
  /quit                   end the episode (also Ctrl-D); it is stored and scored"""

NO_TOOLS_HELP = """Your turn as the agent. This agent offers no native tool calls: type your
whole reply in the action format the system prompt describes (/system shows it again).
Commands: /system, /full, /multi (several lines, ended by /end), /help, /quit (also Ctrl-D)."""


class PlayerQuit(LLMError):
    """The person ended the episode (``/quit``, end of input or Ctrl-C)."""

    def __init__(self, how: str = "/quit") -> None:
        super().__init__(PLAYER_QUIT, f"the player ended the episode ({how})")


class Terminal:
    """Line-based terminal I/O: :meth:`show` text, :meth:`ask` for a line. End of input and
    Ctrl-C while reading raise :class:`PlayerQuit`. With the process's own streams the line is
    read with :func:`input` (line editing where ``readline`` is available)."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stdout
        self._own = stdin is None and stdout is None

    def show(self, text: str = "") -> None:
        """Write ``text`` and a newline, its terminal control characters shown escaped
        (:func:`~travelgym.terminal.printable`): model and tool text must not drive the
        player's terminal."""
        self.stdout.write(printable(text) + "\n")
        self.stdout.flush()

    def heading(self, title: str) -> None:
        """A section heading (who speaks next)."""
        self.show(f"--- {title} ---")

    def ask(self, prompt: str) -> str:
        """One line typed by the person (without the newline)."""
        try:
            if self._own and self.stdin.isatty():
                _line_editing()
                with _interruptible():
                    return input(printable(prompt))
            self.stdout.write(printable(prompt))
            self.stdout.flush()
            line = self.stdin.readline()
        except EOFError:
            raise PlayerQuit("end of input") from None
        except KeyboardInterrupt:
            raise PlayerQuit("Ctrl-C") from None
        if not line:
            raise PlayerQuit("end of input")
        return line.rstrip("\r\n")


class HumanChatClient:
    """A :class:`~travelgym.llm.protocol.ChatClient` whose replies a person types (see the
    module docstring). ``name``: the player's name (``human:NAME``); ``terminal``: where to
    talk (default: the process's stdin and stdout). Client options of a run (budget, cache,
    generation parameters) do not apply to a person and are ignored."""

    def __init__(self, name: str = "player", *, terminal: Terminal | None = None,
                 **_ignored: Any) -> None:  # fmt: skip
        self.model = f"human:{name or 'player'}"
        self.terminal = terminal if terminal is not None else Terminal()
        self._shown = 0  # messages of the chat already on screen
        self._first: str | None = None  # the chat's first message: a new one is a new chat
        self._system = ""
        self._last_results: list[str] = []
        self._calls = 0

    async def aclose(self) -> None:
        """Nothing to release (the terminal is the process's)."""

    async def complete(self, messages: list[ChatMessage], tools: list[dict[str, Any]] | None = None,
                       **params: Any) -> ChatResponse:  # fmt: skip
        """Show the chat's new messages, then read the person's turn: a message or tool calls
        (commands and input mistakes are answered and the person types again)."""
        started = time.perf_counter()
        by_name = tools_by_name(tools)
        new_chat = self._catch_up(messages)
        if new_chat:
            self.terminal.show(HELP if by_name else NO_TOOLS_HELP)
        while True:
            line = self.terminal.ask("you (agent)> ")
            try:
                entry = parse_line(line, by_name)
                if entry is None:
                    continue
                if entry.kind == "command":
                    text = self._command(entry.name, entry.text, by_name)
                    if text is None:
                        continue
                    message = ChatMessage(role="assistant", content=text)
                elif entry.kind == "calls":
                    message = ChatMessage(role="assistant", content=None,
                                          tool_calls=[self._tool_call(n, a)
                                                      for n, a in entry.calls])  # fmt: skip
                else:
                    message = ChatMessage(role="assistant", content=entry.text)
            except InputError as exc:
                self.terminal.show(f"error: {exc}")
                continue
            break
        return ChatResponse(message=message, model=self.model,
                            latency_s=time.perf_counter() - started,
                            finish_reason="tool_calls" if message.tool_calls else "stop")  # fmt: skip

    def _tool_call(self, name: str, arguments: dict[str, Any]) -> ToolCall:
        self._calls += 1
        return ToolCall(id=f"call_{self._calls}", name=name,
                        arguments=json.dumps(arguments, ensure_ascii=False))  # fmt: skip

    def _catch_up(self, messages: list[ChatMessage]) -> bool:
        """Show the messages not shown yet; whether this is a new chat (shown from the start)."""
        first = messages[0].content if messages else None
        new_chat = self._first is None or first != self._first or len(messages) < self._shown
        if new_chat:
            self._first, self._shown = first, 0
        results = []
        # a tool message names its tool, or its call does (the OpenAI form carries only the id)
        called = {c.id: c.name for m in messages if m.role == "assistant" for c in m.tool_calls}
        for message in messages[self._shown :]:
            if message.role == "system":
                self._system = message.content or ""
                self.terminal.heading("system prompt")
                self.terminal.show(self._system)
            elif message.role == "tool":
                text = _pretty(message.content or "")
                name = message.name or called.get(message.tool_call_id or "") or "tool"
                results.append(f"--- result of {name} ---\n{text}")
                self.terminal.heading(f"result of {name}")
                self.terminal.show(_cut(text))
            elif message.role == "user":
                self.terminal.heading("user")
                self.terminal.show(message.content or "")
        if results:
            self._last_results = results
        self._shown = len(messages)
        return new_chat

    def _command(self, name: str, arg: str, tools: dict[str, dict[str, Any]]) -> str | None:
        """Run a command; the text to send as the message (``/say``, ``/multi``) or ``None``."""
        if name in ("quit", "exit", "q"):
            raise PlayerQuit("/quit")
        if name == "say":
            if not arg:
                raise InputError("/say needs the text to send")
            return arg
        if name == "multi":
            return self._multi()
        if name == "help":
            self.terminal.show(HELP if tools else NO_TOOLS_HELP)
        elif name == "tools":
            if not tools:
                raise InputError("this agent offers no native tool calls: use the action format "
                                 "of the system prompt (/system)")  # fmt: skip
            self.terminal.show(describe_tools(tools, arg))
        elif name == "system":
            self.terminal.show(self._system or "(no system prompt)")
        elif name == "full":
            self.terminal.show("\n".join(self._last_results) or "(no tool results yet)")
        else:
            raise InputError(f"unknown command /{name} (/help lists them)")
        return None

    def _multi(self) -> str:
        self.terminal.show("(type the message; a line /end sends it)")
        lines = []
        while (line := self.terminal.ask("... ")).strip() != "/end":
            lines.append(line)
        if not "".join(lines).strip():
            raise InputError("empty message: nothing sent")
        return "\n".join(lines)


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt while the person types: ``asyncio.run``'s own SIGINT
    handler only cancels the episode's task, which a blocked :func:`input` would not see."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _line_editing() -> None:
    """Give :func:`input` line editing and history where the platform has ``readline``."""
    with contextlib.suppress(ImportError):
        import readline  # noqa: F401 - importing it is what enables editing in input()


def _pretty(text: str) -> str:
    """A tool result for the screen: a JSON object one key a line (a list of objects one item
    a line), anything else as it is."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text
    if not isinstance(value, dict):
        return _json(value)
    lines = []
    for key, item in value.items():
        if isinstance(item, list) and item and all(isinstance(i, dict) for i in item):
            lines.append(f"{key} ({len(item)}):")
            lines += [f"  {_json(i)}" for i in item]
        else:
            lines.append(f"{key}: {_json(item)}")
    return "\n".join(lines)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _cut(text: str) -> str:
    if len(text) <= MAX_SHOWN_CHARS:
        return text
    more = len(text) - MAX_SHOWN_CHARS
    return f"{text[:MAX_SHOWN_CHARS]}\n... ({more} more characters: /full shows them)"
