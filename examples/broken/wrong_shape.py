"""Broken candidate for problems/level1/1_relu.py: the output is one column short.

forward returns relu(x[:, :-1]), shape (4096, 8191) instead of (4096, 8192). kbench must report
`incorrect` with a shape mismatch ("shape [4096, 8191] != reference shape [4096, 8192]"),
without an elementwise comparison.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x[:, :-1])
