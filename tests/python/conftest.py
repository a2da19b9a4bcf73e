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


def start_kbench_serve(kbench, db, *extra):
    """`kbench serve --db DB --port 0 EXTRA...` in the background: answers (process, base URL,
    the line it printed), or skips the test where kbench was built without cpp-httplib."""
    import pytest
    import subprocess

    service = subprocess.Popen([kbench, "serve", "--db", str(db), "--port", "0", *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = service.stdout.readline()
    if not line and "built without cpp-httplib" in service.stderr.read():
        pytest.skip("this kbench was built without cpp-httplib: no kbench serve")
    assert "http://127.0.0.1:" in line, line
    return service, "http://127.0.0.1:" + line.split("http://127.0.0.1:")[1].split()[0], line
