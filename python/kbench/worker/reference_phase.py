"""Process R: runs the reference on every trial and writes inputs and expected outputs."""

import time
from pathlib import Path

import torch

from . import inputs_ready, runtime, tensor_io
from .errors import PhaseError, format_traceback, is_sticky_cuda_error, one_line
from .loading import load_problem


class ReferenceSession:
    def __init__(self, request):
        self.device = runtime.configure_device(request["device"])
        self.problem_path = request["problem"]
        self.variant = request.get("variant", "standard")
        self.dtype = runtime.precision_dtype(request.get("precision", "fp32"))
        self.problem = load_problem(self.problem_path)
        self.kept = None  # (model, inputs) of the first trial, for timing
        # Trial inputs are drawn on the evaluation's device, as the timed calls' are
        # (timed_inputs.py): a CPU draw of a KernelBench level-1 input (32-64M elements) takes
        # most of a second per trial, the H200's about a millisecond. Off for good once a
        # problem's get_inputs() cannot run that way (it calls numpy on a tensor, say).
        self.inputs_on_device = self.device.type == "cuda"

    def _build_model(self, seed, init_seed):
        """The trial's init inputs and model, as _build_trial makes them (its inputs are drawn
        after), for a caller that wants the model alone."""
        from kernelbench import popcorn_random_inputs

        p = self.problem
        popcorn_random_inputs._begin_trial(seed, self.variant)
        runtime.set_seed(seed)
        init_inputs = _as_list(p.get_init_inputs(), "get_init_inputs()", self.problem_path)
        runtime.set_seed(init_seed)
        return init_inputs, p.Model(*init_inputs).to(device=self.device, dtype=self.dtype)

    def _build_trial(self, seed, init_seed):
        init_inputs, model = self._build_model(seed, init_seed)
        inputs = _as_list(self._draw_inputs(seed), "get_inputs()", self.problem_path)
        _check_inputs(inputs, self.problem_path)
        return init_inputs, model, runtime.cast_inputs(inputs, self.device, self.dtype)

    def _draw_inputs(self, seed):
        from kernelbench import popcorn_random_inputs

        runtime.set_seed(seed)
        if self.inputs_on_device:
            try:
                with torch.device(self.device):
                    return self.problem.get_inputs()
            except Exception:  # noqa: BLE001 - drawn again on the CPU, where a real error recurs
                self.inputs_on_device = False
                # The trial's draws replayed up to get_inputs(), so its sizes come out the same.
                popcorn_random_inputs._begin_trial(seed, self.variant)
                runtime.set_seed(seed)
                self.problem.get_init_inputs()
                runtime.set_seed(seed)
        return _get_inputs(self.problem, self.device, self.problem_path)

    def run_trials(self, request):
        inputs_dir = Path(request["inputs_dir"])
        outputs_dir = Path(request["outputs_dir"])
        init_seed = int(request["init_seed"])
        results = []
        for trial in request["trials"]:
            index, seed = int(trial["index"]), int(trial["seed"])
            cached = bool(trial.get("cached"))
            if cached and self.kept is not None:
                continue
            # The orchestrator's (core/seeding.hpp), sent to C for the same trial too. A cached
            # trial runs no forward here.
            forward_seed = None if cached else int(trial["forward_seed"])
            stage = "building the trial's inputs"
            shapes = None
            try:
                init_inputs, model, inputs = self._build_trial(seed, init_seed)
                if cached:
                    # Its inputs and outputs came from kbench's reference cache: only the first
                    # trial's model and inputs are built, the ones timing runs.
                    self.kept = (model, inputs)
                    continue
                shapes = tensor_io.describe(inputs)
                # Saved before the forward: C starts on them while this forward runs, and a
                # forward that changes its inputs in place cannot change what C is given.
                stage = "saving the trial's inputs"
                tensor_io.save_values(init_inputs, inputs_dir / f"trial_{index}.init", "init")
                tensor_io.save_values(inputs, inputs_dir / f"trial_{index}.inputs", "input")
                inputs_ready.mark_ready(inputs_dir, index)
                stage = "running the reference forward"
                runtime.seed_forward(forward_seed)
                start = time.perf_counter()
                with torch.no_grad():
                    outputs = tensor_io.flatten_outputs(model(*inputs), "the reference")
                runtime.synchronize(self.device)
                seconds = time.perf_counter() - start
            except PhaseError:
                raise
            except BaseException as exc:
                fatal = is_sticky_cuda_error(exc)
                raise PhaseError(
                    "harness_error",
                    f"the reference failed on trial {index} (seed {seed}, variant {self.variant}"
                    + (f", inputs {shapes}" if shapes is not None else "")
                    + f") while {stage}: {one_line(exc)}. The problem, not the candidate, is at fault",
                    details={"trial": index, "log": format_traceback(exc), "input_shapes": shapes},
                    fatal=fatal,
                )
            tensor_io.save_outputs(outputs, outputs_dir / f"trial_{index}.outputs.safetensors")
            results.append(
                {
                    "index": index,
                    "seed": seed,
                    "input_shapes": shapes,
                    "outputs": tensor_io.describe(outputs),
                    "forward_seconds": seconds,
                }
            )
            if self.kept is None:
                self.kept = (model, inputs)
        self.inputs_dir, self.outputs_dir = inputs_dir, outputs_dir
        self.first_seed = int(request["trials"][0]["seed"]) if request["trials"] else 0
        return {"ok": True, "trials": results}


def _as_list(value, what, path):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return list(value)
    raise PhaseError(
        "harness_error",
        f"{path}: {what} returned a {type(value).__name__}; it must return a list of tensors "
        "(or of constructor arguments)",
    )


def _get_inputs(problem, device, path):
    """get_inputs(), where one that makes its tensors on `cuda` itself (KernelBench's examples:
    `.cuda()`, `device="cuda"`) on a machine or --device without CUDA is `unsupported`, with
    what it needs, rather than a defect of the problem."""
    try:
        return problem.get_inputs()
    except Exception as exc:  # noqa: BLE001 - re-raised unless it is CUDA's absence
        text = str(exc).lower()
        names_cuda = "cuda" in text or "nvidia" in text
        if device.type == "cuda" or torch.cuda.is_available() or not names_cuda:
            raise
        raise PhaseError(
            "unsupported",
            f"{path}: get_inputs() makes its inputs on CUDA ({one_line(exc)}), and this evaluation runs on "
            f"{device} without a usable GPU: run it with --device cuda on a machine with an NVIDIA GPU",
        ) from None


def _check_inputs(inputs, path):
    for i, value in enumerate(inputs):
        if isinstance(value, torch.Tensor) or isinstance(value, (bool, int, float)):
            continue
        raise PhaseError(
            "harness_error",
            f"{path}: get_inputs() item {i} is a {type(value).__name__}; forward inputs must be "
            "tensors (or plain numbers)",
        )
