"""Moving inputs, constructor arguments and outputs between processes as safetensors files.

Tensors travel in safetensors files; the structure around them (scalars, lists) travels as JSON
beside them, so a file written by one process can be read by another without pickle.
"""

import json
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from .errors import PhaseError

_SCALARS = (bool, int, float)


def _encode(value, key, tensors, path):
    if isinstance(value, torch.Tensor):
        if type(value) is not torch.Tensor and not isinstance(value, torch.nn.Parameter):
            raise PhaseError("harness_error", f"{path}: value is a tensor subclass {type(value).__name__}")
        tensors[key] = value.detach().to("cpu").contiguous().clone()
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
        return tensor.to(device) if device is not None else tensor
    if kind == "value":
        return spec["value"]
    items = [_decode(item, tensors, device) for item in spec["items"]]
    return tuple(items) if kind == "tuple" else items


def save_values(values, stem: Path, label: str):
    """Writes `values` (a list of tensors / scalars / nested lists) as stem.json + stem.safetensors."""
    tensors = {}
    spec = [_encode(v, f"{label}.{i}", tensors, stem) for i, v in enumerate(values)]
    save_file(tensors, str(stem) + ".safetensors")
    Path(str(stem) + ".json").write_text(json.dumps(spec))


def load_values(stem: Path, device):
    spec = json.loads(Path(str(stem) + ".json").read_text())
    tensors = load_file(str(stem) + ".safetensors")
    return [_decode(item, tensors, device) for item in spec]


def describe(values):
    """Shapes and dtypes for messages: [[18, 44] float32, 3]."""
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            out.append({"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")})
        elif isinstance(v, (list, tuple)):
            out.append(describe(v))
        else:
            out.append(repr(v))
    return out


def flatten_outputs(output, who):
    """forward's result as a flat list of tensors; anything else is an error for `who`."""
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, (list, tuple)):
        flat = []
        for item in output:
            flat.extend(flatten_outputs(item, who))
        return flat
    raise TypeError(f"{who}'s forward returned a {type(output).__name__}; expected a tensor or a tuple/list of tensors")


def save_outputs(tensors, path: Path):
    save_file(
        {f"output.{i}": t.detach().to("cpu").contiguous().clone() for i, t in enumerate(tensors)},
        str(path),
    )
