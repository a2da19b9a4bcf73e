"""Test candidate for problems/collectives/1_all_reduce_mean_affine.py: rank 1 raises before
the collective, so rank 0 waits in its all-reduce for a peer that will never come. kbench must
report rank 1's exception and end rank 0 at once, not after the run deadline."""

import torch
import torch.distributed as dist
import torch.nn as nn

from kernelbench.distributed_collectives import get_rank, get_world_size


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if get_rank() == 1:
            raise RuntimeError("rank 1 gives up")
        total = x.clone()
        dist.all_reduce(total)
        return torch.relu(total / get_world_size() * self.weight + self.bias)
