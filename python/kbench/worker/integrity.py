"""Dynamic integrity checks in process C (issue 5): what a candidate did while its forward ran.

The harness functions the worker relies on are captured when this module is imported, before
any candidate code runs, so a candidate that patches them is caught by identity, and the
worker's own timing keeps calling the originals."""

import threading
import time

import torch

from .errors import PhaseError

ORIGINALS = {
    "time.perf_counter_ns": time.perf_counter_ns,
    "time.perf_counter": time.perf_counter,
    "time.time": time.time,
    "torch.cuda.synchronize": torch.cuda.synchronize,
    "torch.cuda.Event": torch.cuda.Event,
    "torch.cuda.Event.elapsed_time": torch.cuda.Event.elapsed_time,
    "torch.cuda.Event.record": torch.cuda.Event.record,
    "torch.allclose": torch.allclose,
    "torch.equal": torch.equal,
    "torch.Tensor.__eq__": torch.Tensor.__eq__,
}

perf_counter_ns = time.perf_counter_ns


def _current(name):
    target = {"time": time, "torch": torch}[name.split(".")[0]]
    for part in name.split(".")[1:]:
        target = getattr(target, part)
    return target


def _fail(message):
    return PhaseError("incorrect", f"integrity check failed: {message}")


class ForwardWatch:
    """Snapshots before a forward call and the checks after it."""

    def __init__(self, inputs):
        self.inputs = inputs
        # Byte copies, not values: NaN != NaN, and a bitwise equal input is what must hold.
        self.before = [
            t.detach().clone() if isinstance(t, torch.Tensor) else None for t in inputs
        ]
        self.threads = set(threading.enumerate())

    def check(self, outputs, label):
        for i, (now, before) in enumerate(zip(self.inputs, self.before)):
            if before is not None and not _same_bytes(now, before):
                raise _fail(
                    f"{label}: forward changed its input {i} in place; inputs belong to the harness "
                    "(a candidate that zeroes its inputs can make a later reference agree)"
                )
        input_storages = {
            t.untyped_storage().data_ptr() for t in self.inputs if isinstance(t, torch.Tensor) and t.numel()
        }
        for i, out in enumerate(outputs):
            if type(out) is not torch.Tensor:
                raise _fail(
                    f"{label}: output {i} is a {type(out).__module__}.{type(out).__qualname__}, not a "
                    "plain torch.Tensor (a tensor subclass can compute lazily, inside the check)"
                )
            if out.numel() and out.untyped_storage().data_ptr() == 0:
                raise _fail(f"{label}: output {i} has no storage")
            if out.numel() and out.untyped_storage().data_ptr() in input_storages:
                raise _fail(
                    f"{label}: output {i} shares its storage with an input; outputs need their own memory"
                )
        alive = [t for t in threading.enumerate() if t not in self.threads and t.is_alive()]
        if alive:
            names = ", ".join(t.name for t in alive[:3])
            raise _fail(
                f"{label}: forward left {len(alive)} thread(s) running ({names}); work finished after "
                "forward returns is not timed and can change outputs after they were checked"
            )
        patched = [name for name, original in ORIGINALS.items() if _current(name) is not original]
        if patched:
            raise _fail(
                f"{label}: the candidate replaced {', '.join(patched)}; timing and checking functions "
                "are the harness's"
            )


def _same_bytes(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.numel() == 0:
        return True
    return bool((a.contiguous().view(torch.uint8) == b.contiguous().view(torch.uint8)).all())
