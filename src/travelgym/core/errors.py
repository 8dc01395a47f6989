"""The one base class of errors whose messages are written for users."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in what the user gave (a file, a flag, a spec) or a state of the machine, with
    a one-line message the command line prints as it is (``Error: ...``, exit status 1). Every
    suite's user-facing error types derive from it, so the error boundary never names a suite."""


class UnknownSuite(UserError, LookupError):
    """No installed suite has that name."""


class Unsupported(UserError):
    """The suite lacks the capability a command needs (e.g. ``solve`` without exact ground
    truth)."""
