"""Moving inputs, constructor arguments and outputs between processes as safetensors files.

Tensors travel in safetensors files; the structure around them (scalars, lists) travels as JSON
beside them, so a file written by one process can be read by another without pickle.

Every read of a tensor goes through the callables captured before any candidate code ran
(captured.py), never through an attribute looked up now: a candidate that replaced
`torch.Tensor.detach` or `.to` so that its work runs when an output is read gains nothing. The
files are written from private CPU copies, serialised by safetensors' own writer.
"""

import json
from pathlib import Path

import safetensors
from safetensors.torch import load_file, save_file

from . import captured
from .errors import PhaseError

_SCALARS = (bool, int, float)
_Tensor = captured.Tensor
_TensorSpec = getattr(safetensors, "TensorSpec", None)  # safetensors >= 0.8
_serialize_file = getattr(safetensors, "serialize_file", None)
_type = type


def _private_cpu_copy(t):
    """A contiguous CPU tensor of `t`'s values that nothing else references."""
    t = captured.detach(t)
    copy = captured.to(t, "cpu", copy=True)
    return captured.contiguous(copy)


def _write(tensors, path):
    """safetensors.torch.save_file for plain contiguous CPU tensors, without calling any method
    on them: the bytes are described by their captured data pointer and size."""
    if _TensorSpec is None or _serialize_file is None:
        save_file(tensors, path)  # older safetensors: still our private copies
        return
    specs = {}
    for name, t in tensors.items():
        count = captured.numel(t)
        specs[name] = _TensorSpec(
            dtype=str(captured.dtype(t)).split(".")[-1],
            shape=list(captured.shape(t)),
            data_ptr=captured.data_ptr(t) if count else 0,
            data_len=count * captured.element_size(t),
        )
    _serialize_file(specs, str(path), metadata=None)


def _encode(value, key, tensors, path):
    if isinstance(value, _Tensor):
        if _type(value) is not _Tensor and not isinstance(value, captured.Parameter):
            raise PhaseError("harness_error", f"{path}: value is a tensor subclass {_type(value).__name__}")
        tensors[key] = _private_cpu_copy(value)
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
    _write({f"output.{i}": _private_cpu_copy(t) for i, t in enumerate(tensors)}, str(path))
