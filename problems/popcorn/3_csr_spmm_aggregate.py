"""CSR sparse-dense aggregation (GNN-style SpMM): out[i] = sum_{e in row i} values[e] * features[col_idx[e]].

Inputs: row_ptr (int64, num_nodes + 1), col_idx (int64, E), values (float32, E) and features
(float32, num_nodes x F). The graph is random with a jittered node count and per-row degrees
(some rows are empty, whose output rows are zero); column indices are sorted within each row.
"""

import torch
import torch.nn as nn

from kernelbench.distributed_collectives import default_device

# `popcorn_pri` is injected into this module's namespace by the harness (not imported).

NUM_NODES = 32768
AVG_DEGREE = 16
FEATURES = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(
        self,
        row_ptr: torch.Tensor,
        col_idx: torch.Tensor,
        values: torch.Tensor,
        features: torch.Tensor,
    ) -> torch.Tensor:
        num_nodes = row_ptr.shape[0] - 1
        degrees = row_ptr[1:] - row_ptr[:-1]
        rows = torch.repeat_interleave(
            torch.arange(num_nodes, device=features.device), degrees, output_size=col_idx.shape[0]
        )
        out = torch.zeros(num_nodes, features.shape[1], device=features.device, dtype=features.dtype)
        return out.index_add_(0, rows, features[col_idx] * values.unsqueeze(1))


def get_inputs():
    device = default_device()
    num_nodes = popcorn_pri.jitter_int(NUM_NODES)  # noqa: F821
    avg_degree = popcorn_pri.jitter_int(AVG_DEGREE)  # noqa: F821
    # Degrees uniform in [0, 2 * avg_degree]: mean avg_degree, some rows empty.
    degrees = torch.randint(0, 2 * avg_degree + 1, (num_nodes,), device=device)
    row_ptr = torch.zeros(num_nodes + 1, dtype=torch.int64, device=device)
    row_ptr[1:] = torch.cumsum(degrees, dim=0)
    num_edges = int(row_ptr[-1].item())
    rows = torch.repeat_interleave(torch.arange(num_nodes, device=device), degrees)
    cols = torch.randint(0, num_nodes, (num_edges,), device=device)
    # Sort the column indices within each row (canonical CSR).
    keys, _ = torch.sort(rows * num_nodes + cols)
    col_idx = (keys % num_nodes).to(torch.int64)
    values = torch.rand(num_edges, device=device)
    features = torch.randn(num_nodes, FEATURES, device=device)
    return [row_ptr, col_idx, values, features]


def get_init_inputs():
    return []
