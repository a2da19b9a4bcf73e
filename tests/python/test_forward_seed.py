"""The forward seed of the timed calls (docs/problems.md, "Stochastic problems"): each timed call
runs with torch's generator seeded by PopcornBench's rule over the call's own input seed, the
same in process R and process C, whatever the problem's get_inputs() drew before it."""

import types

import torch

from kbench.worker import runtime
from kbench.worker.measurement import TimingSession
from kbench.worker.native import kn


class _SeedRecorder(torch.nn.Module):
    """Records, at each call, the seed torch's CPU generator was last seeded with."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def forward(self, x):
        self.seen.append(torch.initial_seed())
        return x * 2


def _session(model):
    problem = types.SimpleNamespace(get_inputs=lambda: [torch.randn(8, 4)])
    return types.SimpleNamespace(
        problem=problem,
        variant="standard",
        device=torch.device("cpu"),
        dtype=torch.float32,
        problem_path="fixture problem",
        kept=(model, [torch.randn(8, 4)]),
    )


def test_forward_seed_is_popcornbenchs_rule():
    assert kn.forward_seed(41) == 42
    assert kn.forward_seed(2**32 - 1) == 0
    assert kn.forward_seed(2**64 - 1) == 0  # a timed call's seed is 64 bits wide
    assert kn.forward_seed(2**40 + 7) == 8


def test_every_timed_call_runs_under_its_own_seeds_forward_seed():
    model = _SeedRecorder()
    timing = TimingSession(_session(model), {})
    seeds = [2**63 + 5, 17, 2**32 - 1]  # the orchestrator's secret seeds: 64 bits
    answer = timing.block({"calls": len(seeds), "seeds": seeds, "warmup": 0})
    assert len(answer["host_us"]) == len(seeds)
    assert model.seen == [kn.forward_seed(s) for s in seeds]


def test_seed_forward_fixes_what_a_forward_draws():
    runtime.seed_forward(kn.forward_seed(123))
    first = torch.randn(5)
    torch.randn(3)  # whatever ran in between
    runtime.seed_forward(kn.forward_seed(123))
    assert torch.equal(torch.randn(5), first)
