"""Broken candidate for problems/level1/1_relu.py: forward takes two tensors; the problem passes one.

kbench must report `runtime_error` saying that ModelNew.forward's signature cannot take the 1
argument the problem passes.
"""

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * mask
