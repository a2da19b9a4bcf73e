"""Broken candidate for problems/level1/1_relu.py: the output is float64, not float32.

The values are right, but forward returns relu(x).double(). kbench must report `incorrect` with a
dtype mismatch (float64 != reference float32).
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x).double()
