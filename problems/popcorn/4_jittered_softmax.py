"""Softmax over the last dimension with both the number of rows and the row width jittered.

x is about (4096, 8192); forward works for any 2D shape.
"""

import torch
import torch.nn as nn

from kernelbench.distributed_collectives import default_device

# `popcorn_pri` is injected into this module's namespace by the harness (not imported).

ROWS = 4096
WIDTH = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    rows = popcorn_pri.jitter_int(ROWS)  # noqa: F821
    width = popcorn_pri.jitter_int(WIDTH)  # noqa: F821
    return [torch.randn(rows, width, device=default_device())]


def get_init_inputs():
    return []
