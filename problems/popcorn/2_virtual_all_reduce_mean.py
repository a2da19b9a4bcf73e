"""All-reduce (mean) over R=8 virtual ranks packed along dim 0, in one process.

x is (R*N, D): rank r owns rows [r*N, (r+1)*N). Every rank's block of the output is the
elementwise mean of the R blocks. N is jittered; forward derives it from x.shape[0] // R.
"""

import torch
import torch.nn as nn

from kernelbench.distributed_collectives import default_device

# `popcorn_pri` is injected into this module's namespace by the harness (not imported).

WORLD_SIZE = 8
N = 2048
D = 4096


class Model(nn.Module):
    def __init__(self, world_size: int):
        super().__init__()
        self.world_size = world_size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, dim = x.shape
        n = rows // self.world_size
        blocks = x.view(self.world_size, n, dim)
        mean = blocks.mean(dim=0, keepdim=True)
        return mean.expand(self.world_size, n, dim).reshape(rows, dim)


def get_inputs():
    n = popcorn_pri.jitter_int(N)  # noqa: F821
    return [torch.randn(WORLD_SIZE * n, D, device=default_device())]


def get_init_inputs():
    return [WORLD_SIZE]
