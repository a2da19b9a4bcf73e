"""Test fixture: reports, from inside the candidate worker, the environment it sees, in both
views (Python's os.environ and the C environ through libc's getenv), then raises so that the
result's message carries it (tests/e2e/test_fork_server.cpp). Not a kernel."""

import ctypes
import os

import torch.nn as nn

_libc = ctypes.CDLL(None)
_libc.getenv.restype = ctypes.c_char_p


def _probe():
    names = ",".join(sorted(os.environ))
    leak = os.environ.get("KBENCH_FORK_LEAK_PROBE")
    c_leak = _libc.getenv(b"KBENCH_FORK_LEAK_PROBE")
    c_tmp = _libc.getenv(b"TMPDIR")
    same_tmp = (c_tmp or b"").decode() == os.environ.get("TMPDIR")
    return f"environment probe: names=[{names}] leak={leak} c_leak={c_leak} same_tmp={same_tmp}"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        raise RuntimeError(_probe())
