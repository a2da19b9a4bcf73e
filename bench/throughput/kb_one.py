"""One step of KernelBench's own flow, in a fresh process as its scripts run it:
`build` precompiles a candidate's extensions (`kernelbench.eval.build_compile_cache`, what
`eval_from_generations` runs in parallel on the CPU first); `eval` is
`eval_kernel_against_ref` with 5 correctness trials and 100 timed trials. Prints one JSON line.

Usage: python3 kb_one.py build|eval REFERENCE CANDIDATE BUILD_DIR
with KernelBench's src/ and bench/throughput/kb_stubs on sys.path (run.py sets PYTHONPATH)."""

import json
import sys
import time
import traceback

start = time.perf_counter()
step, reference, candidate, build_dir = sys.argv[1:5]
record = {"step": step}
try:
    from kernelbench import eval as kb_eval

    cand_src = open(candidate).read()
    if step == "build":
        ok, _stdout, error = kb_eval.build_compile_cache(cand_src, verbose=False, build_dir=build_dir)
        record.update(compiled=bool(ok), error=str(error or "")[:500])
    else:
        result = kb_eval.eval_kernel_against_ref(
            open(reference).read(), cand_src, seed_num=42, num_correct_trials=5,
            num_perf_trials=100, measure_performance=True, build_dir=build_dir, device=0)
        if result is None:  # KernelBench returns None when the eval "should be retried" (a lock)
            record.update(compiled=False, correctness=False, error="eval returned None")
        else:
            record.update(compiled=bool(result.compiled), correctness=bool(result.correctness),
                          runtime_us=result.runtime, ref_runtime_us=getattr(result, "ref_runtime", -1.0),
                          error=str(result.metadata)[:500] if not result.correctness else "")
except Exception as exc:  # the flow's own failure (a crash of the candidate kills the process)
    record.update(error=f"{type(exc).__name__}: {exc}"[:500], traceback=traceback.format_exc()[-800:])
record["wall_s"] = time.perf_counter() - start
print(json.dumps(record), flush=True)
