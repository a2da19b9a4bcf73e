"""Process C: builds ModelNew from the inputs process R wrote and runs it.

C never sees trial seeds or reference outputs: it reads inputs from its scratch directory and
writes its outputs there, nothing else.

The timing loop (measurement.py, timed_inputs.py) is imported here, before any candidate code
runs: the torch functions it reads outputs with are captured at its import.
"""

import inspect
import os
from pathlib import Path

import torch

from . import inputs_ready, integrity, measurement, runtime, tensor_io  # noqa: F401 - measurement: before any candidate
from .integrity import ForwardWatch
from .errors import PhaseError, cuda_error_text, format_traceback, is_sticky_cuda_error, one_line, user_frame
from .loading import load_candidate, load_problem


def _signature_error(what, callable_, args, exc, path):
    try:
        signature = str(inspect.signature(callable_))
    except (TypeError, ValueError):
        signature = "(...)"
    return PhaseError(
        "runtime_error",
        f"{path}: {what} signature mismatch: {what}{signature} cannot take the "
        f"{len(args)} argument(s) the problem passes ({exc}); ModelNew must keep Model's signatures",
    )


# Taken when this module is imported, before the candidate loads: a candidate that replaces
# ForwardWatch.check does not switch the check off.
_forward_watch_check = ForwardWatch.check


def runtime_failure(exc, path, during):
    """A candidate exception as a PhaseError: a CUDA fault is a crash, an import of kbench's own
    module an integrity failure, anything else a runtime error."""
    refused = integrity.refused_import(exc, f"{path} while {during}")
    if refused is not None:
        return refused
    if is_sticky_cuda_error(exc):
        return PhaseError(
            "crashed",
            f"CUDA error while {during}: {cuda_error_text(exc)}",
            details={"log": format_traceback(exc)},
            fatal=True,
        )
    if isinstance(exc, SystemExit):
        return PhaseError("runtime_error", f"the candidate called sys.exit({exc.code}) while {during}")
    where = user_frame(exc, path)
    at = f" at {path}:{where[0]} ({where[1]})" if where else ""
    return PhaseError(
        "runtime_error",
        f"exception while {during}{at}: {one_line(exc)}",
        details={"log": format_traceback(exc)},
    )


class CandidateSession:
    def __init__(self, request):
        self.device = runtime.configure_device(request["device"])
        self.path = str(Path(request["candidate"]).resolve())
        self.dtype = runtime.precision_dtype(request.get("precision", "fp32"))
        os.environ["TORCH_EXTENSIONS_DIR"] = request["extensions_dir"]
        integrity.warm_up(self.device)
        # The problem, before the candidate: its get_inputs() draws the timed calls' inputs here
        # (timed_inputs.py), so that no input set exists before the call that uses it.
        self.problem_path = request.get("problem")
        self.problem = load_problem(self.problem_path) if self.problem_path else None
        self.variant = request.get("variant", "standard")
        self.module = load_candidate(self.path, self.problem)
        self.kept = None
        self.kept_forward_seed = None

    def _build(self, init_inputs, init_seed):
        model_class = self.module.ModelNew
        try:
            inspect.signature(model_class).bind(*init_inputs)
        except TypeError as exc:
            raise _signature_error("ModelNew.__init__", model_class, init_inputs, exc, self.path)
        runtime.set_seed(init_seed)
        try:
            return model_class(*init_inputs).to(device=self.device, dtype=self.dtype)
        except BaseException as exc:
            raise runtime_failure(exc, self.path, "constructing ModelNew")

    def run_trials(self, request):
        inputs_dir = Path(request["inputs_dir"])
        outputs_dir = Path(request["outputs_dir"])
        init_seed = int(request["init_seed"])
        results = []
        for trial in request["trials"]:
            index = int(trial["index"])
            inputs_ready.wait_ready(inputs_dir, index)  # R may still be writing later trials
            init_inputs = tensor_io.load_values(inputs_dir / f"trial_{index}.init", None)
            inputs = tensor_io.load_values(inputs_dir / f"trial_{index}.inputs", self.device)
            model = self._build(init_inputs, init_seed)
            try:
                inspect.signature(model.forward).bind(*inputs)
            except TypeError as exc:
                raise _signature_error("ModelNew.forward", model.forward, inputs, exc, self.path)
            forward_seed = int(trial["forward_seed"])
            outputs = self._forward(model, inputs, forward_seed, f"trial {index}")
            tensor_io.save_outputs(outputs, outputs_dir / f"trial_{index}.outputs.safetensors")
            results.append({"index": index, "outputs": tensor_io.describe(outputs)})
            if self.kept is None:
                self.kept = (model, inputs)
                self.kept_forward_seed = forward_seed
        self.inputs_dir, self.outputs_dir = inputs_dir, outputs_dir
        if self.kept is not None and request["trials"]:
            # The first trial again, on the first model, after every other trial ran: the
            # orchestrator compares it with the reference too. A candidate whose answers depend
            # on what it saw before (a cache, a counter, leftover state) fails here.
            first = int(request["trials"][0]["index"])
            model, inputs = self.kept
            # Under the first trial's forward seed again: only state the candidate kept can
            # make this call differ from the first.
            again = self._forward(model, inputs, self.kept_forward_seed, f"trial {first} run again")
            tensor_io.save_outputs(again, outputs_dir / f"trial_{first}.again.outputs.safetensors")
        return {"ok": True, "trials": results}

    def _forward(self, model, inputs, forward_seed, label):
        watch = ForwardWatch(inputs)
        try:
            # Inside the try: a candidate that broke torch's seeding fails as its own error.
            runtime.seed_forward(forward_seed)
            with torch.no_grad():
                output = model(*inputs)
            runtime.synchronize(self.device)
        except BaseException as exc:
            raise runtime_failure(exc, self.path, f"running ModelNew.forward on {label}")
        try:
            outputs = tensor_io.flatten_outputs(output, "ModelNew")
        except TypeError as exc:
            raise PhaseError("incorrect", f"{label}: {exc}")
        # The outputs as they were when forward returned: what a thread writes later is not kept.
        return _forward_watch_check(watch, outputs, label)
