"""PopcornBench's input API, injected into every problem's namespace as `popcorn_pri`.

Two sources of randomness, kept apart on purpose:

* Sizes and shape decisions (how many nodes, which popcorn2 shape mode, how many heads) come from
  a generator of this module's own, implemented in C++ (kbench_native.JitterRng) and seeded per
  trial by the worker through `_begin_trial`. Drawing a size therefore never moves torch's RNG.
* Tensor contents (random values, graph structure, expert routing) come from torch's global RNG,
  which the worker seeds with the trial's seed right before `get_inputs()`. Tensors are always
  drawn on the CPU and then moved, so their values do not depend on the evaluation device.

Both are seeded from the trial seed, so a trial's inputs are reproducible and differ between
trials: kernels must read sizes and row pointers from the tensors, not hard-code them.

Variants (kbench's --variant):
  standard  every size is its default: jitter_int(n) == n, trial_dim(c) == c, default head
            counts; contents are still random (seeded per trial)
  popcorn   sizes jittered within +-15 % (jitter_int); popcorn2 shape modes are ignored
  popcorn2  as popcorn, plus the per-trial shape modes (large_band / awkward / wide) that
            sample_input_mode() picks and trial_dim() and the helpers' `mode=` apply
"""

from __future__ import annotations

import os

import torch

VARIANTS = ("standard", "popcorn", "popcorn2")

# The popcorn2 shape modes, in the order sample_input_mode() lays out their probabilities.
MODES = ("large_band", "awkward", "wide")

_state = {"variant": "standard", "rng": None, "seed": None}


# --------------------------------------------------------------------------------------------
# Trial state
# --------------------------------------------------------------------------------------------


def _native():
    """kbench_native through the harness's private reference: the module is not importable by
    name once the worker sealed it (kbench/worker/native.py)."""
    from kbench.worker.native import kn

    return kn


def _begin_trial(seed: int, variant: str) -> None:
    """Called by the worker before each trial's get_init_inputs()/get_inputs()."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")
    kbench_native = _native()
    _state["variant"] = variant
    _state["seed"] = seed
    _state["rng"] = kbench_native.JitterRng(seed)


def _rng():
    rng = _state["rng"]
    if rng is None:
        raise RuntimeError(
            "popcorn_pri was used outside a kbench trial: shapes are drawn only inside kbench-worker"
        )
    return rng


def current_variant() -> str:
    """The variant of the trial in progress ("standard" before any trial)."""
    return _state["variant"]


def _sizes_fixed() -> bool:
    return _state["variant"] == "standard"


def _modes_active() -> bool:
    return _state["variant"] == "popcorn2"


# --------------------------------------------------------------------------------------------
# Scalar sizes
# --------------------------------------------------------------------------------------------


def trial_int(low: int, high: int) -> int:
    """A seeded integer drawn uniformly from [low, high], both ends included.

    The bounds may be given in either order. Under the standard variant it returns the smaller
    bound, so a standard run is reproducible without any draw.
    """
    low, high = sorted((int(low), int(high)))
    if _sizes_fixed():
        return low
    return int(_rng().uniform_int(low, high))


def _align_down(value: int, align: int) -> int:
    """Round down to a multiple of `align`, but never below `align` itself."""
    if align > 1:
        return max(align, (value // align) * align)
    return value


def jitter_int(
    n: int,
    rel: float = 0.15,
    min_value: int = 1,
    *,
    min_ratio: float | None = None,
    max_ratio: float | None = None,
    minimum: int | None = None,
    align: int = 1,
) -> int:
    """A seeded integer near `n`.

    Drawn uniformly from [max(minimum, floor(n*min_ratio)), max(lo, floor(n*max_ratio))], the
    ratios defaulting to 1-rel and 1+rel (so +-15 % by default), then rounded down to a multiple
    of `align` (never below `align`). `minimum` is PopcornBench's name for `min_value`; either
    may be given. Under the standard variant it returns `n` unchanged.
    """
    n = int(n)
    if _sizes_fixed():
        return n
    floor_min = int(minimum if minimum is not None else min_value)
    if min_ratio is None and max_ratio is None:
        # The symmetric case goes through the C++ bounds, shared with the orchestrator's tests.
        lo, hi = _native().jitter_bounds(n, float(rel), floor_min)
    else:
        lo_ratio = 1.0 - rel if min_ratio is None else min_ratio
        hi_ratio = 1.0 + rel if max_ratio is None else max_ratio
        lo = max(floor_min, int(n * lo_ratio))
        hi = max(lo, int(n * hi_ratio))
    value = int(_rng().uniform_int(int(lo), int(hi)))
    return _align_down(value, int(align))


# --------------------------------------------------------------------------------------------
# popcorn2 shape modes
# --------------------------------------------------------------------------------------------

# Defaults of PopcornBench's knobs; each can be overridden by the environment variable named.
_KNOBS = {
    "POPCORN2_P_LARGE_BAND": 0.60,
    "POPCORN2_P_AWKWARD": 0.30,
    "POPCORN2_P_WIDE": 0.10,
    "POPCORN2_JITTER_MIN": 0.90,
    "POPCORN2_JITTER_MAX": 1.10,
    "POPCORN2_JITTER_WIDE_MIN": 0.80,
    "POPCORN2_JITTER_WIDE_MAX": 1.20,
}


def _knob(name: str) -> float:
    """A knob's value from the environment, or its default when unset or not a number."""
    raw = os.environ.get(name)
    if raw is not None:
        try:
            return float(raw)
        except ValueError:
            pass
    return _KNOBS[name]


def sample_input_mode(
    *,
    p_large_band: float | None = None,
    p_awkward: float | None = None,
    p_wide: float | None = None,
) -> str:
    """Pick this trial's popcorn2 shape mode: "large_band", "awkward" or "wide".

    Under popcorn2 the mode is drawn with probabilities p_large_band / p_awkward / p_wide
    (normalised to sum to 1; defaults 0.6 / 0.3 / 0.1, or POPCORN2_P_LARGE_BAND,
    POPCORN2_P_AWKWARD, POPCORN2_P_WIDE). A non-positive total gives "large_band". Under the
    standard and popcorn variants it returns "large_band" without a draw: modes only matter
    under popcorn2.
    """
    if not _modes_active():
        return "large_band"
    weights = [
        p_large_band if p_large_band is not None else _knob("POPCORN2_P_LARGE_BAND"),
        p_awkward if p_awkward is not None else _knob("POPCORN2_P_AWKWARD"),
        p_wide if p_wide is not None else _knob("POPCORN2_P_WIDE"),
    ]
    total = sum(weights)
    if total <= 0:
        return "large_band"
    r = _rng().uniform01() * total
    for mode, weight in zip(MODES, weights):
        if r < weight:
            return mode
        r -= weight
    return MODES[-1]  # r landed on the upper edge through rounding


# Dimension names grouped by how the awkward mode treats them. Names not listed keep their value.
_AWKWARD_FIXED = frozenset(
    """kernel_size dilation num_heads heads n_heads topk k max_dilation_power num_layers
    num_blocks rank stride padding groups d_conv d_state expand pair_dim head_dim avg_degree
    feat_dim num_experts experts_per_token rope_theta vocab_size num_classes num_bins sample_size
    burn_in thinning warmup_steps num_steps horizon order degree window_size patch_size tile_size
    block_size bucket_size num_kv_heads num_attention_heads n_kv_heads""".split()
)
_AWKWARD_SEQUENCE = frozenset(
    "seq_len sequence_length max_seq_len max_len length time_steps num_tokens context_length "
    "S_MAX".split()
)
_AWKWARD_BATCH = frozenset("batch_size batch B bs".split())
_AWKWARD_MATRIX = frozenset("M N K".split())
_AWKWARD_GRAPH = frozenset("num_nodes num_edges num_vertices".split())
_AWKWARD_CHANNEL = frozenset("in_channels out_channels channels hidden_dim d_model dim".split())


def _next_odd(value: int) -> int:
    """The smallest odd number above `value`."""
    return value + 1 if value % 2 == 0 else value + 2


def _awkward_dim(name: str, value: int, pair_attention: bool) -> int:
    """The awkward-mode size for a dimension: nudged off powers of two, by the dimension's name.

    Sequences, batches and matmul dims go to the next odd number; graph sizes to value+1 (even)
    or value+3 (odd); channel-like dims of at least 32 to value+8 (multiples of 16) or value+7.
    Each kind is capped (pair-attention sequences 65, sequences 65536, batches 64, graphs 6144,
    matmul dims 8192, channels 512). Names that must match weights (heads, kernel sizes, experts,
    feature dims, ...) and values below 2 are left alone.
    """
    if name in _AWKWARD_FIXED or value < 2:
        return value
    if name in _AWKWARD_SEQUENCE:
        return min(_next_odd(value), 65 if pair_attention else 65536)
    if name in _AWKWARD_BATCH:
        return min(_next_odd(value), 64)
    if name in _AWKWARD_MATRIX:
        return min(_next_odd(value), 8192)
    if name in _AWKWARD_GRAPH:
        return min(value + (1 if value % 2 == 0 else 3), 6144)
    if name in _AWKWARD_CHANNEL and value >= 32:
        return min(value + (8 if value % 16 == 0 else 7), 512)
    return value


def trial_dim(
    center: int,
    name: str = "",
    *,
    mode: str | None = None,
    min_ratio: float | None = None,
    max_ratio: float | None = None,
    minimum: int = 1,
    align: int = 1,
    pair_attention: bool = False,
) -> int:
    """A per-trial dimension around `center`, shaped by the popcorn2 mode.

    Under popcorn2 (`mode` defaults to a fresh sample_input_mode() draw; pass the trial's mode
    to keep a problem's dimensions consistent):
      large_band  jitter_int(center) with ratios min_ratio/max_ratio (defaults 0.9/1.1, or
                  POPCORN2_JITTER_MIN / POPCORN2_JITTER_MAX), `minimum` and `align`
      wide        the same with ratios POPCORN2_JITTER_WIDE_MIN/MAX (defaults 0.8/1.2);
                  min_ratio/max_ratio do not apply
      awkward     a deterministic awkward size chosen by `name` (see _awkward_dim; the
                  sequence cap is tighter with pair_attention); `minimum` and `align` do
                  not apply, so the size can be odd on purpose
    Under popcorn: jitter_int(center, minimum=minimum, align=align), whatever the mode.
    Under standard: `center`.
    """
    center = int(center)
    if _sizes_fixed():
        return center
    if not _modes_active():
        return jitter_int(center, minimum=minimum, align=align)
    if mode is None:
        mode = sample_input_mode()
    if mode == "awkward":
        return _awkward_dim(name or "_", center, pair_attention)
    if mode == "wide":
        lo, hi = _knob("POPCORN2_JITTER_WIDE_MIN"), _knob("POPCORN2_JITTER_WIDE_MAX")
    elif mode == "large_band":
        lo = min_ratio if min_ratio is not None else _knob("POPCORN2_JITTER_MIN")
        hi = max_ratio if max_ratio is not None else _knob("POPCORN2_JITTER_MAX")
    else:
        raise ValueError(f"unknown popcorn2 mode {mode!r}; expected one of {', '.join(MODES)}")
    return jitter_int(center, min_ratio=lo, max_ratio=hi, minimum=minimum, align=align)


def _helper_dim(center: int, name: str, mode: str | None, align: int = 1) -> int:
    """How the graph/MoE helpers size a dimension: plain jitter unless a popcorn2 mode is given."""
    if mode is None:
        return jitter_int(center, align=align)
    return trial_dim(center, name, mode=mode, align=align)


def sample_multihead_dims(
    num_heads_default: int,
    head_dim_default: int,
    *,
    head_choices: tuple[int, ...] = (4, 8, 16),
    dim_choices: tuple[int, ...] = (16, 32, 64),
) -> tuple[int, int]:
    """A (num_heads, head_dim) pair for this trial, from standard values near the defaults.

    num_heads is drawn uniformly from the head_choices within 8 of num_heads_default, head_dim
    from the dim_choices within 32 of head_dim_default (all choices when none is that close).
    Under the standard variant it returns the defaults. popcorn2 modes do not apply.
    """
    if _sizes_fixed():
        return int(num_heads_default), int(head_dim_default)
    heads = _pick(_near(head_choices, num_heads_default, 8))
    dims = _pick(_near(dim_choices, head_dim_default, 32))
    return heads, dims


def _near(choices, target: int, distance: int) -> list[int]:
    close = [c for c in choices if abs(c - target) <= distance]
    return close or list(choices)


def _pick(choices: list[int]) -> int:
    return int(choices[trial_int(0, len(choices) - 1)])


# The structured builders live in their own module; problems reach them through this one.
from .popcorn_structured_inputs import (  # noqa: E402,F401 - after the names it imports
    csr_row_ptr_from_degrees,
    make_csr_degree_normalized_graph,
    make_csr_fused_attention_value_graph,
    make_csr_graph,
    make_csr_graph_with_edge_weights,
    make_csr_multihead_edge_scores,
    make_csr_multihead_spmm_graph,
    make_csr_scalar_edge_scores,
    moe_combine_inputs,
    moe_dispatch_inputs,
    random_csr_row_ptr,
    random_node_degrees,
)
