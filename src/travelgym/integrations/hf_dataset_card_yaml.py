"""The YAML of dataset cards, without anchors or aliases.

An alias repeats a node by reference, so a few kilobytes of nested aliases stand for gigabytes
once the front matter is walked (hashed, dumped as JSON): the classic "billion laughs". A card
never needs them, so :class:`CardLoader` refuses any alias (and with it every merge key that
names one) while composing, before a value is built, and :class:`CardDumper` writes values
that occur twice in full instead of as an alias, so that every card travelgym writes reads back.
"""

from __future__ import annotations

from typing import Any

import yaml


class CardLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses aliases (and so the expansion they allow)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        """The next node; a :class:`yaml.composer.ComposerError` at an alias."""
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, f"alias *{event.anchor} refused (a card has no aliases)",
                event.start_mark,
            )  # fmt: skip
        return super().compose_node(parent, index)


class CardDumper(yaml.SafeDumper):
    """``yaml.SafeDumper`` that writes no anchors or aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        """Always: a value met twice is written twice."""
        return True
