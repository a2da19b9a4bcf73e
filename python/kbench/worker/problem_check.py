"""`kbench problems check`: the reference-side measurements of one problem under one variant.

For every trial: does the reference run on the trial's shapes; run twice on the same inputs,
each call under the trial's forward seed as grading runs it (runtime.seed_forward), then a
third time without seeding again (the orchestrator compares the two seeded outputs for
determinism, and the third with the first to tell a forward that draws random numbers); are the weights the same when the model
is built twice under the same seed; how long does a call take and how much device memory does
it need. The outputs go to files; the judging (near-constant, uniform along an axis, trivial
answers, seed dependence) is done in C++ by the orchestrator with the same comparator that grades
candidates.
"""

from pathlib import Path

import torch

from . import runtime, tensor_io
from .errors import format_traceback, one_line
from .reference_phase import ReferenceSession
from .timing import time_calls


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


def _save_trivial_answers(outputs, path):
    """The answers a do-nothing kernel could give: zeros, and the output's mean everywhere."""
    answers = {}
    for i, out in enumerate(outputs):
        out = out.detach().to("cpu")
        answers[f"zeros.{i}"] = torch.zeros_like(out).contiguous()
        mean = out.double().mean() if out.numel() else torch.tensor(0.0, dtype=torch.float64)
        answers[f"constant.{i}"] = torch.full_like(out, mean.item() if out.is_floating_point() else round(mean.item())).contiguous()
    tensor_io.save_tensors(answers, path)


def check(request):
    session = ReferenceSession(request)
    out_dir = Path(request["outputs_dir"])
    init_seed = int(request["init_seed"])
    trials = []
    for trial in request["trials"]:
        index, seed = int(trial["index"]), int(trial["seed"])
        forward_seed = int(trial["forward_seed"])
        record = {"index": index, "seed": seed, "ran": False}
        shapes = None
        try:
            init_inputs, model, inputs = session._build_trial(seed, init_seed)
            shapes = tensor_io.describe(inputs)
            # As built, before any call: forward may update buffers (BatchNorm running stats).
            built = _state(model)
            with torch.no_grad():
                runtime.seed_forward(forward_seed)
                first = tensor_io.flatten_outputs(model(*inputs), "the reference")
                runtime.seed_forward(forward_seed)
                second = tensor_io.flatten_outputs(model(*inputs), "the reference")
                # Not seeded again: the generators stand where the second call left them, so
                # outputs that differ from the first come from what forward drew from them.
                unseeded = tensor_io.flatten_outputs(model(*inputs), "the reference")
            runtime.synchronize(session.device)
            _, twin, _ = session._build_trial(seed, init_seed)
            record["weights_follow_seed"] = _state_equal(built, _state(twin))
            if index == 0:
                record["call_us"] = _median_call_us(model, inputs, session.device)
                record["peak_memory_bytes"] = _peak_memory_bytes(model, inputs, session.device)
        except BaseException as exc:  # noqa: BLE001 - a broken reference is what we look for
            record.update(
                error=one_line(exc),
                log=format_traceback(exc),
                input_shapes=shapes,
            )
            trials.append(record)
            continue
        tensor_io.save_outputs(first, out_dir / f"trial_{index}.outputs.safetensors")
        tensor_io.save_outputs(second, out_dir / f"trial_{index}.repeat.safetensors")
        tensor_io.save_outputs(unseeded, out_dir / f"trial_{index}.unseeded.safetensors")
        _save_trivial_answers(first, out_dir / f"trial_{index}.trivial.safetensors")
        tensor_io.save_outputs(
            [x for x in inputs if isinstance(x, torch.Tensor)], out_dir / f"trial_{index}.inputs.safetensors"
        )
        record.update(ran=True, input_shapes=shapes, outputs=tensor_io.describe(first))
        trials.append(record)
    answer = {"ok": True, "trials": trials}
    if session.device.type == "cuda":
        props = torch.cuda.get_device_properties(session.device)
        answer["device_memory_bytes"] = int(props.total_memory)
        answer["device_name"] = props.name
    return answer
