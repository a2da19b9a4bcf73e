"""Broken candidate for problems/level1/1_relu.py: forward never returns.

Loading and construction succeed; forward spins in `while True: pass`. kbench must report
`timeout` once its per-phase time limit passes, and kill the worker (no process left behind).
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        while True:
            pass
        return torch.relu(x)
