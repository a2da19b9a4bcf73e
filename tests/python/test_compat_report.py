"""The compatibility report's own logic (scripts/compat/): fault attribution, the candidates
manifest built from a suite's layout, and the popcorn_pri comparison's ability to see a
difference. The suites themselves are data and not in the repository."""

import sys
import types
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "compat"))

import candidates  # noqa: E402
import classify  # noqa: E402
import pri_compare  # noqa: E402

LOADED = {"loads": True, "input_bytes": 10, "weight_bytes": 0, "static": {}}


def finding(check, message, severity="error"):
    return {"check": check, "severity": severity, "message": message}


def test_missing_hub_module_is_a_need_naming_the_weights():
    probe = {"loads": False, "load_error": "No module named 'transformers'",
             "static": {"missing_modules": ["transformers"], "hf_models": ["gpt2"]}}
    state, fault, reason = classify.classify(probe, None, "", "cpu")
    assert (state, fault) == ("needs", "machine")
    assert "transformers" in reason and "gpt2" in reason


def test_weights_missing_on_an_offline_machine_are_a_need_naming_them():
    # The H200 has transformers but no network: from_pretrained finds no cached weights.
    probe = {"loads": False, "static": {"hf_models": ["gpt2"]},
             "load_error": "OSError: We couldn't connect to 'https://huggingface.co' to load the "
                           "files, and couldn't find them in the cached files."}
    state, fault, reason = classify.classify(probe, None, "", "cuda")
    assert (state, fault) == ("needs", "machine") and "gpt2" in reason


def test_missing_shim_name_is_kbench_at_fault():
    probe = {"loads": False, "load_error": "ImportError",
             "static": {"shim_missing": ["kernelbench.distributed_collectives.broadcast"]}}
    assert classify.classify(probe, None, "", "cpu")[1] == "kbench"


def test_reference_failure_is_the_problems_and_file_size_is_kbenchs():
    check = {"verdict": "fail", "findings": [finding("reference-runs", "RuntimeError: size mismatch")]}
    assert classify.classify(LOADED, check, "", "cpu")[:2] == ("fail", "problem")
    check = {"verdict": "fail", "findings": [finding("reference-runs", "SafetensorError: File too large")]}
    assert classify.classify(LOADED, check, "", "cpu")[:2] == ("fail", "kbench")


def test_nondeterminism_of_a_sampling_forward_is_laid_on_issue_24():
    src = "class Model:\n    def forward(self, x):\n        return x + torch.randn_like(x)\n"
    check = {"verdict": "fail", "findings": [finding("deterministic", "two calls disagree")]}
    state, fault, reason = classify.classify(LOADED, check, src, "cpu")
    assert fault == "kbench" and "issue 24" in reason
    plain = "class Model:\n    def forward(self, x):\n        return x.sum()\n"
    assert classify.classify(LOADED, check, plain, "cpu")[1] == "problem"


def test_unchecked_problem_is_owed_and_pass_keeps_warnings():
    assert classify.classify(LOADED, None, "", "cpu")[0] == "owed"
    check = {"verdict": "pass", "findings": [finding("not-launch-bound", "12 us", "warn")]}
    state, fault, reason = classify.classify(LOADED, check, "", "cuda")
    assert state == "pass" and "not-launch-bound" in reason


def test_manifest_pairs_examples_by_longest_prefix_and_lists_unit_kernels(tmp_path):
    prompts = tmp_path / "src" / "kernelbench" / "prompts"
    kernels = tmp_path / "src" / "kernelbench" / "unit_tests" / "test_kernels"
    prompts.mkdir(parents=True)
    kernels.mkdir(parents=True)
    for name in ("model_ex_add.py", "model_new_ex_add.py", "model_new_ex_add_triton.py",
                 "model_new_ex_orphan.py", "model_ex_2.py"):
        (prompts / name).write_text("x = 1\n")
    (prompts / "model_new_ex_2.py").write_text("<custom_kernel_name_1>_source = 1\n")
    (kernels / "zero_out_kernel.py").write_text("x = 1\n")
    doc = candidates.manifest(tmp_path)
    by_candidate = {Path(e["candidate"]).name: e for e in doc["entries"]}
    assert Path(by_candidate["model_new_ex_add_triton.py"]["problem"]).name == "model_ex_add.py"
    assert by_candidate["model_new_ex_add_triton.py"]["expect"] == "ok"
    assert "triton" in by_candidate["model_new_ex_add_triton.py"]["needs"]
    zero = by_candidate["zero_out_kernel.py"]
    assert zero["verdict"] == "not ok" and "expect" not in zero and "zeroes" in zero["why"]
    skipped = {Path(e["candidate"]).name: e["skip"] for e in doc["skipped"]}
    assert sorted(skipped) == ["model_new_ex_2.py", "model_new_ex_orphan.py"]
    assert "template" in skipped["model_new_ex_2.py"] and "<custom_kernel_name_1>" in skipped["model_new_ex_2.py"]


def test_comparison_sees_a_helper_that_draws_other_sizes():
    from kernelbench import popcorn_random_inputs as kb

    same = types.SimpleNamespace(random_node_degrees=lambda n, avg: torch.randint(
        max(1, avg - 8), avg + 9, (n,), dtype=torch.int32))
    row = pri_compare.compare_case(kb, same, "random_node_degrees", (100, 16), {})
    assert row["types_match"] and row["ranges_match"] and row["same_values_share"] == 1.0
    wider = types.SimpleNamespace(jitter_int=lambda n, **kw: int(torch.randint(n // 2, n + 1, ()).item()))
    saved = dict(kb._state)
    try:
        row = pri_compare.compare_case(kb, wider, "jitter_int", (1000,), {})
    finally:
        kb._state.update(saved)
    assert not row["ranges_match"] and "size ranges" in row["notes"][0]


def test_a_problem_defect_outweighs_the_missing_forward_seed():
    src = "class Model:\n    def forward(self, x):\n        return x + torch.randn_like(x)\n"
    check = {"verdict": "fail", "findings": [finding("reference-runs", "size mismatch"),
                                             finding("deterministic", "two calls disagree")]}
    assert classify.classify(LOADED, check, src, "cpu")[1] == "problem"


def test_a_check_with_no_scratch_room_even_alone_needs_a_larger_disk():
    # kbench's batch reruns a check that ran out of scratch room beside others alone
    # (tests/unit/test_problem_batch.cpp); what is left is the machine's.
    state, fault, reason = classify.classify({"loads": True, "static": {}}, {
        "verdict": "not checked", "message": "x: its filesystem has only 1 GiB free"}, "", "cuda")
    assert (state, fault) == ("needs", "machine")
    assert "TMPDIR" in reason
