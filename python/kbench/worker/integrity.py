"""Dynamic integrity checks in process C (docs/integrity.md, layer 3): what a candidate did while
its forward ran, or during a block of timed calls.

Importing this module, which loading.py does before any problem or candidate code runs:
- seals kbench_native (native.py) and captures torch's callables for the harness's own reads
  (captured.py, exported here as `captured`);
- snapshots the torch API the harness touches (api_watch.py);
- records the threads that exist (native_threads.py): the harness's and torch's own.

`ForwardWatch` wraps a trial's forward call; `BlockWatch` a block of timed calls. Each failure
is a PhaseError("incorrect") whose message starts "integrity check failed".
"""

import time

import torch

from . import captured, native, native_threads
from .api_watch import Snapshot
from .errors import PhaseError

# The originals of the timing and checking functions (kept for the timing loop; the snapshot
# watches these and the rest of the API).
ORIGINALS = {
    "time.perf_counter_ns": captured.perf_counter_ns,
    "time.perf_counter": captured.perf_counter,
    "time.time": time.time,
    "torch.cuda.synchronize": captured.cuda_synchronize,
    "torch.cuda.Event": captured.CudaEvent,
    "torch.cuda.Event.elapsed_time": captured.event_elapsed_time,
    "torch.cuda.Event.record": captured.event_record,
    "torch.allclose": torch.allclose,
    "torch.equal": captured.equal,
    "torch.Tensor.__eq__": captured.tensor_eq,
}

perf_counter_ns = captured.perf_counter_ns

# How long a thread seen running after forward returned may take to settle (OpenMP's workers
# spin for a few ms before they block) before it counts as left running.
SETTLE_S = 0.5

_snapshot = Snapshot()
_baseline = native_threads.tids()  # the harness's and torch's threads: never the candidate's
_Tensor = captured.Tensor
_type = type
_len = len


def before_foreign_code():
    """Called by loading.py right before a problem or candidate file runs: the harness's own
    modules, complete by now, join the snapshot."""
    _snapshot.add_harness_modules()


def warm_up(device):
    """Starts the threads torch creates lazily (the intra-op OpenMP pool on the first parallel
    CPU operation, which a candidate's own OpenMP shares: its libgomp is torch's, loaded under
    the same soname; CUDA's and cuBLAS's on the first kernel; the collective backend's on the
    first collective), before the candidate loads, and counts them with the harness's: a
    thread the candidate's first forward would otherwise create for torch is not the
    candidate's."""
    global _baseline
    with torch.no_grad():
        torch.ones(1 << 18).sum()  # above at::parallel_for's grain size: uses the pool
        if device.type == "cuda":
            x = torch.ones(256, 256, device=device)
            (x @ x).sum()
            captured.cuda_synchronize(device)
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            # NCCL and gloo start some of their threads at the first collective. Every rank's
            # process C gets here at the same point, before its candidate loads.
            one = torch.zeros(1, device=device)
            torch.distributed.all_reduce(one)
            if device.type == "cuda":
                captured.cuda_synchronize(device)
    _baseline = _baseline | native_threads.tids()


def refused_import(exc, where):
    """The PhaseError for an exception that an import of kbench_native refused caused (seen
    through its chain), or None."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, native.RefusedImport):
            return _fail(f"{where}: the candidate imports kbench_native, kbench's own module, which "
                         "controls the timing's tracing; a candidate cannot use it")
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def _fail(message):
    return PhaseError("incorrect", f"integrity check failed: {message}")


def _names(items, limit=5):
    shown = ", ".join(items[:limit])
    return shown + (f" and {_len(items) - limit} more" if _len(items) > limit else "")


def api_problems():
    """What the candidate replaced or reopened; [] when nothing."""
    found = _snapshot.changes()
    found += native.unsealed()
    return found


def _check_api(label):
    found = api_problems()
    if found:
        replaced = [f for f in found if " " not in f]  # dotted attribute names
        clauses = ([f"replaced {_names(replaced)}"] if replaced else []) + [f for f in found if " " in f]
        raise _fail(
            f"{label}: the candidate {'; '.join(clauses[:4])}; torch's API, the timing and checking "
            "functions and the harness's modules are the harness's"
        )
    if native.attempts:
        raise _fail(
            f"{label}: the candidate tried to import kbench_native ({native.attempts[0]}), kbench's "
            "own module, which controls the timing's tracing"
        )


class _Threads:
    """The threads at the start of a watched span, and the checks at its end."""

    def __init__(self):
        self.python = set(captured.enumerate_threads())
        self.native = native_threads.tids()
        self.main = captured.native_thread_id()

    def python_left(self):
        return [t for t in captured.enumerate_threads()
                if t not in self.python and captured.thread_is_alive(t)]

    def suspects(self):
        """Threads that may still be working: new ones running or in a timed wait, and ones the
        candidate started earlier (not torch's or the harness's) found running."""
        now = native_threads.tids()
        new = now - self.native - {self.main}
        old = (now & self.native) - _baseline - {self.main}
        found = [s for s in map(native_threads.state_of, new) if s.state in ("running", "timed")]
        found += [s for s in map(native_threads.state_of, old) if s.state == "running"]
        return found, new

    def settle(self, found, new):
        def still(state):
            return state.state in ("running", "timed") if state.tid in new else state.state == "running"

        return native_threads.settle([s.tid for s in found], SETTLE_S, still)


def _python_threads_message(label, alive, span):
    names = ", ".join(t.name for t in alive[:3])
    return (f"{label}: {span} left {_len(alive)} thread(s) running ({names}); work finished after "
            "forward returns is not timed and can change outputs after they were checked")


def _native_threads_message(label, left, span):
    after = "after forward returned" if span == "forward" else "after the calls returned"
    return (f"{label}: {span} left {_len(left)} native thread(s) running {after} "
            f"({'; '.join(s.describe() for s in left[:3])}); work finished after forward returns "
            "is not timed and can change outputs after they were checked")


class ForwardWatch:
    """Snapshots before a forward call and the checks after it."""

    def __init__(self, inputs):
        self.inputs = inputs
        # Byte copies, not values: NaN != NaN, and a bitwise equal input is what must hold.
        self.before = [_copy(t) if isinstance(t, _Tensor) else None for t in inputs]
        self.threads = _Threads()

    def check(self, outputs, label):
        """Raises PhaseError("incorrect") on the first violation; returns the outputs as they
        were when forward returned (copies taken first thing), which are what the harness
        keeps: work a thread does later does not reach them."""
        for i, out in enumerate(outputs):
            if _type(out) is not _Tensor:
                raise _fail(
                    f"{label}: output {i} is a {_type(out).__module__}.{_type(out).__qualname__}, not a "
                    "plain torch.Tensor (a tensor subclass can compute lazily, inside the check)"
                )
        frozen = [_copy(out) for out in outputs]
        # Threads first, while one forward left behind is most likely still there to be seen.
        found, new = self.threads.suspects()
        _check_api(label)
        for i, (now, before) in enumerate(zip(self.inputs, self.before)):
            if before is not None and not _same_bytes(now, before):
                raise _fail(
                    f"{label}: forward changed its input {i} in place; inputs belong to the harness "
                    "(a candidate that zeroes its inputs can make a later reference agree)"
                )
        input_storages = {_storage(t) for t in self.inputs if isinstance(t, _Tensor) and captured.numel(t)}
        for i, out in enumerate(outputs):
            if captured.numel(out) and _storage(out) == 0:
                raise _fail(f"{label}: output {i} has no storage")
            if captured.numel(out) and _storage(out) in input_storages:
                raise _fail(
                    f"{label}: output {i} shares its storage with an input; outputs need their own memory"
                )
        alive = self.threads.python_left()
        if alive:
            raise _fail(_python_threads_message(label, alive, "forward"))
        left = self.threads.settle(found, new) if found else []
        _synchronize(outputs)
        for i, (out, was) in enumerate(zip(outputs, frozen)):
            if not _same_bytes(out, was):
                seen = f" ({'; '.join(s.describe() for s in found[:3])})" if found else ""
                raise _fail(
                    f"{label}: output {i} changed after forward returned: a thread forward left "
                    f"running{seen} kept writing it; work finished after forward returns is not timed"
                )
        if left:
            raise _fail(_native_threads_message(label, left, "forward"))
        return frozen


class BlockWatch:
    """`BlockWatch()` at the start of a block of timed calls, `.check(label)` at its end: the
    API checks and the thread checks of ForwardWatch that need no inputs, and CUPTI's tracing
    still on if it was on at the start. Create it after the block's compile and warm-up
    (torch.compile starts worker threads of its own). `tracing` says whether the harness started
    CUPTI's tracing for this process; it is not read back from CUPTI here, since a candidate can
    stop the tracing in a warm-up call, before the block starts (GPU run, 2026-12-01)."""

    def __init__(self, tracing=None):
        self.threads = _Threads()
        self.tracing = bool(native.kn.cupti_started()) if tracing is None else bool(tracing)
        _snapshot.add_harness_modules()  # modules imported since the candidate loaded (measurement)

    def check(self, label):
        _check_api(label)
        alive = self.threads.python_left()
        if alive:
            raise _fail(_python_threads_message(label, alive, "the timed calls"))
        found, new = self.threads.suspects()
        left = self.threads.settle(found, new) if found else []
        if left:
            raise _fail(_native_threads_message(label, left, "the timed calls"))
        if self.tracing and not native.kn.cupti_started():
            raise _fail(
                f"{label}: CUPTI tracing was stopped during the timed calls; the tracing is the "
                "harness's"
            )


def _synchronize(tensors):
    """Waits for the GPUs the tensors live on: work launched after forward returned lands."""
    for device in {captured.device(t) for t in tensors}:
        if device.type == "cuda":
            captured.cuda_synchronize(device)


def _copy(t):
    return captured.clone(captured.detach(t))


def _storage(t):
    return captured.storage_data_ptr(captured.untyped_storage(t))


def _bytes_of(t):
    flat = captured.reshape(captured.contiguous(t), (-1,))
    return captured.view(flat, captured.uint8)


def _same_bytes(a, b):
    if captured.shape(a) != captured.shape(b) or captured.dtype(a) is not captured.dtype(b):
        return False
    if captured.numel(a) == 0:
        return True
    return bool(captured.equal(_bytes_of(a), _bytes_of(b)))
