"""2D transpose materialised contiguously: out = x.t().contiguous().

x has shape (8192, 6144); the output has shape (6144, 8192). Non-square, so swapped row and
column strides give a wrong shape or wrong values.
"""

import torch
import torch.nn as nn

ROWS = 8192
COLS = 6144


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.t().contiguous()


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
