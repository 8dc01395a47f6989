"""The ``travelgym`` console script: a Ctrl-C while the command line is still being imported
(its first moments) is one line and exit status 130, as one during the command is; it printed
a 40-60 line traceback of the import under way."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from tests.runner.faults import child_env

# Ctrl-C lands in the middle of importing the command line (a finder raising it as the
# interpreter's handler would, at a point the test controls)
CHILD = """
import sys
class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == "travelgym.cli":
            raise KeyboardInterrupt
sys.meta_path.insert(0, CtrlC())
sys.argv = ["travelgym", "tasks", "compass"]
from travelgym.console import main
main()
"""


def test_the_console_script_is_the_guarded_entry_point():
    (script,) = entry_points(group="console_scripts", name="travelgym")
    assert script.value == "travelgym.console:main"


def test_ctrl_c_while_the_command_line_is_imported_is_one_line():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          env=child_env(), timeout=60)  # fmt: skip
    assert done.returncode == 130
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert done.stderr.strip().splitlines() == ["interrupted (SIGINT): stopped before starting"]
