"""PopcornBench's input API, injected into every problem's namespace as `popcorn_pri`.

Shapes drawn here are seeded per trial by the worker (`_begin_trial`), from an RNG of their own
(implemented in C++, kbench_native.JitterRng, shared with the orchestrator's unit tests), so
drawing a shape never moves torch's RNG, which the problem's `get_inputs` uses for data.

Variants:
  standard  every helper returns its default size (jitter_int(n) == n)
  popcorn   sizes jittered within +-15 % (jitter_int)
"""

VARIANTS = ("standard", "popcorn")

_state = {"variant": "standard", "rng": None, "seed": None}


def _begin_trial(seed: int, variant: str) -> None:
    """Called by the worker before each trial's get_init_inputs()/get_inputs()."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")
    import kbench_native

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
    return _state["variant"]


def jitter_int(n: int, rel: float = 0.15, min_value: int = 1) -> int:
    """A seeded integer in [floor(n*(1-rel)), floor(n*(1+rel))] (never below min_value).

    Under the standard variant it returns n unchanged.
    """
    n = int(n)
    if _state["variant"] == "standard":
        return n
    import kbench_native

    lo, hi = kbench_native.jitter_bounds(n, float(rel), int(min_value))
    return int(_rng().uniform_int(lo, hi))
