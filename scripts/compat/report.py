"""Writes docs/compatibility.md from the probe, the checks, the candidates and the popcorn_pri
comparison."""

import collections
import datetime
from pathlib import Path

import classify
import gpu_command


def _cell(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _runs(check) -> str:
    if check is None:
        return "-"
    if check.get("verdict") == "not checked":
        return "not run"
    bad = [f for f in check.get("findings", []) if f["check"] == "reference-runs" and f["severity"] == "error"]
    trials = check.get("trials", "?")
    # `problems check` lists its trials (index, seed, shapes, whether each ran): count them.
    count = len(trials) if isinstance(trials, list) else trials
    return f"no ({len(bad)} finding)" if bad else f"yes ({count} trials)"


def problem_rows(problems, probes, checks, device):
    rows = []
    for p in problems:
        probe = probes.get(p.key, {})
        check = checks.get(p.key)
        source = p.path.read_text(errors="replace")
        state, fault, reason = classify.classify(probe, check, source, device)
        loads = {True: "yes", False: "no", None: "hung"}.get(probe.get("loads"), "?")
        size = classify._mib(probe) if probe.get("loads") else "-"
        verdict = check.get("verdict") if check else "-"
        rows.append((p, loads, size, _runs(check), verdict, state, fault, reason))
    return rows


def _summary(rows):
    by = collections.Counter((r[0].suite, r[5], r[6]) for r in rows)
    suites = sorted({r[0].suite for r in rows})
    out = ["| suite | problems | load | pass | fail: problem | fail: kbench | needs (machine) | owed (GPU run) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for s in suites + ["all"]:
        mine = [r for r in rows if s == "all" or r[0].suite == s]
        c = collections.Counter((r[5], r[6]) for r in mine)
        out.append(f"| {s} | {len(mine)} | {sum(r[1] == 'yes' for r in mine)} | {c[('pass', '-')]} | "
                   f"{c[('fail', 'problem')]} | {c[('fail', 'kbench')]} | "
                   f"{c[('needs', 'machine')] + c[('fail', 'machine')]} | {c[('owed', '-')]} |")
    del by
    return out


def _pri_section(pri):
    if pri is None:
        return ["Not run in this report (`--skip pri`)."]
    out = [f"Drawn on the same seeds ({pri['seeds']} per tensor helper, more for the scalar ones), "
           "kbench under `--variant popcorn2`, PopcornBench's module loaded from the suite path "
           "(`scripts/compat/pri_compare.py`).", "",
           "| call | types, dtypes | size ranges | same values, same seed | notes |", "| --- | --- | --- | --- | --- |"]
    for r in pri["cases"]:
        out.append(f"| `{_cell(r['case'], 120)}` | {'same' if r.get('types_match') else 'DIFFER'} | "
                   f"{'same' if r.get('ranges_match') else 'DIFFER'} | {r.get('same_values_share', 0):.0%} | "
                   f"{_cell('; '.join(r['notes']) or _modes(r), 200)} |")
    aw = pri["awkward"]
    out += ["", f"Awkward-mode sizes (deterministic), {aw['names']} dimension names x 15 values x pair "
            f"attention on/off: {len(aw['differences'])} differences."
            + ("" if not aw["differences"] else " " + _cell("; ".join(aw["differences"][:20]), 1500))]
    if pri["only_in_popcornbench"]:
        out.append(f"\nHelpers PopcornBench has and kbench lacks: {', '.join(pri['only_in_popcornbench'])}.")
    return out


def _modes(r):
    if "kbench_modes" in r:
        return f"modes kbench {r['kbench_modes']}, PopcornBench {r['popcornbench_modes']}"
    return ""


DIFFERENCES = """The differences that remain, all by design:

- **Sizes come from a different stream.** PopcornBench draws sizes (`jitter_int`, `trial_dim`,
  `sample_input_mode`, head counts) from torch's global RNG, so a size draw moves every tensor
  drawn after it. kbench draws them from its own generator (`kbench_native.JitterRng`, seeded by
  the trial seed), so on the same seed the sizes differ and, where a size was drawn first, so do
  the values (the "same values" column: 100 % only where the caller fixes every size, or the
  awkward mode makes it deterministic). The ranges and the dtypes are the same, which is what
  grading needs: a kernel sees the same family of shapes.
- **kbench has a `standard` variant** (every size its default; `trial_int` gives its lower
  bound). PopcornBench has none: its helpers always jitter.
- **Under kbench's `popcorn` variant the popcorn2 shape modes are off** (`sample_input_mode()`
  returns `large_band` without a draw, `trial_dim` is plain ±15 % jitter). PopcornBench's
  `popcorn` folder never calls them (none of its files uses `trial_dim` or
  `sample_input_mode`), so this changes no problem of the `popcorn` folder.
- **kbench's helpers take a `device=` keyword** (tensors still drawn on the CPU, then moved);
  PopcornBench's return CPU tensors only. `current_variant()` is kbench's alone."""


def write(path: Path, problems, probes, checks, cand, pri, args):
    rows = problem_rows(problems, probes, checks, args.device)
    device = args.device
    owed = sum(r[5] == "owed" for r in rows)
    label = ("CPU results (the 2-core CPU machine, `--device cpu`); the GPU run on the H200 is owed"
             if device == "cpu" else f"{device} results"
             + (f"; {owed} problems are still owed a check (the GPU run resumes where it stopped)"
                if owed else ""))
    lines = ["# Compatibility with KernelBench and PopcornBench", "",
             f"**{label}.** Generated by `scripts/compatibility-report.sh` on "
             f"{datetime.date.today().isoformat()}; do not edit by hand: rerun it.", "",
             "Suites: ScalingIntelligence/KernelBench (levels 1-4, `--variant standard`) and "
             "arjun-banerjee/POPCORNBENCH-clean (`popcorn` and `popcorn2` folders, levels 1-4, "
             "under the variant of the same name). Each problem is loaded by kbench's own loader "
             "(`kbench.worker.loading.load_problem`), its trial-0 inputs and weights sized on "
             "torch's meta device, then checked with "
             f"`kbench problems check --device {device} --trials {args.trials}` "
             + (f"where its inputs and weights fit in {args.max_bytes / 2**20:.0f} MiB. " if args.max_bytes else ". ")
             + "`state`: pass; fail (with who is at fault: the problem, or kbench); needs (what the "
             "machine lacks); owed (not checked here: the GPU run checks it).", ""]
    lines += _summary(rows)
    kbench_faults = [r for r in rows if r[6] == "kbench"]
    lines += ["", "## Failures on kbench's side", ""]
    lines += [f"- {r[0].label}: {_cell(r[7], 400)}" for r in kbench_faults] or ["None found in this run."]
    needs = collections.Counter(r[7] for r in rows if r[5] == "needs")
    lines += ["", "## What the level-4 problems need", "",
              "Level-4 problems build Hugging Face models (`from_pretrained`): they need the "
              "python modules below in kbench's torch environment and the named weights in the "
              "Hugging Face cache (`HF_HOME`; the GPU machine has no network, so download them "
              "before and carry them), and GPU memory for models of up to 8 B parameters.", ""]
    lines += [f"- {_cell(k, 500)} ({n} problem{'s' if n > 1 else ''})" for k, n in sorted(needs.items())] or ["-"]
    lines += ["", "## Per problem", "",
              "| problem | loads | inputs+weights | reference runs | verdict | state | fault | reason |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p, loads, size, runs, verdict, state, fault, reason in rows:
        lines.append(f"| {p.label} | {loads} | {size} | {runs} | {verdict} | {state} | {fault} | {_cell(reason)} |")
    lines += ["", "## The GPU run", "", gpu_command.text()]
    lines += ["", "## KernelBench's own candidates (issue 16 item 4)", ""]
    lines += _candidates(cand, device)
    lines += ["", "## popcorn_pri against PopcornBench's popcorn_random_inputs.py (issue 16 item 5)", ""]
    lines += _pri_section(pri) + ["", DIFFERENCES, "", _imports_section(problems, probes)]
    Path(path).write_text("\n".join(lines) + "\n")


def _candidates(cand, device):
    if cand is None:
        return ["Not run in this report (`--skip candidates`)."]
    out = [f"Manifest generated from the suite path: `{Path(cand['manifest']).name}` under the output "
           "folder (`kbench suite` format; honest entries `expect: ok`, adversarial ones carry "
           "`verdict: not ok`, any status but ok). " + ("The CPU run gives the static check only: "
           "every candidate is GPU code." if device == "cpu" else ""), "",
           "| candidate | problem | kind | expected | static check (CPU) | status | why |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for e in cand["entries"]:
        st = e.get("static", {})
        static = "exit 0" if st.get("exit") == 0 else f"exit {st.get('exit')}: " + "; ".join(st.get("verdicts", []))
        status = e.get("status") or ("owed (GPU)" if device == "cpu" else "not run")
        if e.get("status") not in (None, "ok") and e.get("message"):
            status += ": " + e["message"]
        if e.get("status") == "static_rejected" and st.get("exit") == 0:
            status = "static check now passes it (rerun owed); on the GPU run: " + status
        why = e["why"] + (f" Needs {e['needs']}." if e.get("needs") else "")
        out.append(f"| {Path(e['candidate']).parent.name}/{Path(e['candidate']).name} | {Path(e['problem']).name} | "
                   f"{e['kind']} | {e['verdict']} | {_cell(static, 200)} | {_cell(status, 240)} | {_cell(why, 300)} |")
    for e in cand.get("skipped", []):
        out.append(f"\nLeft out: `{Path(e['candidate']).name}`: {e['skip']}.")
    return out


def _imports_section(problems, probes):
    users = collections.defaultdict(list)
    for p in problems:
        for m in probes.get(p.key, {}).get("static", {}).get("kernelbench_imports", []):
            users[m].append(p)
    missing = sorted({n for p in problems for n in probes.get(p.key, {}).get("static", {}).get("shim_missing", [])})
    out = ["### Problems that import PopcornBench's own modules", ""]
    for module, ps in sorted(users.items()):
        out.append(f"- `{module}`: {len(ps)} problems (e.g. {', '.join(x.path.name for x in ps[:3])}); "
                   + ("provided by kbench's shim (`python/kernelbench/`)." if not missing else ""))
    out.append("" if not missing else f"\nMissing from kbench's shim: {', '.join(missing)}.")
    if not users:
        out.append("None.")
    return "\n".join(out)
