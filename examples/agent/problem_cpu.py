"""The CPU twin of problems/popcorn/1_broadcast_masked_from_row0.py (the seed run's problem,
PopcornBench level 1 problem 30): out[b, j] = x[0, j] where mask[j], else x[b, j].

The same model at a size a CPU evaluates in seconds (512 x 1024 against 16384 x 4096); the row
count is jittered under the popcorn variant, as there.
"""

import torch
import torch.nn as nn

from kernelbench.distributed_collectives import default_device

# `popcorn_pri` is injected into this module's namespace by the harness (not imported).

B = 512
D = 1024


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
