"""Building blocks of the ``travelgym`` command line: the error boundary, path parameters that
refuse unusable paths up front, finite number ranges, and options that know their suite and
their companions."""

from travelgym.clikit.errors import GuardedGroup, user_error_message
from travelgym.clikit.numbers import FiniteFloat, FiniteFloatRange
from travelgym.clikit.options import RuledCommand, RuledOption, comma_separated, is_used
from travelgym.clikit.paths import DataDirPath, InputPath, OutputPath

__all__ = [
    "FiniteFloat",
    "FiniteFloatRange",
    "GuardedGroup",
    "DataDirPath",
    "InputPath",
    "OutputPath",
    "RuledCommand",
    "RuledOption",
    "comma_separated",
    "is_used",
    "user_error_message",
]
