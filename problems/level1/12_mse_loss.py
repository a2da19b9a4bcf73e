"""Mean squared error between two tensors: torch.mean((a - b) ** 2), a 0-dimensional output.

a and b have shape (4096, 8192).
"""

import torch
import torch.nn as nn

BATCH = 4096
DIM = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
