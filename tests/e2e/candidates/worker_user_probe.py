"""Test fixture: reports, from inside the candidate worker, who it runs as and whether the
process limit holds (tests/e2e/test_worker_user.cpp). It starts threads, which RLIMIT_NPROC
counts, until one fails or 6000 run, then raises with what it found, so the result's message
carries it. Not a kernel: evaluated with --rules structural."""

import os
import resource
import threading

import torch
import torch.nn as nn

_CAP = 6000


def _probe():
    soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    threading.stack_size(64 * 1024)
    release = threading.Event()
    threads, stop = [], "none"
    try:
        for _ in range(_CAP):
            thread = threading.Thread(target=release.wait)
            thread.start()
            threads.append(thread)
    except RuntimeError as error:
        stop = str(error)
    finally:
        release.set()
        for thread in threads:
            thread.join()
    groups = ",".join(str(g) for g in os.getgroups())
    return (f"worker probe: uid={os.getuid()} euid={os.geteuid()} gid={os.getgid()} "
            f"groups=[{groups}] nproc={soft} threads={len(threads)} stop={stop} "
            f"home={os.environ.get('HOME')}")


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        raise RuntimeError(_probe())

    def forward(self, x):
        return torch.relu(x)
