"""Masked broadcast from row 0: out[b, j] = x[0, j] where mask[j], else x[b, j].

The bool mask over the D columns is fixed (torch.arange(D) % 3 != 1) and held as a buffer; the
number of rows is jittered, and forward takes it from the input, never from the constant B.
"""

import torch
import torch.nn as nn

from kernelbench.distributed_collectives import default_device

# `popcorn_pri` is injected into this module's namespace by the harness (not imported).

B = 16384
D = 4096


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.register_buffer("mask", torch.arange(dim) % 3 != 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (rows, D) with any number of rows; x[:1] broadcasts over them.
        return torch.where(self.mask, x[:1], x)


def get_inputs():
    rows = popcorn_pri.jitter_int(B)  # noqa: F821
    return [torch.randn(rows, D, device=default_device())]


def get_init_inputs():
    return [D]
