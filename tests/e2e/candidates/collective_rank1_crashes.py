"""Test candidate for problems/collectives/1_all_reduce_mean_affine.py: rank 1's process dies
of SIGSEGV in forward (as a faulting native kernel would); rank 0 waits in its all-reduce."""

import os
import signal

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
            os.kill(os.getpid(), signal.SIGSEGV)
        total = x.clone()
        dist.all_reduce(total)
        return torch.relu(total / get_world_size() * self.weight + self.bias)
