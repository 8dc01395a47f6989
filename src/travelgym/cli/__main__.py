"""``python -m travelgym.cli``: the same as the ``travelgym`` command."""

from travelgym.cli import main

main()
