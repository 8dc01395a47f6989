"""What counts as one sentence the user says, for the rule that no sentence of
:data:`LONG_SENTENCE_WORDS` or more words is said more than :data:`MAX_SAME_SENTENCE` times in a
conversation (the template's wording obeys it; the tests read conversations with it).

A sentence ends at ``.``, ``!`` or ``?`` followed by white space, or at a line break; two
sentences are the same when they are equal ignoring case, white space and the closing
punctuation. Shorter sentences ("Not yet.", "Okay.") may repeat, as a person's do.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterable

LONG_SENTENCE_WORDS = 4
MAX_SAME_SENTENCE = 2
_END = re.compile(r"(?<=[.!?])\s+|\n+")
_CLOSING = " \t.!?\"'"


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, in order (empty pieces dropped)."""
    return [s.strip() for s in _END.split(text or "") if s.strip()]


def key(sentence: str) -> str:
    """The form two sentences are compared in: lower case, single spaces, no closing marks."""
    return " ".join(sentence.lower().split()).rstrip(_CLOSING)


def long_sentences(text: str, complete_only: bool = False) -> list[str]:
    """The comparison keys of the sentences of ``text`` with at least
    :data:`LONG_SENTENCE_WORDS` words; ``complete_only``: leave out a last one that does not end
    with ``.``, ``!`` or ``?`` yet (a message still being put together)."""
    parts = sentences(text)
    if complete_only and parts and parts[-1][-1:] not in ".!?":
        parts = parts[:-1]
    return [key(s) for s in parts if len(s.split()) >= LONG_SENTENCE_WORDS]


def sentence_counts(texts: Iterable[str]) -> collections.Counter[str]:
    """How often each long sentence (its comparison key) occurs in ``texts``."""
    return collections.Counter(s for text in texts for s in long_sentences(text))
