"""Shared setup for the Python tests of the worker-side modules.

They run on the CPU, against the compiled kbench_native extension in build/python and the
sources in python/ (the same PYTHONPATH the documented command sets; added here too so that a
bare `pytest tests/python` from the repository root also works).
"""

import os
import sys
from pathlib import Path

os.environ["KBENCH_DEVICE"] = "cpu"

_ROOT = Path(__file__).resolve().parents[2]
for _path in (_ROOT / "python", _ROOT / "build" / "python"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
