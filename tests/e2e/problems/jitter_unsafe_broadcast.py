"""Test fixture: PopcornBench's level1/popcorn/30_broadcast_masked_from_row0.py bug, small.

get_inputs jitters the batch, but forward expands to the module constant B, so the reference
itself raises whenever the jitter picks another batch size. kbench must blame the problem.
"""

import torch
import torch.nn as nn

from kernelbench.distributed_collectives import default_device

B = 18
D = 44
_MASK = torch.arange(D) % 3 != 1


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("row_mask", _MASK.clone(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = self.row_mask.to(device=x.device).view(1, D).expand(B, D)
        row0 = x[0:1].expand(B, D)
        return torch.where(m, row0, x)


def get_inputs():
    return [torch.randn(popcorn_pri.jitter_int(B), D, device=default_device())]


def get_init_inputs():
    return []
