"""Argmax over dimension 1: the index (int64) of the largest value along that dimension.

x has shape (16, 4096, 1024); the output has shape (16, 1024) and must match exactly.
"""

import torch
import torch.nn as nn

BATCH = 16
DIM1 = 4096
DIM2 = 1024


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [1]
