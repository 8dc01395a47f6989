"""The template user's phrase banks: for each of the 9 styles (COMPASS Table 9), the framing of
every dialogue act. Every style has its own vocabulary, so wording differs across styles; each
bank has several entries and a message combines an opener, the acts' phrases and a closer, so a
long conversation need not repeat itself. Facts never come from here: they are the constraints'
and the objective's own sentences. ``{topic}`` in a ``nopref`` entry is what the agent asked
about. Each act also has reserves of under 4 words (``*_short``), used once the bank's longer
sentences have each been said twice, and ``WRAPPERS`` lead a fact the user repeats ("As I said:
..."), so no sentence of 4+ words need be said more than twice. The banks are data, in
``phrases.json`` beside this module.
"""

from __future__ import annotations

import json
from pathlib import Path

_BANKS = json.loads(Path(__file__).with_name("phrases.json").read_text(encoding="utf-8"))

# style-neutral tails: after a requirement is revealed, and after a revision
MUST: tuple[str, ...] = tuple(_BANKS["must"])
REPLACES: tuple[str, ...] = tuple(_BANKS["replaces"])
WRAPPERS: tuple[str, ...] = tuple(_BANKS["wrappers"])  # lead a repeated fact
CLARIFY: tuple[str, ...] = tuple(_BANKS["clarify"])  # a questioning user's restatement
UNSURE: tuple[str, ...] = tuple(_BANKS["unsure"])  # a topic whose requirement is held back
IMPATIENT: tuple[str, ...] = tuple(_BANKS["impatient"])  # style 8 on a violation
# act (or bank) -> its reserves of under 4 words
SHORT: dict[str, tuple[str, ...]] = {
    name[: -len("_short")]: tuple(v) for name, v in _BANKS.items() if name.endswith("_short")
}
# revision_change's direction -> what the user says of it ({amount}, {nights})
CHANGES: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in _BANKS["revise_change"].items()}

# style number -> dialogue act -> its phrases
STYLES: dict[int, dict[str, tuple[str, ...]]] = {
    int(style): {act: tuple(phrases) for act, phrases in bank.items()}
    for style, bank in _BANKS["styles"].items()
}
