"""Reduce-scatter (sum) of every rank's gradient-like block, then tanh(mean + bias).

Every rank holds x of shape (WORLD * ROWS, DIM), its own data (seeded with the trial's seed and
the rank). Rank r's output is tanh(sum over ranks of x[r*ROWS:(r+1)*ROWS] / WORLD + bias), shape
(ROWS, DIM): each rank gets a different shard. On one process the shard is x itself.
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
ROWS = 1024
DIM = 1024


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        maybe_init_process_group()
        world = get_world_size()
        if is_distributed_run():
            shard = torch.empty((x.shape[0] // world, x.shape[1]), dtype=x.dtype, device=x.device)
            dist.reduce_scatter_tensor(shard, x.contiguous(), op=dist.ReduceOp.SUM)
        else:
            shard = x
        return torch.tanh(shard / world + self.bias)


def get_inputs():
    device = default_device()
    rows = popcorn_pri.jitter_int(ROWS)  # noqa: F821 - the same on every rank (same seed)
    generator = torch.Generator(device=device)
    generator.manual_seed((torch.initial_seed() + 7919 * get_rank()) % 2**63)
    return [torch.randn(get_world_size() * rows, DIM, device=device, generator=generator)]


def get_init_inputs():
    return [DIM]
