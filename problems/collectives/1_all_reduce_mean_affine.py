"""All-reduce (data-parallel mean) followed by a per-feature affine map and ReLU.

Every rank holds x of shape (ROWS, DIM), its own data: the rows are drawn from a generator
seeded with the trial's seed and the rank. The output, the same on every rank, is
relu(mean over ranks of x * weight + bias). On one process (no launcher) the mean is x itself.
Runs under `kbench eval --world-size N` (default below); NCCL on GPUs, gloo on the CPU.
"""

import torch
import torch.distributed as dist
import torch.nn as nn

from kernelbench.distributed_collectives import (
    default_device,
    get_rank,
    get_world_size,
    is_distributed_run,
    maybe_init_process_group,
)

# `popcorn_pri` is injected into this module's namespace by the harness (not imported).

KBENCH_WORLD_SIZE = 2
ROWS = 2048
DIM = 1024


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim))
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        maybe_init_process_group()
        total = x.clone()
        if is_distributed_run():
            dist.all_reduce(total, op=dist.ReduceOp.SUM)
        return torch.relu(total / get_world_size() * self.weight + self.bias)


def get_inputs():
    device = default_device()
    rows = popcorn_pri.jitter_int(ROWS)  # noqa: F821 - the same on every rank (same seed)
    generator = torch.Generator(device=device)
    generator.manual_seed((torch.initial_seed() + 7919 * get_rank()) % 2**63)
    return [torch.randn(rows, DIM, device=device, generator=generator)]


def get_init_inputs():
    return [DIM]
