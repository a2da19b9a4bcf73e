"""Mean squared error between two tensors: torch.mean((a - b) ** 2), a 0-dimensional output.

a and b have shape (4096, 8192). The predictions are scaled by a seeded random factor s in [0, 1),
as in KernelBench's current 94_MSELoss: with two standard normal inputs the answer is 2 within
about 5e-4 whatever the seed, so a candidate returning the constant 2.0 would pass the fp32
tolerance about half the time (`kbench problems check` on the H200 reported it). With the scale
the answer is s^2 + 1 and follows the seed.
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
    scale = torch.rand(())
    return [torch.randn(BATCH, DIM) * scale, torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
