"""Moving inputs, constructor arguments and outputs between processes as safetensors files.

Tensors travel in safetensors files (of any size: transfer.py says how the workers' file-size
limit is kept out of their way); the structure around them (scalars, lists) travels as JSON
beside them, so a file written by one process can be read by another without pickle.

Every read of a tensor goes through the callables captured before any candidate code ran
(captured.py), never through an attribute looked up now: a candidate that replaced
`torch.Tensor.detach` or `.to` so that its work runs when an output is read gains nothing. The
files are written a chunk at a time through a reusable buffer, in safetensors' layout
(transfer.py), and read back by safetensors' own reader.
"""

import json
from pathlib import Path

from safetensors.torch import load_file

from . import captured, transfer
from .errors import PhaseError
from .native import kn

_SCALARS = (bool, int, float)
_Tensor = captured.Tensor
_type = type
# Taken before any candidate code runs, as the tensor accessors are. Only the worker's embedded
# module has them (the request channel); the extension the Python tests load has not.
_interim_send = getattr(kn, "interim_send", None)
_interim_receive = getattr(kn, "interim_receive", None)
_dumps, _loads = json.dumps, json.loads


def _private_cpu_copy(t):
    """A contiguous CPU tensor of `t`'s values that nothing else references."""
    t = captured.detach(t)
    copy = captured.to(t, "cpu", copy=True)
    return captured.contiguous(copy)


# A tensor's bytes go to its file through one reusable buffer per process, a chunk at a time. A
# private copy of the whole tensor first (the way before) was a fresh allocation of its size,
# whose pages the kernel zeroes (a fifth of a large problem's check on the CPU, per perf), and
# from a GPU a copy into pageable memory; KernelBench's level-1 outputs reach 8 GiB.
STAGE_BYTES = 32 << 20
_stages = {}


def _stage(pinned):
    """The buffer chunks pass through: page-locked for a GPU's tensors (a faster copy from the
    device) where the CUDA host allocator gives one, else plain."""
    stage = _stages.get(pinned)
    if stage is None:
        try:
            stage = captured.empty(STAGE_BYTES, dtype=captured.uint8, pin_memory=pinned)
        except RuntimeError:
            if not pinned:
                raise
            stage = _stage(False)
        _stages[pinned] = stage
    return stage


def _byte_chunks(t):
    """A chunk source for transfer.write: yields `t`'s bytes as (pointer, count) pieces of the
    stage buffer, each copied in by torch's own copy (through the captured callables) when it is
    asked for. A tensor neither on the CPU nor on a CUDA device, or not contiguous, is first
    copied whole, as before."""
    t = captured.detach(t)
    kind = captured.device(t).type
    if kind not in ("cpu", "cuda") or not captured.is_contiguous(t):
        t, kind = _private_cpu_copy(t), "cpu"
    flat = captured.view(captured.flatten(t), captured.uint8)
    nbytes = captured.numel(flat)

    def chunks():
        stage = _stage(kind == "cuda")
        pointer = captured.data_ptr(stage)
        for start in range(0, nbytes, STAGE_BYTES):
            count = min(STAGE_BYTES, nbytes - start)
            captured.copy_(captured.narrow(stage, 0, 0, count), captured.narrow(flat, 0, start, count))
            yield pointer, count

    return chunks


def _grant(path, nbytes, what):
    """Asks the orchestrator for `path` at `nbytes` bytes (src/sandbox/transfer_files.hpp).
    False where there is no orchestrator (tests) or it grants this worker no files."""
    message = {"interim": True, "transfer_file": {"path": path, "bytes": nbytes, "what": what}}
    if _interim_send is None:
        return False
    _interim_send(_dumps(message))
    reply = _loads(_interim_receive())
    if reply.get("ok"):
        return True
    if reply.get("none_granted"):
        return False
    raise transfer.TransferError(str(reply.get("message", "the orchestrator refused the file without a reason")))


def _write(tensors, path):
    """The tensors `tensors` as a safetensors file at `path`, their bytes copied in a chunk at a
    time (_byte_chunks) without calling any method on them. The file is made by the
    orchestrator, so no tensor is bounded by the worker's file-size limit."""
    specs = {}
    for name, t in tensors.items():
        count = captured.numel(t)
        specs[name] = (
            captured.dtype(t),
            list(captured.shape(t)),
            _byte_chunks(t) if count else 0,
            count * captured.element_size(t),
        )
    try:
        transfer.write(specs, path, _grant)
    except (transfer.TransferError, OSError) as exc:
        raise PhaseError("harness_error", f"passing tensors between processes failed: {exc}") from None


def save_tensors(tensors, path):
    """A {name: tensor} mapping as a safetensors file."""
    _write(dict(tensors), str(path))


def _encode(value, key, tensors, path):
    if isinstance(value, _Tensor):
        if _type(value) is not _Tensor and not isinstance(value, captured.Parameter):
            raise PhaseError("harness_error", f"{path}: value is a tensor subclass {_type(value).__name__}")
        tensors[key] = value
        return {"type": "tensor", "key": key}
    if value is None or isinstance(value, _SCALARS + (str,)):
        return {"type": "value", "value": value}
    if isinstance(value, (list, tuple)):
        return {
            "type": type(value).__name__,
            "items": [_encode(v, f"{key}.{i}", tensors, path) for i, v in enumerate(value)],
        }
    raise PhaseError("harness_error", f"{path}: cannot pass a {type(value).__name__} between processes")


def _decode(spec, tensors, device):
    kind = spec["type"]
    if kind == "tensor":
        tensor = tensors[spec["key"]]
        return captured.to(tensor, device) if device is not None else tensor
    if kind == "value":
        return spec["value"]
    items = [_decode(item, tensors, device) for item in spec["items"]]
    return tuple(items) if kind == "tuple" else items


def save_values(values, stem: Path, label: str):
    """Writes `values` (a list of tensors / scalars / nested lists) as stem.json + stem.safetensors."""
    tensors = {}
    spec = [_encode(v, f"{label}.{i}", tensors, stem) for i, v in enumerate(values)]
    _write(tensors, str(stem) + ".safetensors")
    Path(str(stem) + ".json").write_text(json.dumps(spec))


def load_values(stem: Path, device):
    spec = json.loads(Path(str(stem) + ".json").read_text())
    tensors = load_file(str(stem) + ".safetensors")
    return [_decode(item, tensors, device) for item in spec]


def describe(values):
    """Shapes and dtypes for messages: [[18, 44] float32, 3]."""
    out = []
    for v in values:
        if isinstance(v, _Tensor):
            out.append({"shape": list(captured.shape(v)), "dtype": str(captured.dtype(v)).replace("torch.", "")})
        elif isinstance(v, (list, tuple)):
            out.append(describe(v))
        else:
            out.append(repr(v))
    return out


def flatten_outputs(output, who):
    """forward's result as a flat list of tensors; anything else is an error for `who`."""
    if isinstance(output, _Tensor):
        return [output]
    if isinstance(output, (list, tuple)):
        flat = []
        for item in output:
            flat.extend(flatten_outputs(item, who))
        return flat
    raise TypeError(f"{who}'s forward returned a {type(output).__name__}; expected a tensor or a tuple/list of tensors")


def save_outputs(tensors, path: Path):
    _write({f"output.{i}": t for i, t in enumerate(tensors)}, str(path))
