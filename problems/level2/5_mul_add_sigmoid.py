"""Elementwise chain with per-column parameters: out = sigmoid(x * weight + bias).

x is (4096, 8192); weight and bias are vectors of length 8192 broadcast over the rows.
"""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x * self.weight + self.bias)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return [DIM]
