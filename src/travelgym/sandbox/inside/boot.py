"""The sandbox's entry script: ``python -I -S -B boot.py FD``. Kept tiny because a script is
compiled on every start, while the imported runtime modules come precompiled."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runtime  # noqa: E402

del sys.path[0]  # the code may import the runtime by path only, never by accident
runtime.main(int(sys.argv[1]))
