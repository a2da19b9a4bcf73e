"""popcorn_pri (kbench's python/kernelbench/popcorn_random_inputs.py) against PopcornBench's own
popcorn_random_inputs.py, drawn on the same seeds.

PopcornBench seeds torch with the trial seed before get_inputs() and draws sizes and contents
from that one stream. kbench seeds torch the same way, but draws sizes from a generator of its
own (kbench_native.JitterRng, seeded by the trial seed), so sizes never shift the contents.
The comparison therefore checks, per helper: the same outputs' types and dtypes; the same size
ranges over the seeds; the same values where the sizes are fixed by the caller; and the
deterministic awkward-mode sizes name by name.
"""

import importlib.util
import sys
from pathlib import Path

import torch

SEEDS = range(200)
# Scalar helpers are cheap: more seeds, so that the rarer popcorn2 modes reach their range ends.
SCALAR_SEEDS = range(2000)
SCALAR_HELPERS = {"trial_int", "jitter_int", "sample_input_mode", "trial_dim", "sample_multihead_dims"}

# (helper, args, kwargs): every helper PopcornBench's problems call, with sizes from them.
CASES = [
    ("trial_int", (10, 20), {}),
    ("jitter_int", (1000,), {}),
    ("jitter_int", (1000,), {"align": 16}),
    ("jitter_int", (4096,), {"min_ratio": 0.9, "max_ratio": 1.1}),
    ("sample_input_mode", (), {}),
    ("trial_dim", (4096, "seq_len"), {}),
    ("trial_dim", (4096, "seq_len"), {"mode": "large_band"}),
    ("trial_dim", (4096, "seq_len"), {"mode": "wide"}),
    ("trial_dim", (256, "hidden_dim"), {"mode": "large_band", "align": 16}),
    ("sample_multihead_dims", (8, 32), {}),
    ("random_node_degrees", (1000, 16), {}),
    ("random_csr_row_ptr", (1000, 16), {}),
    ("make_csr_graph", (2048, 16, 64), {}),
    ("make_csr_graph", (2048, 16, 64), {"jitter_nodes": False, "jitter_feat": False}),
    ("make_csr_graph", (2048, 16, 64), {"mode": "awkward"}),
    ("make_csr_graph_with_edge_weights", (2048, 16, 64), {}),
    ("make_csr_degree_normalized_graph", (2048, 16, 64), {}),
    ("make_csr_multihead_spmm_graph", (2048, 16, 8, 32), {}),
    ("make_csr_scalar_edge_scores", (2048, 16), {}),
    ("make_csr_multihead_edge_scores", (2048, 16, 8), {}),
    ("make_csr_fused_attention_value_graph", (2048, 16, 64), {}),
    ("moe_dispatch_inputs", (512, 128, 8), {}),
    ("moe_combine_inputs", (512, 128, 2), {}),
]


def load_source_module(popcornbench: Path):
    """PopcornBench's module, loaded beside kbench's shim: its one `kernelbench.*` import
    (popcorn_scaling) is served from its own file for the load, then taken out again."""
    src = Path(popcornbench) / "src" / "kernelbench"

    def load(name, file):
        spec = importlib.util.spec_from_file_location(name, src / file)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    import kernelbench  # noqa: F401 - kbench's package, so the alias below nests under it

    scaling = load("popcornbench_popcorn_scaling", "popcorn_scaling.py")
    saved = sys.modules.get("kernelbench.popcorn_scaling")
    sys.modules["kernelbench.popcorn_scaling"] = scaling
    try:
        return load("popcornbench_popcorn_random_inputs", "popcorn_random_inputs.py"), scaling
    finally:
        if saved is None:
            del sys.modules["kernelbench.popcorn_scaling"]
        else:
            sys.modules["kernelbench.popcorn_scaling"] = saved


def _flat(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _signature(value):
    """Types and dtypes, without sizes."""
    return tuple(str(v.dtype) if isinstance(v, torch.Tensor) else type(v).__name__ for v in _flat(value))


def _sizes(value):
    """Each output's shape (tensors) or value (ints), as a tuple of numbers."""
    out = []
    for v in _flat(value):
        if isinstance(v, torch.Tensor):
            out.append(tuple(v.shape))
        elif isinstance(v, (int, float)):
            out.append((v,))
        else:
            out.append(())
    return out


def _same(a, b):
    for x, y in zip(_flat(a), _flat(b)):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype or not torch.equal(x, y):
                return False
        elif x != y:
            return False
    return len(_flat(a)) == len(_flat(b))


def _ranges(all_sizes):
    """Per output and dimension, (min, max) over the seeds; None where ranks differ."""
    ranges = []
    for column in zip(*all_sizes):
        if len({len(s) for s in column}) != 1 or isinstance(column[0][0] if column[0] else 0, str):
            ranges.append(None)
            continue
        ranges.append([(min(d), max(d)) for d in zip(*column)] if column[0] else [])
    return ranges


def _draw(fn, args, kwargs, seed, begin=None):
    if begin:
        begin(seed)
    torch.manual_seed(seed)
    return fn(*args, **kwargs)


def compare_case(kb, pb, name, args, kwargs, variant="popcorn2"):
    kb_fn, pb_fn = getattr(kb, name, None), getattr(pb, name, None)
    row = {"case": f"{name}{args}{' ' + str(kwargs) if kwargs else ''}", "notes": []}
    if kb_fn is None or pb_fn is None:
        row["notes"].append(f"missing in {'kbench' if kb_fn is None else 'PopcornBench'}")
        return row
    seeds = SCALAR_SEEDS if name in SCALAR_HELPERS else SEEDS
    row["seeds"] = len(seeds)
    kb_out = [_draw(kb_fn, args, kwargs, s, lambda s: kb._begin_trial(s, variant)) for s in seeds]
    pb_out = [_draw(pb_fn, args, kwargs, s) for s in seeds]
    kb_sig, pb_sig = {_signature(v) for v in kb_out}, {_signature(v) for v in pb_out}
    row["types_match"] = kb_sig == pb_sig
    if not row["types_match"]:
        row["notes"].append(f"types/dtypes differ: kbench {sorted(kb_sig)} vs PopcornBench {sorted(pb_sig)}")
    kb_r, pb_r = _ranges([_sizes(v) for v in kb_out]), _ranges([_sizes(v) for v in pb_out])
    row["kbench_ranges"], row["popcornbench_ranges"] = kb_r, pb_r
    row["ranges_match"] = _close(kb_r, pb_r)
    if not row["ranges_match"]:
        row["notes"].append(f"size ranges over {len(seeds)} seeds differ: kbench {kb_r} vs PopcornBench {pb_r}")
    row["same_values_share"] = sum(_same(a, b) for a, b in zip(kb_out, pb_out)) / len(seeds)
    if name == "sample_input_mode":
        row["kbench_modes"] = {m: sum(v == m for v in kb_out) for m in sorted(set(kb_out))}
        row["popcornbench_modes"] = {m: sum(v == m for v in pb_out) for m in sorted(set(pb_out))}
    return row


def _close(a, b, slack=0.03):
    """Same ranges up to sampling: each bound within 3 % of the other's span (or 1)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is None or y is None:
            if x is not y:
                return False
            continue
        if len(x) != len(y):
            return False
        for (lo1, hi1), (lo2, hi2) in zip(x, y):
            tol = max(1, slack * max(hi1 - lo1, hi2 - lo2))
            if abs(lo1 - lo2) > tol or abs(hi1 - hi2) > tol:
                return False
    return True


def compare_awkward(kb, scaling):
    """Awkward-mode sizes are deterministic: every name either side knows, at several values."""
    names = set(kb._AWKWARD_FIXED | kb._AWKWARD_SEQUENCE | kb._AWKWARD_BATCH | kb._AWKWARD_MATRIX
                | kb._AWKWARD_GRAPH | kb._AWKWARD_CHANNEL)
    names |= set(scaling._NEVER_SCALE | scaling._SEQ_NAMES | scaling._BATCH_NAMES
                 | scaling._MATRIX_NAMES | scaling._GRAPH_NAMES | scaling._CHANNEL_NAMES)
    names |= {"other_name", "_"}
    differ = []
    for name in sorted(names):
        for value in (1, 2, 7, 16, 31, 32, 33, 64, 100, 512, 513, 4096, 6143, 8191, 70000):
            for pair in (False, True):
                kb_v = kb._awkward_dim(name, value, pair)
                pb_v = scaling.transform_int(name, value, "awkward", pair_attention=pair)
                if kb_v != pb_v:
                    differ.append(f"{name}={value}{' pair' if pair else ''}: kbench {kb_v}, PopcornBench {pb_v}")
    return {"names": len(names), "differences": differ}


def compare(popcornbench: Path) -> dict:
    from kernelbench import popcorn_random_inputs as kb

    pb, scaling = load_source_module(popcornbench)
    saved = dict(kb._state)
    try:
        rows = [compare_case(kb, pb, *case) for case in CASES]
        awkward = compare_awkward(kb, scaling)
    finally:
        kb._state.update(saved)
    public = lambda m: {n for n in dir(m) if not n.startswith("_") and callable(getattr(m, n))
                        and getattr(getattr(m, n), "__module__", "").endswith("random_inputs")}
    return {"cases": rows, "awkward": awkward, "seeds": len(SEEDS),
            "only_in_popcornbench": sorted(public(pb) - set(dir(kb))),
            "only_in_kbench": sorted(n for n in public(kb) - set(dir(pb)))}


if __name__ == "__main__":
    import json

    print(json.dumps(compare(Path(sys.argv[1])), indent=1, default=str))
