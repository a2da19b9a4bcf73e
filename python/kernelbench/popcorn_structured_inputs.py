"""PopcornBench's structured input builders: CSR graphs and mixture-of-experts routing, reached by
problems as `popcorn_pri.<name>` (popcorn_random_inputs re-exports every public one here).

Sizes come from popcorn_random_inputs' per-trial shape generator (trial_dim, the popcorn2 modes);
contents from torch's global RNG, drawn on the CPU and then moved, as that module's docstring
says."""

from __future__ import annotations

import torch

from .popcorn_random_inputs import _helper_dim, sample_multihead_dims, trial_dim


# --------------------------------------------------------------------------------------------
# CSR graphs
# --------------------------------------------------------------------------------------------


def _place(tensor: torch.Tensor, device) -> torch.Tensor:
    """Move a CPU-drawn tensor to `device` (None keeps it on the CPU, as PopcornBench does)."""
    return tensor if device is None else tensor.to(device)


def random_node_degrees(
    num_nodes: int,
    avg_degree: int,
    *,
    min_degree: int = 1,
    spread: int = 8,
    device=None,
) -> torch.Tensor:
    """Per-node degrees: int32 tensor (num_nodes,), each uniform in
    [max(min_degree, avg_degree - spread), avg_degree + spread] (torch RNG).
    """
    lo = max(min_degree, avg_degree - spread)
    hi = max(lo, avg_degree + spread)
    degrees = torch.randint(lo, hi + 1, (int(num_nodes),), dtype=torch.int32, device="cpu")
    return _place(degrees, device)


def csr_row_ptr_from_degrees(degree) -> torch.Tensor:
    """CSR row pointers from per-row degrees: int32 tensor (len(degree) + 1,), row_ptr[0] == 0,
    row_ptr[i + 1] - row_ptr[i] == degree[i], row_ptr[-1] == degree.sum(). Same device as `degree`.
    """
    degree = torch.as_tensor(degree)
    row_ptr = torch.zeros(degree.numel() + 1, dtype=torch.int32, device=degree.device)
    row_ptr[1:] = torch.cumsum(degree.reshape(-1), dim=0)
    return row_ptr


def random_csr_row_ptr(num_nodes: int, avg_degree: int, *, device=None) -> torch.Tensor:
    """Row pointers of a random CSR graph: int32 (num_nodes + 1,), non-decreasing from 0, with
    degrees as in random_node_degrees (between max(1, avg_degree - 8) and avg_degree + 8).
    """
    return _place(csr_row_ptr_from_degrees(random_node_degrees(num_nodes, avg_degree)), device)


def _random_csr(num_nodes: int, avg_degree: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(row_ptr, col_idx) of a random graph on the CPU; neighbours uniform, unsorted."""
    row_ptr = random_csr_row_ptr(num_nodes, avg_degree)
    num_edges = int(row_ptr[-1])
    col_idx = torch.randint(0, num_nodes, (num_edges,), dtype=torch.int32)
    return row_ptr, col_idx


def _randn(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float32)


def make_csr_graph(
    num_nodes_default: int,
    avg_degree_default: int,
    feat_dim_default: int,
    *,
    jitter_nodes: bool = True,
    jitter_feat: bool = True,
    mode: str | None = None,
    device=None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A random CSR graph with node features: (row_ptr, col_idx, node_feat).

    row_ptr   int32 (N + 1,): starts at 0, non-decreasing, ends at E; each row's degree is in
              [max(1, avg_degree - 8), avg_degree + 8]
    col_idx   int32 (E,): source node of each edge, in [0, N); uniform, so not sorted within a
              row and possibly repeated or self-looping
    node_feat float32 (N, F)
    N is num_nodes_default jittered (unless jitter_nodes=False); F is feat_dim_default jittered
    and aligned down to 8 (unless jitter_feat=False). With a popcorn2 `mode` the two sizes follow
    trial_dim (named "num_nodes" and "feat_dim"). The average degree is not jittered.
    """
    n = num_nodes_default
    if jitter_nodes:
        n = _helper_dim(num_nodes_default, "num_nodes", mode)
    row_ptr, col_idx = _random_csr(n, avg_degree_default)
    fd = feat_dim_default
    if jitter_feat:
        fd = _helper_dim(feat_dim_default, "feat_dim", mode, align=8)
    node_feat = _randn(n, fd)
    return tuple(_place(t, device) for t in (row_ptr, col_idx, node_feat))


def make_csr_graph_with_edge_weights(
    num_nodes_default: int,
    avg_degree_default: int,
    feat_dim_default: int,
    *,
    mode: str | None = None,
    device=None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """make_csr_graph plus one weight per edge: (row_ptr, col_idx, edge_weight, node_feat),
    edge_weight float32 (E,) standard normal.
    """
    row_ptr, col_idx, node_feat = make_csr_graph(
        num_nodes_default, avg_degree_default, feat_dim_default, mode=mode
    )
    edge_weight = _randn(col_idx.numel())
    return tuple(_place(t, device) for t in (row_ptr, col_idx, edge_weight, node_feat))


def make_csr_degree_normalized_graph(
    num_nodes_default: int,
    avg_degree_default: int,
    feat_dim_default: int,
    *,
    mode: str | None = None,
    device=None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """make_csr_graph plus node degrees for normalisation: (row_ptr, col_idx, node_feat, degrees).

    degrees float32 (N,): how many edges have the node as their source (its count in col_idx),
    plus one for a self-loop, so every entry is >= 1 and safe to divide by or take rsqrt of.
    """
    row_ptr, col_idx, node_feat = make_csr_graph(
        num_nodes_default, avg_degree_default, feat_dim_default, mode=mode
    )
    n = row_ptr.numel() - 1
    degrees = torch.bincount(col_idx.long(), minlength=n).to(torch.float32) + 1.0
    return tuple(_place(t, device) for t in (row_ptr, col_idx, node_feat, degrees))


def make_csr_multihead_spmm_graph(
    num_nodes_default: int,
    avg_degree_default: int,
    num_heads_default: int,
    head_dim_default: int,
    *,
    mode: str | None = None,
    device=None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A random CSR graph for multi-head SpMM: (row_ptr, col_idx, edge_weight, node_feat).

    row_ptr/col_idx as in make_csr_graph; edge_weight float32 (E, H); node_feat float32 (N, H, D).
    N follows the node jitter (trial_dim with a popcorn2 mode); (H, D) come from
    sample_multihead_dims(num_heads_default, head_dim_default), which modes do not affect.
    """
    n = _helper_dim(num_nodes_default, "num_nodes", mode)
    heads, head_dim = sample_multihead_dims(num_heads_default, head_dim_default)
    row_ptr, col_idx = _random_csr(n, avg_degree_default)
    edge_weight = _randn(col_idx.numel(), heads)
    node_feat = _randn(n, heads, head_dim)
    return tuple(_place(t, device) for t in (row_ptr, col_idx, edge_weight, node_feat))


def make_csr_scalar_edge_scores(
    num_nodes_default: int,
    avg_degree_default: int,
    *,
    mode: str | None = None,
    device=None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Row pointers and one score per edge, for per-row softmax / top-k: (row_ptr, edge_scores).

    row_ptr int32 (N + 1,) as in make_csr_graph (no column indices); edge_scores float32 (E,).
    """
    n = _helper_dim(num_nodes_default, "num_nodes", mode)
    row_ptr = random_csr_row_ptr(n, avg_degree_default)
    edge_scores = _randn(int(row_ptr[-1]))
    return _place(row_ptr, device), _place(edge_scores, device)


def make_csr_multihead_edge_scores(
    num_nodes_default: int,
    avg_degree_default: int,
    num_heads_default: int,
    *,
    mode: str | None = None,
    device=None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Row pointers and one score per edge and head: (row_ptr, edge_scores).

    row_ptr int32 (N + 1,); edge_scores float32 (E, H), H from
    sample_multihead_dims(num_heads_default, 32)[0].
    """
    n = _helper_dim(num_nodes_default, "num_nodes", mode)
    heads, _ = sample_multihead_dims(num_heads_default, 32)
    row_ptr = random_csr_row_ptr(n, avg_degree_default)
    edge_scores = _randn(int(row_ptr[-1]), heads)
    return _place(row_ptr, device), _place(edge_scores, device)


def make_csr_fused_attention_value_graph(
    num_nodes_default: int,
    avg_degree_default: int,
    feat_dim_default: int,
    *,
    mode: str | None = None,
    device=None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A graph for fused edge-softmax + value aggregation: (row_ptr, col_idx, edge_scores,
    node_value), with row_ptr/col_idx as in make_csr_graph, edge_scores float32 (E,) and
    node_value float32 (N, F), F as make_csr_graph's feature width.
    """
    n = _helper_dim(num_nodes_default, "num_nodes", mode)
    row_ptr, col_idx = _random_csr(n, avg_degree_default)
    edge_scores = _randn(col_idx.numel())
    fd = _helper_dim(feat_dim_default, "feat_dim", mode, align=8)
    node_value = _randn(n, fd)
    return tuple(_place(t, device) for t in (row_ptr, col_idx, edge_scores, node_value))


# --------------------------------------------------------------------------------------------
# Mixture-of-experts routing
# --------------------------------------------------------------------------------------------


def _moe_expert_count(num_experts_default: int, num_tokens: int, mode: str | None) -> int:
    """num_experts through trial_dim (which samples a popcorn2 mode if none is given), kept in
    [2, num_tokens] so that routing stays meaningful."""
    experts = trial_dim(num_experts_default, "num_experts", mode=mode, minimum=2)
    return max(2, min(experts, num_tokens))


def _slots_within_experts(expert_idx: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """Each token's position among the tokens routed to its expert, in token order."""
    order = torch.sort(expert_idx, stable=True).indices
    packed_row = torch.empty_like(order)
    packed_row[order] = torch.arange(order.numel())
    return (packed_row - offsets[expert_idx.long()]).to(torch.int32)


def moe_dispatch_inputs(
    num_tokens_default: int,
    hidden_dim_default: int,
    num_experts_default: int,
    *,
    mode: str | None = None,
    device=None,
) -> list:
    """Inputs for packing tokens into expert-major order:
    [token_hidden, expert_idx, slot_idx, expert_offsets].

    token_hidden   float32 (T, H)
    expert_idx     int32 (T,): each token's expert, uniform in [0, X)
    slot_idx       int32 (T,): the token's rank among its expert's tokens, in token order
    expert_offsets int32 (X + 1,): exclusive prefix sum of tokens per expert (0 ... T)
    so expert_offsets[expert_idx[t]] + slot_idx[t] is a permutation of range(T).
    T is num_tokens jittered and aligned down to 64, H hidden_dim jittered and aligned to 16
    (trial_dim with a popcorn2 mode); X is num_experts through trial_dim (minimum 2; under
    popcorn2 without a mode it samples one), clamped to [2, T].
    """
    tokens = _helper_dim(num_tokens_default, "num_tokens", mode, align=64)
    hidden = _helper_dim(hidden_dim_default, "hidden_dim", mode, align=16)
    experts = _moe_expert_count(num_experts_default, tokens, mode)

    token_hidden = _randn(tokens, hidden)
    expert_idx = torch.randint(0, experts, (tokens,), dtype=torch.int32)
    counts = torch.bincount(expert_idx.long(), minlength=experts)
    expert_offsets = csr_row_ptr_from_degrees(counts)
    slot_idx = _slots_within_experts(expert_idx, expert_offsets)
    return [_place(t, device) for t in (token_hidden, expert_idx, slot_idx, expert_offsets)]


def moe_combine_inputs(
    num_tokens_default: int,
    hidden_dim_default: int,
    fanout_default: int,
    *,
    mode: str | None = None,
    device=None,
) -> list:
    """Inputs for the weighted combine of expert outputs back into tokens:
    [expert_hidden, token_idx, gates, num_tokens].

    expert_hidden float32 (T*K, H): one row per expert output
    token_idx     int32 (T*K,): the token each row adds into, uniform in [0, T) (a token may get
                  any number of rows, including none)
    gates         float32 (T*K,): softmax over each consecutive group of K rows, so every group
                  is positive and sums to 1
    num_tokens    int T (a Python int, not a tensor)
    T and H are sized as in moe_dispatch_inputs; K is fanout_default through trial_dim
    (minimum 1; under popcorn2 without a mode it samples one).
    """
    tokens = _helper_dim(num_tokens_default, "num_tokens", mode, align=64)
    hidden = _helper_dim(hidden_dim_default, "hidden_dim", mode, align=16)
    fanout = trial_dim(fanout_default, "fanout", mode=mode, minimum=1)

    rows = tokens * fanout
    expert_hidden = _randn(rows, hidden)
    token_idx = torch.randint(0, tokens, (rows,), dtype=torch.int32)
    gates = torch.softmax(_randn(tokens, fanout), dim=-1).reshape(-1)
    return [_place(expert_hidden, device), _place(token_idx, device), _place(gates, device), tokens]
