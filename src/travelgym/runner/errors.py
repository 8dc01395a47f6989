"""Errors of run directories: each message is one line that names the path and says what to do."""

from __future__ import annotations


class RunDirError(Exception):
    """A run directory that cannot be used as asked (the message says why and what to do)."""


class RunDirBusy(RunDirError):
    """Another process holds the run directory's lock (the message names it and its pid)."""


class StoreWriteError(RunDirError):
    """An episode could not be saved (disk full, read-only, I/O error); the saved ones are intact."""


class EpisodeFileError(RunDirError):
    """A line of ``episodes.jsonl`` that cannot be read (the message names the file, the line
    number and the reason)."""
