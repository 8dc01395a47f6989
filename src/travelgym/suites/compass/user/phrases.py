"""The template user's phrase banks: for each of the 9 styles (COMPASS Table 9), the framing of
every dialogue act. Every style has its own vocabulary, so wording differs across styles; each
bank has several entries and a message combines an opener, the acts' phrases and a closer, so a
long conversation need not repeat itself. Facts never come from here: they are the constraints'
and the objective's own sentences. ``{topic}`` in a ``nopref`` entry is what the agent asked
about. The banks are data, in ``phrases.json`` beside this module.
"""

from __future__ import annotations

import json
from pathlib import Path

_BANKS = json.loads(Path(__file__).with_name("phrases.json").read_text(encoding="utf-8"))

# style-neutral tails: after a requirement is revealed, and after a revision
MUST: tuple[str, ...] = tuple(_BANKS["must"])
REPLACES: tuple[str, ...] = tuple(_BANKS["replaces"])

# style number -> dialogue act -> its phrases
STYLES: dict[int, dict[str, tuple[str, ...]]] = {
    int(style): {act: tuple(phrases) for act, phrases in bank.items()}
    for style, bank in _BANKS["styles"].items()
}
