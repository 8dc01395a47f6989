"""Text made safe to print to a terminal.

Text a model (or a tool, or a stored run) produced can carry terminal control sequences: an
escape sequence that clears the screen, writes the clipboard (OSC 52) or hides text, a carriage
return that overwrites what the line showed, bidirectional overrides that reorder it. Whatever
is printed for a person goes through :func:`printable`, which shows every such character
escaped (``\\x1b``, ``\\r``, ``\\u202e``) and keeps newlines and tabs.
"""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls (8-bit CSI/OSC), the bidirectional
# embedding/override/isolate marks, and the Unicode line and paragraph separators
# (a carriage return ending a line is harmless and kept)
_UNSAFE = re.compile("\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f"
                     "\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # fmt: skip


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code == 0x0D:
        return "\\r"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every terminal control character shown escaped (newlines and tabs kept)."""
    return _UNSAFE.sub(_escape, text)
