"""Which inputs a problems check writes for the passed-through judgement
(python/kbench/worker/problem_check.py): an input is left out, and its pair reported, only where
some element lies farther from the output than twice the loosest tolerance; anything closer is
written and judged by the orchestrator's comparator, as before."""

import torch

from kbench.worker.problem_check import _far_apart, _passthrough_candidates

BOUND = {"atol": 1e-2, "rtol": 1e-2}


def test_a_relu_of_mixed_signs_is_told_apart_and_not_written():
    x = torch.tensor([-1.0, 2.0, -3.0, 4.0])
    written, refuted = _passthrough_candidates([x], [torch.relu(x)], BOUND)
    assert written == {} and refuted == [["output.0", "input.0"]]


def test_an_input_within_or_near_the_tolerance_is_written_for_the_comparator():
    x = torch.linspace(-5, 5, 1000)
    for out in (x.clone(), x + 1e-6, x * (1 + 1.5e-2)):  # the last: past 1x, inside 2x
        written, refuted = _passthrough_candidates([x], [out], BOUND)
        assert list(written) == ["input.0"] and refuted == []


def test_without_a_bound_every_alike_input_is_written():
    x = torch.tensor([-1.0, 2.0])
    written, refuted = _passthrough_candidates([x, 3, torch.zeros(5)], [torch.relu(x)], None)
    assert list(written) == ["input.0"] and refuted == []


def test_only_inputs_of_an_outputs_dtype_and_shape_are_considered():
    x, y = torch.ones(4), torch.ones(4, dtype=torch.float64)
    written, refuted = _passthrough_candidates([x, y], [torch.full((4,), 9.0)], BOUND)
    assert written == {} and refuted == [["output.0", "input.0"]]


def test_an_input_one_output_may_be_is_written_though_another_is_told_apart():
    x = torch.tensor([-1.0, 2.0])
    written, refuted = _passthrough_candidates([x], [torch.relu(x), x.clone()], BOUND)
    assert list(written) == ["input.0"] and refuted == [["output.0", "input.0"]]


def test_non_finite_values_count_as_the_comparator_counts_them():
    nan, inf = float("nan"), float("inf")
    assert not _far_apart(torch.tensor([nan, 1.0]), torch.tensor([nan, 1.0]), BOUND)
    assert not _far_apart(torch.tensor([inf, 1.0]), torch.tensor([inf, 1.0]), BOUND)
    assert _far_apart(torch.tensor([inf, 1.0]), torch.tensor([5.0, 1.0]), BOUND)
    assert _far_apart(torch.tensor([1.0, 1.0]), torch.tensor([-inf, 1.0]), BOUND)
    assert _far_apart(torch.tensor([1.0, 1.0]), torch.tensor([nan, 1.0]), BOUND)
    assert _far_apart(torch.tensor([inf, 1.0]), torch.tensor([-inf, 1.0]), BOUND)


def test_half_precision_and_integers_are_compared_wide_enough():
    x = torch.tensor([1000.0, 2000.0], dtype=torch.float16)
    assert not _far_apart(x + 1, x, BOUND)  # 0.1 % apart: inside any tolerance's reach
    assert _far_apart(torch.tensor([3, 4]), torch.tensor([3, 5]), {"atol": 0, "rtol": 0})
    assert not _far_apart(torch.tensor([3, 4]), torch.tensor([3, 4]), {"atol": 0, "rtol": 0})
