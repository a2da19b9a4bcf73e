"""Test fixture: a healthy problem that looks, on every call, at the check's outputs directory
(beside the reference worker's working directory) and raises if an earlier trial's files are
still there. `kbench problems check` judges each trial as it finishes and removes its files, so
that a problem's scratch holds one trial at a time (KernelBench's level-1 outputs reach 8 GiB)."""

from pathlib import Path

import torch
import torch.nn as nn

OUTPUTS = Path.cwd().parent / "outputs"


class Model(nn.Module):
    def forward(self, x):
        if not OUTPUTS.is_dir():
            raise RuntimeError(f"the fixture expects the check's outputs at {OUTPUTS}")
        left = sorted(p.name for p in OUTPUTS.glob("trial_*"))
        if left:
            raise RuntimeError(f"an earlier trial's files are still there: {left}")
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
