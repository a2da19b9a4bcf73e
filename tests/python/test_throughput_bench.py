"""bench/throughput's batch and figures (the flows themselves need a GPU and KernelBench)."""

import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "throughput"))

from batch import FRESH, write_batch  # noqa: E402
from run import markdown, summarize  # noqa: E402


def test_the_batch_is_sixty_candidates_over_twenty_problems_of_every_kind(tmp_path):
    batch = write_batch(ROOT, tmp_path)
    assert len(batch) >= 60
    assert len({e["problem"] for e in batch}) >= 20
    assert Counter(e["kind"] for e in batch) == {k: len(batch) // 3 for k in ("ok", "wrong", "crash")}
    assert sum(e["fresh"] for e in batch) == FRESH
    for entry in batch:
        tree = ast.parse(Path(entry["candidate"]).read_text())
        classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        assert {"Model", "ModelNew"} <= classes, entry["candidate"]
    # Shuffled: the first third already mixes the kinds, so a budget-cut prefix is a mixed batch.
    assert len({e["kind"] for e in batch[: len(batch) // 3]}) == 3


def test_each_kind_gets_its_own_kernel_body(tmp_path):
    batch = write_batch(ROOT, tmp_path)
    text = {e["kind"]: Path(e["candidate"]).read_text() for e in batch}
    assert "out[i] = in[i];" in text["ok"]
    assert "i < zero_below ? 0" in text["wrong"]
    assert "0x10" in text["crash"]


def test_the_figures_come_from_the_window_and_the_records():
    flow = {"start": 100.0, "end": 136.0, "finished_batch": False,
            "records": [{"kind": "ok", "outcome": "ok", "wall_s": 3.0, "cached_build": True, "at": 20.0},
                        {"kind": "wrong", "outcome": "incorrect", "wall_s": 5.0, "cached_build": True, "at": 30.0},
                        {"kind": "crash", "outcome": "crashed", "wall_s": 4.0, "cached_build": False, "at": 36.0}]}
    s = summarize("kbench", flow, 0.5)
    assert s["evals_per_hour"] == 300.0  # 3 in 36 s
    assert s["gpu_idle_s_per_eval"] == 6.0  # 18 idle seconds over 3
    assert s["median_eval_wall_s"] == 4.0 and s["median_warm_ok_wall_s"] == 3.0
    assert s["outcomes"]["crash"] == {"crashed": 1}
    assert s["evals_in_progress"] == 12.0 / 36.0 and s["first_result_s"] == 20.0
    assert "| 0.3 | 20 s |" in markdown([s], 66, 22)
    other = dict(s, flow="kernelbench", evals_per_hour=150.0)
    assert "2.00x" in markdown([s, other], 66, 22)


def test_the_breakdown_lists_each_worker_with_its_start_and_requests(tmp_path):
    from breakdown import describe

    result = {"problem": {"path": "/p/1_relu.py"}, "candidate": {"path": "/c/relu.cu"},
              "status": "ok", "wall_s": 3.5, "compile": {"cached": True}, "timing": {"wall_s": 1.25},
              "phases": [{"phase": "candidate", "started_at_s": 0.5, "wall_s": 3.0,
                          "started": "forked",
                          "requests": [{"op": "candidate", "count": 6, "first_at_s": 0.25,
                                        "seconds": 1.5},
                                       {"op": "time", "count": 4, "first_at_s": 2.0,
                                        "seconds": 0.75}]}]}
    lines = describe(result)
    assert lines[0] == "1_relu.py x relu.cu: ok, wall 3.50 s, build cached, measure 1.25 s"
    assert lines[1] == ("  candidate    at   0.50 s, lived   3.00 s (forked), answering 2.25 s: "
                        "candidate x6 @0.25 1.50 s, time x4 @2.00 0.75 s")


def _fake_kernelbench(root: Path) -> Path:
    """A stand-in for KernelBench's src/kernelbench: builds leave a mark in their directory and
    take 0.3 s; an evaluation is correct where its build left a mark."""
    package = root / "src" / "kernelbench"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "eval.py").write_text(
        "import os, time, types\n"
        "def build_compile_cache(src, verbose=False, build_dir=None):\n"
        "    os.makedirs(build_dir, exist_ok=True)\n"
        "    time.sleep(0.3)\n"
        "    open(os.path.join(build_dir, 'built'), 'a').write('x')\n"
        "    return True, '', None\n"
        "def eval_kernel_against_ref(ref, src, build_dir=None, **kwargs):\n"
        "    ok = os.path.exists(os.path.join(build_dir, 'built'))\n"
        "    return types.SimpleNamespace(compiled=ok, correctness=ok, runtime=1.0, metadata={})\n")
    return root


def test_kernelbench_flow_evaluates_against_an_earlier_runs_precompile(tmp_path):
    from flows import run_kernelbench

    kernelbench = _fake_kernelbench(tmp_path / "kb")
    batch = write_batch(ROOT, tmp_path / "batch")[:3]
    out = tmp_path / "out"
    first = run_kernelbench(kernelbench, sys.executable, None, batch, out, 600, 3, precompile_only=True)
    assert first["records"] == [] and first["builds"] == 3 and first["builds_failed"] == 0
    assert first["build_wall_s"] >= 0.3

    second = run_kernelbench(kernelbench, sys.executable, None, batch, out, 600, 3)
    assert second["precompile_from_earlier_run"] and second["finished_batch"]
    assert [r["outcome"] for r in second["records"]] == ["correct"] * 3
    # Built once, by the first run; the second's window starts with the recorded precompile.
    assert all((out / "kb-builds" / e["source_sha"] / "built").read_text() == "x" for e in batch)
    assert second["build_wall_s"] == first["build_wall_s"]
    assert second["records"][0]["at"] > second["build_wall_s"]
    assert "(an earlier run)" in markdown([summarize("kernelbench", second, None)], 3, 3)

    # A batch with a source the record lacks is precompiled again.
    third = run_kernelbench(kernelbench, sys.executable, None, write_batch(ROOT, tmp_path / "b2")[:4],
                            out, 600, 3)
    assert not third["precompile_from_earlier_run"]
