"""Who is at fault for each problem that does not pass: the problem, kbench, or the machine
(something it lacks: a module, weights, a GPU), read from the probe and the check's findings."""

import re

# Findings that say the problem itself cannot grade candidates fairly.
_PROBLEM_CHECKS = {"reference-runs", "weights-follow-seed", "depends-on-inputs", "trivial-answer",
                   "fits-device-memory"}
# A from_pretrained that found no weights in the Hugging Face cache on a machine with no network.
_HF_OFFLINE_MARKERS = ("huggingface.co", "couldn't find them in the cached files", "LocalEntryNotFoundError",
                       "HF_HUB_OFFLINE")
_KBENCH_MARKERS = ("SafetensorError", "File too large", "kbench_native", "popcorn_pri was used outside")


def _stochastic(source: str) -> bool:
    forward = source.split("def forward", 1)[-1].split("\ndef ", 1)[0]
    return bool(re.search(r"torch\.(rand|randn|randint|bernoulli|multinomial|normal)\w*\(|\.(bernoulli_|uniform_|normal_)\(|randn_like|rand_like|dropout", forward))


def classify(probe: dict, check: dict | None, source: str, device: str) -> tuple[str, str, str]:
    """(state, fault, reason): state pass/fail/needs/owed; fault problem/kbench/machine/-."""
    static = probe.get("static", {})
    if probe.get("loads") is False:
        err = probe.get("load_error", "")
        if static.get("shim_missing"):
            return "fail", "kbench", f"kbench's kernelbench shim lacks {', '.join(static['shim_missing'])}"
        if static.get("missing_modules"):
            need = "python modules " + ", ".join(static["missing_modules"])
            if static.get("hf_models"):
                need += "; Hugging Face weights " + ", ".join(static["hf_models"])
            return "needs", "machine", need
        if any(m in err for m in _KBENCH_MARKERS):
            return "fail", "kbench", err
        if any(m in err for m in _HF_OFFLINE_MARKERS):
            models = ", ".join(static.get("hf_models", [])) or "the model's"
            return "needs", "machine", f"Hugging Face weights {models} in the Hugging Face cache (HF_HOME)"
        if "CUDA" in err or "cuda" in err:
            return "needs", "machine", f"a GPU at load time: {err}"
        return "fail", "problem", err
    if probe.get("loads") is None:
        return "fail", "problem", probe.get("load_error", "the probe did not finish")
    if check is None:
        return "owed", "-", ("not checked on this machine: trial-0 inputs and weights "
                             f"{_mib(probe)} over the CPU limit, or the time budget ran out"
                             if device == "cpu" else "not checked: the time budget ran out")
    verdict = check.get("verdict")
    findings = check.get("findings", [])
    errors = [f for f in findings if f.get("severity") == "error"]
    warns = [f for f in findings if f.get("severity") == "warn"]
    if verdict == "pass":
        note = "; ".join(f"{f['check']}: {f['message']}" for f in warns)
        return "pass", "-", (f"warnings: {note}" if note else "")
    if verdict == "not checked":
        msg = check.get("message", "")
        if any(m in msg for m in _KBENCH_MARKERS):
            return "fail", "kbench", msg
        if "its filesystem has only" in msg:  # kbench reran it alone: still no room
            return "needs", "machine", ("more scratch disk than the machine had free with the "
                                        f"check alone; point TMPDIR at a larger filesystem ({msg})")
        if "timeout" in msg.lower() or "deadline" in msg.lower() or "timed out" in msg.lower():
            return "owed", "-", f"the check ran past --run-timeout on {device}: {msg}"
        if "GPU" in msg or "cuda" in msg.lower():
            return "needs", "machine", msg
        return "fail", "kbench", f"the check could not run: {msg}"
    # Each error has its own culprit; a problem defect outweighs kbench's (the problem must be
    # fixed whatever kbench does), kbench's outweighs the machine's.
    reasons, faults = [], set()
    for f in errors:
        text = f"{f['check']}: {f['message']}"
        if any(m in f["message"] for m in _KBENCH_MARKERS):
            faults.add("kbench")
        elif f["check"] == "deterministic" and _stochastic(source):
            faults.add("kbench")
            text += " (the forward samples noise: kbench does not yet seed each forward as PopcornBench does, issue 24)"
        elif f["check"] == "fits-device-memory":
            faults.add("machine")
        else:
            faults.add("problem")
        reasons.append(text)
    fault = next((x for x in ("problem", "kbench", "machine") if x in faults), "problem")
    return "fail", fault, "; ".join(reasons)


def _mib(probe: dict) -> str:
    total = (probe.get("input_bytes") or 0) + (probe.get("weight_bytes") or 0)
    return f"{total / 2**20:.0f} MiB" if "input_bytes" in probe else "(not sized)"
