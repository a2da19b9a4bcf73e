"""The worker protocol's Python side: one request in, one answer out, both JSON.

The requests are defined once, on the C++ side: src/pipeline/worker_requests.hpp builds every
one kbench sends and says what each field means; the handlers below read those fields. A worker
holds at most one session: a reference session (process R) or a candidate session (process C).
Ops: hello, static_check, compile, reference, candidate, problem_check, time (the
evaluation's phases) and time_block, energy, profile (the measurement engine and profiling); the
`HANDLERS` table at the end maps each to its handler.
"""

import json
import os
import sys
import time
import traceback
from pathlib import Path

from .errors import PhaseError, format_traceback

_session = {"kind": None, "value": None}


def _hello(request):
    answer = {
        "ok": True,
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "pid": os.getpid(),
    }
    if request.get("torch", True):
        import torch

        answer["torch"] = torch.__version__
        answer["torch_cuda"] = torch.version.cuda
    return answer


def _static_check(request):
    """Optional fields: backend (auto, cuda, triton, cpu), rules (a rule set's path or bundled
    name), problem (its size constants feed shape-specialised). An evaluation sends none of
    them and gets the default rule set with the backend inferred."""
    from .static_check import RuleSetError, analyse

    path = request["candidate"]
    source = Path(path).read_text(encoding="utf-8", errors="replace")
    try:
        answer = analyse(source, path, request.get("backend") or "auto", request.get("rules"),
                         request.get("problem"))
    except (RuleSetError, OSError) as exc:
        raise PhaseError("harness_error", str(exc)) from exc
    return {"ok": True, **answer}


def extensions_dir_for(base) -> str:
    """The build directory for this interpreter and torch: the orchestrator keys `base` by the
    candidate's source and flags; a different torch or Python must not load those builds."""
    tag = f"torch-{_torch_version()}-py{sys.version_info.major}{sys.version_info.minor}"
    return str(Path(base) / tag.replace("+", "_"))


def _torch_version():
    """torch.__version__ ("2.11.0+cu130") read from torch/version.py, without the seconds of
    importing torch: a native candidate's build never needs torch itself."""
    import importlib.util
    import re

    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.submodule_search_locations:
        version_file = Path(list(spec.submodule_search_locations)[0]) / "version.py"
        text = version_file.read_text(errors="replace") if version_file.is_file() else ""
        found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
        if found:
            return found.group(1)
    import torch

    return torch.__version__


def _unit_notes(extensions_dir, suffix):
    """What light_nvcc.py (`.kbench-header`) or light_cxx.py (`.kbench-binding`, `.kbench-pch`), and both (`.kbench-aten`),
    left beside the units it built: one line per distinct note, or "" where it built none."""
    lines = sorted({p.read_text(errors="replace").strip() for p in Path(extensions_dir).rglob("*" + suffix)})
    return "; ".join(lines)


def _compile(request):
    from . import native_candidate

    extensions_dir = extensions_dir_for(request["extensions_dir"])
    cached = any(Path(extensions_dir).rglob("*.so"))
    os.environ["TORCH_EXTENSIONS_DIR"] = extensions_dir
    start = time.perf_counter()
    if native_candidate.is_native(request["candidate"]):
        native_candidate.build(request["candidate"], extensions_dir)  # no torch, no candidate code run
    else:
        from .loading import load_candidate

        load_candidate(request["candidate"])
    from .own_kernels import own_kernel_names

    return {
        "pch": _unit_notes(extensions_dir, ".kbench-pch"),
        "cuda_header": _unit_notes(extensions_dir, ".kbench-header"),
        "binding_header": _unit_notes(extensions_dir, ".kbench-binding"),
        "aten_header": _unit_notes(extensions_dir, ".kbench-aten"),
        "ok": True,
        "seconds": time.perf_counter() - start,
        "cached": cached,
        "extensions_dir": extensions_dir,
        "own_kernels": own_kernel_names(request["candidate"]),
    }


def _reference(request):
    from .reference_phase import ReferenceSession

    if _session["kind"] is None:
        _session.update(kind="reference", value=ReferenceSession(request))
    return _session["value"].run_trials(request)


def _candidate(request):
    from .candidate_phase import CandidateSession

    if _session["kind"] is None:
        _session.update(kind="candidate", value=CandidateSession(request))
    return _session["value"].run_trials(request)


def _problem_check(request):
    from .problem_check import check

    return check(request)


def _time(request):
    from .candidate_phase import runtime_failure
    from .timing import time_calls

    session = _session["value"]
    if session is None or session.kept is None:
        raise PhaseError("harness_error", "time requested before any trial ran in this worker")
    model, inputs = session.kept
    try:
        return time_calls(
            model,
            inputs,
            session.device,
            int(request.get("warmup", 3)),
            int(request.get("iterations", 30)),
            bool(request.get("flush_l2", True)),
        )
    except BaseException as exc:
        if _session["kind"] == "candidate":
            raise runtime_failure(exc, session.path, "timing ModelNew.forward")
        raise


def _time_block(request):
    from .candidate_phase import runtime_failure
    from .measurement import TimingSession

    session = _session["value"]
    if session is None or session.kept is None:
        raise PhaseError("harness_error", "time_block requested before any trial ran in this worker")
    if getattr(session, "problem", None) is None:
        raise PhaseError("harness_error", "time_block needs the problem: the candidate request names none")
    try:
        first = getattr(session, "timing", None) is None
        if first:
            session.timing = TimingSession(session, request)
        answer = session.timing.block(dict(request, outputs_dir=str(session.outputs_dir)))
        if first:
            answer["setup"] = session.timing.describe()
        return answer
    except PhaseError:
        raise
    except BaseException as exc:
        if _session["kind"] == "candidate":
            raise runtime_failure(exc, session.path, "timing ModelNew.forward")
        raise


def _session_op(what, run):
    """Runs `run(session)` for an op that needs the trials' model and inputs; a failure of the
    candidate's code is reported as the candidate's."""
    from .candidate_phase import runtime_failure

    session = _session["value"]
    if session is None or session.kept is None:
        raise PhaseError("harness_error", f"{what} requested before any trial ran in this worker")
    try:
        return run(session)
    except PhaseError:
        raise
    except BaseException as exc:
        if _session["kind"] == "candidate":
            raise runtime_failure(exc, session.path, f"{what} of ModelNew.forward")
        raise


def _energy(request):
    def run(session):
        if getattr(session, "timing", None) is None:
            raise PhaseError("harness_error", "energy is measured after the timing blocks, in the same worker")
        return session.timing.energy(request)

    return _session_op("energy", run)


def _profile(request):
    from .profiling import profile

    return _session_op("profiling", lambda session: profile(session, request))


HANDLERS = {
    "energy": _energy,
    "profile": _profile,
    "time_block": _time_block,
    "hello": _hello,
    "static_check": _static_check,
    "compile": _compile,
    "reference": _reference,
    "candidate": _candidate,
    "time": _time,
    "problem_check": _problem_check,
}


def handle_line(line: str) -> str:
    """Answers one request line. Never raises: every failure becomes an answer."""
    try:
        request = json.loads(line)
        handler = HANDLERS.get(request.get("op"))
        if handler is None:
            raise PhaseError("harness_error", f"unknown worker op {request.get('op')!r}")
        answer = handler(request)
    except PhaseError as exc:
        answer = exc.to_answer()
    except BaseException as exc:  # noqa: BLE001 - the worker must answer whatever happened
        from .errors import is_sticky_cuda_error

        answer = {
            "ok": False,
            "status": "harness_error",
            "message": f"worker error: {type(exc).__name__}: {exc}",
            "log": format_traceback(exc),
            "fatal": is_sticky_cuda_error(exc),
        }
    try:
        return json.dumps(answer, default=str)
    except (TypeError, ValueError):
        return json.dumps({"ok": False, "status": "harness_error", "message": traceback.format_exc()})
