"""All-to-all exchange of equal row blocks (expert-parallel dispatch), then a per-feature scale.

Every rank holds x of shape (WORLD * ROWS, DIM), its own data (seeded with the trial's seed and
the rank); block j of rank r's rows goes to rank j. Rank r's output stacks the blocks it
received, rank 0's first, each multiplied by `scale` per feature. On one process it is
x * scale.
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
        self.scale = nn.Parameter(torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        maybe_init_process_group()
        if is_distributed_run():
            exchanged = torch.empty_like(x)
            dist.all_to_all_single(exchanged, x.contiguous())
        else:
            exchanged = x
        return exchanged * self.scale


def get_inputs():
    device = default_device()
    rows = popcorn_pri.jitter_int(ROWS)  # noqa: F821 - the same on every rank (same seed)
    generator = torch.Generator(device=device)
    generator.manual_seed((torch.initial_seed() + 7919 * get_rank()) % 2**63)
    return [torch.randn(get_world_size() * rows, DIM, device=device, generator=generator)]


def get_init_inputs():
    return [DIM]
