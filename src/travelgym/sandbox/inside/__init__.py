"""What runs inside the sandbox: standalone modules (standard library only, Python 3.9+).

These files are copied into a read-only directory of the sandbox (``/sandbox``); they never
import travelgym, so the sandbox holds none of the package (its bundled task file carries the
hidden constraints). The parent imports ``channel`` and ``stubs`` from here too, so both sides
share one definition of the wire format and of the tool functions.
"""
