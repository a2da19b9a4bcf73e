"""The compatibility report (issue 16, items 3-5): probes, checks, KernelBench's own candidates,
popcorn_pri against PopcornBench's source, and docs/compatibility.md. Run through
scripts/compatibility-report.sh; every step resumes from what OUT already holds."""

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# The build folder: build/ here, build-gpu/ where scripts/setup.sh ran with KBENCH_BUILD=build-gpu.
BUILD = ROOT / os.environ.get("KBENCH_BUILD", "build")


def parse(argv):
    ap = argparse.ArgumentParser(prog="compatibility-report.sh", description=__doc__)
    ap.add_argument("kernelbench", type=Path, help="root of a ScalingIntelligence/KernelBench checkout")
    ap.add_argument("popcornbench", type=Path, help="root of an arjun-banerjee/POPCORNBENCH-clean checkout")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--gpu", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1, help="checks at a time")
    ap.add_argument("--large-jobs", type=int, default=2,
                    help="checks at a time of problems whose trial-0 inputs and weights pass 1 GiB")
    ap.add_argument("--budget", type=float, default=3600, help="seconds for the checks step")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--run-timeout", type=int, default=300, help="per check, seconds")
    ap.add_argument("--max-bytes", type=float, default=None,
                    help="skip checks of problems whose trial-0 inputs+weights exceed this "
                         "(default: 64 MiB on cpu, no limit on cuda)")
    ap.add_argument("--out", type=Path, default=BUILD / "compat")
    ap.add_argument("--kbench", default=str(BUILD / "kbench"))
    ap.add_argument("--report", type=Path, default=ROOT / "docs" / "compatibility.md")
    ap.add_argument("--report-only", action="store_true",
                    help="run nothing: write the report from what --out holds (a GPU run's results "
                         "brought back here); the popcorn_pri comparison still runs")
    ap.add_argument("--skip", action="append", default=[],
                    choices=("probe", "checks", "candidates", "pri"), help="leave a step out")
    args = ap.parse_args(argv)
    if args.report_only:
        args.skip += ["probe", "checks"]
    if args.max_bytes is None:
        args.max_bytes = 64 * 2**20 if args.device == "cpu" else 0
    return args


def main(argv=None) -> int:
    args = parse(argv)
    os.environ.setdefault("KBENCH_DEVICE", "cpu")
    for path in (ROOT / "python", BUILD / "python", HERE):
        sys.path.insert(0, str(path))
    import candidates
    import pri_compare
    import probe
    import report
    import run_checks
    import suites

    args.out.mkdir(parents=True, exist_ok=True)
    problems = suites.kernelbench_problems(args.kernelbench) + suites.popcornbench_problems(args.popcornbench)
    probes = probe.probe_all(problems, args.out / "probe.jsonl") if "probe" not in args.skip else \
        probe.probe_all([], args.out / "probe.jsonl")
    if "checks" not in args.skip:
        run_checks.run_checks(args.kbench, problems, probes, args.out, args)
    cand = None
    if "candidates" not in args.skip:
        cand = candidates.run(args.kbench, args.kernelbench, args.out, args.device,
                              evaluate=not args.report_only)
    pri = pri_compare.compare(args.popcornbench) if "pri" not in args.skip else None
    checks = {p.key: run_checks.load_check(args.out, p, args.device) for p in problems}
    report.write(args.report, problems, probes, checks, cand, pri, args)
    print(f"wrote {args.report}", file=sys.stderr)
    if args.device == "cpu":
        import gpu_command

        print("\nThe GPU run, for the lead:\n\n" + gpu_command.text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
