"""Test candidate for problems/collectives/1_all_reduce_mean_affine.py: right on rank 0, off by
one on the last rank. Comparing rank 0's outputs alone would pass it."""

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
        total = x.clone()
        dist.all_reduce(total)
        out = torch.relu(total / get_world_size() * self.weight + self.bias)
        return out + 1.0 if get_rank() == get_world_size() - 1 else out
