"""All-gather of every rank's rows, then a row softmax of the scaled result.

Every rank holds x of shape (ROWS, DIM), its own data (seeded with the trial's seed and the
rank). The output, the same on every rank, is softmax(concat over ranks of x * scale, dim=-1)
of shape (WORLD * ROWS, DIM), rank 0's rows first. On one process the gather is x itself.
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
        self.scale = nn.Parameter(torch.rand(dim) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        maybe_init_process_group()
        if is_distributed_run():
            gathered = torch.empty(
                (get_world_size() * x.shape[0], x.shape[1]), dtype=x.dtype, device=x.device
            )
            dist.all_gather_into_tensor(gathered, x.contiguous())
        else:
            gathered = x
        return torch.softmax(gathered * self.scale, dim=-1)


def get_inputs():
    device = default_device()
    rows = popcorn_pri.jitter_int(ROWS)  # noqa: F821 - the same on every rank (same seed)
    generator = torch.Generator(device=device)
    generator.manual_seed((torch.initial_seed() + 7919 * get_rank()) % 2**63)
    return [torch.randn(rows, DIM, device=device, generator=generator)]


def get_init_inputs():
    return [DIM]
