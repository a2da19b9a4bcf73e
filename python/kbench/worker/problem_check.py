"""`kbench problems check`: the reference-side measurements of one problem under one variant.

For every trial: does the reference run on the trial's shapes; run twice on the same inputs,
each call under the trial's forward seed as grading runs it (runtime.seed_forward), then a
third time without seeding again (the orchestrator compares the two seeded outputs for
determinism, and the third with the first to tell a forward that draws random numbers). On the
first trial: are the weights the same when the model is built twice under the same seed; how
long does a call take and how much device memory does it need. The outputs go to files; the
judging (near-constant, uniform along an axis, trivial answers, seed dependence) is done in C++
by the orchestrator with the same comparator that grades candidates.

In a batch on cuda (`kbench problems check --jobs`), each trial's GPU work holds the GPU's lane
shared with the other checks and the timed part holds it alone (_GpuLane).
"""

import json
import time
from contextlib import contextmanager
from pathlib import Path

import torch

from . import runtime, tensor_io
from .errors import format_traceback, one_line
from .native import kn
from .reference_phase import ReferenceSession
from .timing import time_calls


# Taken at import, before the problem's module runs, as tensor_io takes its own.
_interim_send = getattr(kn, "interim_send", None)
_interim_receive = getattr(kn, "interim_receive", None)


class _GpuLane:
    """The GPU's lane in a batch of checks on cuda (src/sched/gpu_lane.hpp): each trial's GPU
    work holds it shared with the other checks, the timed part holds it alone, so no other
    check's kernels run inside a measurement. A check alone (or on cpu) is not asked to."""

    def __init__(self, used):
        self.used = bool(used) and _interim_send is not None

    def _move(self, state):
        if not self.used:
            return
        _interim_send(json.dumps({"interim": True, "gpu_lane": state}))
        reply = json.loads(_interim_receive())
        if not reply.get("ok"):
            raise RuntimeError(f"kbench refused the GPU lane: {reply.get('message', '')}")

    @contextmanager
    def held(self, state):
        self._move(state)
        try:
            yield
        finally:
            self._move("none")


def _state(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _state_equal(sa, sb):
    if sa.keys() != sb.keys():
        return False
    return all(torch.equal(sa[k], sb[k]) for k in sa)


def _median_call_us(model, inputs, device):
    """The median of five calls, timed as `kbench eval` times them (warm L2: the problem's own
    cost per call, not a benchmark)."""
    samples = sorted(time_calls(model, inputs, device, warmup=1, iterations=5, flush_l2=False)["samples_us"])
    return samples[len(samples) // 2]


def _peak_memory_bytes(model, inputs, device):
    if device.type != "cuda":
        return None
    torch.cuda.synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    with torch.no_grad():
        model(*inputs)
    torch.cuda.synchronize(device)
    return int(torch.cuda.max_memory_allocated(device))


def _identical(first, other):
    """Bit for bit the same tensors, compared where they are (on the GPU: no copy back)."""
    return len(first) == len(other) and all(
        a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b) for a, b in zip(first, other)
    )


# Elements compared at a time by _far_apart, so that its temporaries stay small beside outputs
# of up to 8 GiB.
_FAR_CHUNK = 1 << 24


def _far_apart(output, x, bound):
    """True when some element of `output` lies farther from `x`'s than twice the loosest
    tolerance (`bound`: atol, rtol) allows: then no tolerance the orchestrator could use passes
    `x` as `output`, whatever the rounding here (float32 at least, float64 for float64). A
    non-finite value counts unless the other side holds the same one (NaN with NaN), as in the
    comparator (src/compare/tolerance.hpp, within_tolerance)."""
    if output.is_complex():
        return False
    atol, rtol = 2 * float(bound["atol"]), 2 * float(bound["rtol"])
    wide = torch.float64 if output.dtype == torch.float64 else torch.float32
    try:
        a, b = output.reshape(-1), x.reshape(-1)
        for start in range(0, a.numel(), _FAR_CHUNK):
            o = a[start : start + _FAR_CHUNK].to(wide)
            r = b[start : start + _FAR_CHUNK].to(wide)
            far = (o - r).abs() > atol + rtol * r.abs()
            odd = ~(torch.isfinite(o) & torch.isfinite(r)) & ~((torch.isnan(o) & torch.isnan(r)) | (o == r))
            if bool((far | odd).any()):
                return True
    except torch.OutOfMemoryError:
        pass  # no room for the temporaries: the input is written and judged there, as before
    return False


def _passthrough_candidates(inputs, outputs, bound):
    """The tensor inputs, by their index among the tensor inputs, that have some output's dtype
    and shape: the only ones the orchestrator compares with the outputs. With `bound` (the
    loosest tolerance, from the request), the (output, input) pairs told apart on the device
    are returned instead of written: most inputs of an elementwise problem are as large as its
    outputs and plainly not them. Returns (inputs to write, refuted pairs)."""
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    written, refuted = {}, []
    for i, x in enumerate(tensors):
        name = f"input.{i}"
        alike = [(f"output.{j}", o) for j, o in enumerate(outputs) if (o.dtype, o.shape) == (x.dtype, x.shape)]
        apart = [out for out, o in alike if bound is not None and _far_apart(o, x, bound)]
        refuted += [[out, name] for out in apart]
        if len(apart) < len(alike):
            written[name] = x
    return written, refuted


def _report_trial(record):
    """Hands the finished trial to the orchestrator, which judges it and removes its files."""
    if _interim_send is None:
        raise RuntimeError("kbench's worker module has no interim channel: rebuild kbench")
    _interim_send(json.dumps({"interim": True, "trial": record}))
    reply = json.loads(_interim_receive())
    if not reply.get("ok"):
        raise RuntimeError(f"kbench did not take trial {record['index']}: {reply.get('message', '')}")


class _Phases:
    """Where a trial's time goes (the record's `seconds`): a large problem's check spends tens
    of seconds a trial, and only the split says whether building, calling, timing or writing
    the outputs is the cost. Waits for the GPU's lane count in the phase that waited."""

    def __init__(self, record):
        self.seconds = record.setdefault("seconds", {})

    @contextmanager
    def timed(self, name):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = round(self.seconds.get(name, 0.0) + time.perf_counter() - start, 4)


def _call_trial(session, record, seed, init_seed, forward_seed):
    """Builds the trial and calls it: twice under the forward seed, once without seeding again.
    Raises what the reference raises; `record` has the input shapes once they are known."""
    phases = _Phases(record)
    with phases.timed("build"):
        _, model, inputs = session._build_trial(seed, init_seed)
        runtime.synchronize(session.device)
    record["input_shapes"] = tensor_io.describe(inputs)
    # As built, before any call: forward may update buffers (BatchNorm running stats).
    built = _state(model)
    with phases.timed("calls"), torch.no_grad():
        runtime.seed_forward(forward_seed)
        first = tensor_io.flatten_outputs(model(*inputs), "the reference")
        runtime.seed_forward(forward_seed)
        second = tensor_io.flatten_outputs(model(*inputs), "the reference")
        # Not seeded again: the generators stand where the second call left them, so
        # outputs that differ from the first come from what forward drew from them.
        unseeded = tensor_io.flatten_outputs(model(*inputs), "the reference")
        runtime.synchronize(session.device)
    # The model alone: drawing the inputs again (KernelBench's reach 8 GiB) would tell nothing.
    # Built on the first trial only: weights that do not follow the seed differ on any trial,
    # and a level-3 model of GiBs of weights takes seconds to build on the CPU.
    if record["index"] == 0:
        with phases.timed("build"):
            _, twin = session._build_model(seed, init_seed)
            record["weights_follow_seed"] = _state_equal(built, _state(twin))
    return model, inputs, first, second, unseeded


def _release_device_memory(device):
    """Hands the trial's freed GPU memory back to the device. torch's caching allocator would
    keep it reserved for this process until it exits, through the orchestrator's judging of
    the outputs too; the other checks of a batch beside it need it (KernelBench's large level-1
    problems hold 15-50 GiB each)."""
    if device.type == "cuda":
        torch.cuda.empty_cache()


def check(request):
    session = ReferenceSession(request)
    out_dir = Path(request["outputs_dir"])
    init_seed = int(request["init_seed"])
    lane = _GpuLane(request.get("gpu_lane") and session.device.type == "cuda")
    trials = []
    for trial in request["trials"]:
        index, seed = int(trial["index"]), int(trial["seed"])
        forward_seed = int(trial["forward_seed"])
        record = {"index": index, "seed": seed, "ran": False, "input_shapes": None}
        failed = False
        try:
            with lane.held("shared"):
                model, inputs, first, second, unseeded = _call_trial(
                    session, record, seed, init_seed, forward_seed
                )
            if index == 0:
                with _Phases(record).timed("timed"), lane.held("exclusive"):
                    record["call_us"] = _median_call_us(model, inputs, session.device)
                    record["peak_memory_bytes"] = _peak_memory_bytes(model, inputs, session.device)
        except BaseException as exc:  # noqa: BLE001 - a broken reference is what we look for
            record.update(error=one_line(exc))
            _report_trial(record)
            record["log"] = format_traceback(exc)
            trials.append(record)
            failed = True
        if failed:  # out of the except block: its traceback no longer holds the trial's tensors
            _release_device_memory(session.device)
            continue
        # The copies back from the device are GPU work too.
        with _Phases(record).timed("outputs"), lane.held("shared"):
            tensor_io.save_outputs(first, out_dir / f"trial_{index}.outputs.safetensors")
            record["repeat_identical"] = _identical(first, second)
            if not record["repeat_identical"]:
                tensor_io.save_outputs(second, out_dir / f"trial_{index}.repeat.safetensors")
            record["unseeded_identical"] = _identical(first, unseeded)
            if not record["unseeded_identical"]:
                tensor_io.save_outputs(unseeded, out_dir / f"trial_{index}.unseeded.safetensors")
            passthrough, record["passthrough_refuted"] = _passthrough_candidates(
                inputs, first, request.get("passthrough_bound")
            )
            if passthrough:
                tensor_io.save_tensors(passthrough, out_dir / f"trial_{index}.inputs.safetensors")
        record.update(ran=True, outputs=tensor_io.describe(first))
        del model, inputs, first, second, unseeded, passthrough  # before the next trial's
        _release_device_memory(session.device)
        _report_trial(record)
        trials.append(record)
    answer = {"ok": True, "trials": trials}
    if session.device.type == "cuda":
        props = torch.cuda.get_device_properties(session.device)
        answer["device_memory_bytes"] = int(props.total_memory)
        answer["device_name"] = props.name
    return answer
