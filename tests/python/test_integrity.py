"""The dynamic integrity checks of process C (python/kbench/worker/integrity.py, docs/integrity.md
layer 3): a replaced torch attribute, whatever replaced it, a kernel registered over an ATen
operator, a mode left active, kbench_native reopened, native threads left running, outputs that
change after forward returned; and the harness's reads through captured callables.

Each check must also stay quiet on what honest candidates do (torch's OpenMP pool, idle
threads), and cost little: the costs are printed (pytest -s) and bounded generously."""

import _thread
import ctypes
import importlib
import importlib.util
import time
from pathlib import Path

import pytest
import torch

from kbench.worker import captured, integrity, native, native_threads, tensor_io
from kbench.worker.errors import PhaseError

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_attempts(monkeypatch):
    """Each test starts with no recorded import attempt, whatever an earlier one did."""
    monkeypatch.setattr(native, "attempts", [])


def _forward(fn, inputs=()):
    watch = integrity.ForwardWatch(list(inputs))
    outputs = fn()
    return watch.check(outputs, "trial 0")


def _fails(fn, *needles):
    with pytest.raises(PhaseError) as info:
        fn()
    assert info.value.status == "incorrect"
    for needle in needles:
        assert needle in info.value.message, info.value.message
    return info.value.message


# ---------------------------------------------------------------- the API snapshot


def test_nothing_is_reported_before_anything_is_patched():
    assert integrity.api_problems() == []


def test_a_tensor_method_replaced_from_python_is_named(monkeypatch):
    original = torch.Tensor.detach
    monkeypatch.setattr(torch.Tensor, "detach", lambda self: original(self))
    assert integrity.api_problems() == ["torch.Tensor.detach"]
    _fails(lambda: _forward(lambda: [torch.ones(3)]), "the candidate replaced torch.Tensor.detach")


def test_an_entry_that_shadows_an_inherited_method_counts_even_if_it_is_the_same_object(monkeypatch):
    # clone lives on TensorBase: putting the very same descriptor on Tensor still changes what
    # Tensor.clone resolves to first, which is what a replacement through a subclass looks like.
    monkeypatch.setattr(torch.Tensor, "clone", torch._C.TensorBase.clone, raising=False)
    assert integrity.api_problems() == ["torch.Tensor.clone"]


def test_torch_functions_cuda_functions_timers_and_events_are_watched(monkeypatch):
    for owner, name in ((torch, "equal"), (torch.cuda, "synchronize"), (torch._C, "_cuda_synchronize"),
                        (time, "perf_counter_ns"), (torch.cuda.Event, "elapsed_time")):
        monkeypatch.setattr(owner, name, lambda *a, **k: None)
    found = integrity.api_problems()
    for name in ("torch.equal", "torch.cuda.synchronize", "torch._C._cuda_synchronize",
                 "time.perf_counter_ns", "torch.cuda.streams.Event.elapsed_time"):
        assert name in found, found


def test_a_replaced_builtin_is_seen(monkeypatch):
    import builtins

    monkeypatch.setattr(builtins, "isinstance", lambda *a: True)
    found = integrity.api_problems()
    monkeypatch.undo()
    assert found == ["builtins.isinstance"]


def test_a_method_swapped_in_place_from_cpp_is_seen_by_its_fingerprint():
    """What C++ can do that setattr cannot show: overwrite the function pointer in the method
    table behind a descriptor, which stays the same object. Done here with ctypes on a harmless
    method, and undone."""
    descriptor = torch._C.TensorBase.__dict__["is_neg"]
    donor = torch._C.TensorBase.__dict__["is_conj"]
    # PyMethodDescrObject: PyObject_HEAD, d_type, d_name, d_qualname, then d_method (a PyMethodDef
    # whose second field is ml_meth).
    offset = 2 * ctypes.sizeof(ctypes.c_void_p) + 3 * ctypes.sizeof(ctypes.c_void_p)
    method_def = ctypes.c_void_p.from_address(id(descriptor) + offset).value
    donor_def = ctypes.c_void_p.from_address(id(donor) + offset).value
    ml_meth = ctypes.c_void_p.from_address(method_def + ctypes.sizeof(ctypes.c_void_p))
    donor_meth = ctypes.c_void_p.from_address(donor_def + ctypes.sizeof(ctypes.c_void_p)).value
    saved = ml_meth.value
    ml_meth.value = donor_meth
    try:
        found = integrity.api_problems()
    finally:
        ml_meth.value = saved
    assert any("swapped the implementation of" in f and "is_neg" in f for f in found), found
    assert integrity.api_problems() == []


def test_a_kernel_registered_over_an_aten_operator_is_seen():
    library = torch.library.Library("aten", "IMPL")
    library.impl("clone", lambda x, memory_format=None: torch.zeros_like(x), "CPU")
    try:
        found = integrity.api_problems()
    finally:
        library._destroy()
    assert found == ["registered a kernel over aten::clone, one of torch's own operators"]
    assert integrity.api_problems() == []


def test_a_torch_function_mode_left_active_is_seen():
    class Spy(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    mode = Spy()
    mode.__enter__()
    try:
        found = integrity.api_problems()
    finally:
        mode.__exit__(None, None, None)
    assert found == ["left a torch function mode active (torch.overrides.TorchFunctionMode)"]


def test_the_check_costs_a_few_milliseconds():
    integrity.before_foreign_code()
    samples = []
    for _ in range(20):
        start = time.perf_counter()
        integrity.api_problems()
        samples.append(time.perf_counter() - start)
    samples.sort()
    print(f"API check: min {samples[0] * 1e3:.2f} ms, median {samples[10] * 1e3:.2f} ms over "
          f"{len(integrity._snapshot.objects)} objects")
    assert samples[0] * 1e3 < 10  # the minimum: a loaded machine stretches the others


# ---------------------------------------------------------------- kbench_native sealed


def test_kbench_native_cannot_be_imported_by_name():
    with pytest.raises(ImportError, match="kbench's own module"):
        import kbench_native  # noqa: F401
    with pytest.raises(ImportError):
        importlib.import_module("kbench_native")
    assert native.attempts == ["import", "import"]


def test_kbench_native_cannot_be_rebuilt_from_its_file():
    built = sorted((REPO / "build" / "python").glob("kbench_native*.so"))
    if not built:
        pytest.skip("the kbench_native extension is not built in build/python")
    spec = importlib.util.spec_from_file_location("kbench_native", built[0])
    with pytest.raises(ImportError, match="_imp.create_dynamic"):
        importlib.util.module_from_spec(spec)


def test_an_attempt_the_candidate_swallowed_is_still_incorrect():
    try:
        import kbench_native  # noqa: F401
    except ImportError:
        pass
    _fails(lambda: _forward(lambda: [torch.ones(2)]), "tried to import kbench_native")


def test_reopening_the_name_is_seen():
    import sys

    sys.modules["kbench_native"] = native.kn
    try:
        found = integrity.api_problems()
    finally:
        del sys.modules["kbench_native"]
    assert any("put kbench_native back into sys.modules" in f for f in found), found


def test_the_harness_keeps_its_private_reference():
    assert callable(native.kn.api_fingerprints) and callable(native.kn.cupti_started)


# ---------------------------------------------------------------- native threads


def _native_thread(fn, *args):
    """A thread threading.enumerate() does not list, like one a C++ extension starts."""
    done = _thread.allocate_lock()
    done.acquire()

    def run():
        try:
            fn(*args)
        finally:
            done.release()

    _thread.start_new_thread(run, ())
    return done


def test_a_native_thread_left_sleeping_is_reported():
    done = None

    def forward():
        nonlocal done
        done = _native_thread(time.sleep, 1.0)
        return [torch.ones(4)]

    started = time.perf_counter()
    _fails(lambda: _forward(forward), "forward left 1 native thread(s) running after forward returned",
           "waiting with a timeout")
    assert time.perf_counter() - started >= integrity.SETTLE_S * 0.9
    done.acquire()


def test_an_output_a_native_thread_finishes_later_is_reported_and_not_kept():
    out = torch.zeros(1000)
    done = None

    def finish_later():
        time.sleep(0.02)
        out.fill_(1.0)

    def forward():
        nonlocal done
        done = _native_thread(finish_later)
        return [out]

    _fails(lambda: _forward(forward), "output 0 changed after forward returned")
    done.acquire()


def test_the_outputs_kept_are_those_forward_returned():
    out = torch.arange(5.0)
    kept = _forward(lambda: [out])
    out.fill_(7.0)
    assert torch.equal(kept[0], torch.arange(5.0))


def test_an_idle_native_thread_is_not_reported():
    gate = _thread.allocate_lock()
    gate.acquire()
    done = None

    def forward():
        nonlocal done
        done = _native_thread(gate.acquire)  # blocks without a timeout, as a pool's worker waits
        return [torch.ones(3)]

    _forward(forward)
    gate.release()
    done.acquire()


def test_a_thread_that_spins_a_while_and_then_waits_settles():
    gate = _thread.allocate_lock()
    gate.acquire()
    done = None

    def spin_then_wait():
        end = time.perf_counter() + 0.05
        while time.perf_counter() < end:
            pass
        gate.acquire()

    def forward():
        nonlocal done
        done = _native_thread(spin_then_wait)
        return [torch.ones(3)]

    _forward(forward)
    gate.release()
    done.acquire()


def test_torchs_openmp_pool_after_warm_up_is_not_the_candidates():
    integrity.warm_up(torch.device("cpu"))
    x = torch.randn(1 << 20)
    start = time.perf_counter()
    for _ in range(3):
        _forward(lambda: [x.exp().sum(dim=0, keepdim=True)], [x])
    print(f"ForwardWatch with torch's pool: {(time.perf_counter() - start) / 3 * 1e3:.2f} ms a trial")


def test_thread_states_are_read_from_proc():
    me = captured.native_thread_id()
    assert me in native_threads.tids()
    gate = _thread.allocate_lock()
    gate.acquire()
    done = _native_thread(gate.acquire)
    time.sleep(0.05)
    states = {s.tid: s.state for s in map(native_threads.state_of, native_threads.tids())}
    gate.release()
    done.acquire()
    assert "idle" in states.values()
    assert native_threads.state_of(2**22 + 12345).state == "gone"


# ---------------------------------------------------------------- BlockWatch


def test_a_clean_block_passes_and_costs_little():
    samples = []
    for _ in range(10):
        start = time.perf_counter()
        integrity.BlockWatch().check("block 0")
        samples.append(time.perf_counter() - start)
    samples.sort()
    print(f"BlockWatch: min {samples[0] * 1e3:.2f} ms, median {samples[5] * 1e3:.2f} ms a block")
    assert samples[0] * 1e3 < 10


def test_a_block_with_a_native_thread_left_running_fails():
    watch = integrity.BlockWatch()
    done = _native_thread(time.sleep, 1.0)
    _fails(lambda: watch.check("block 3"), "block 3: the timed calls left 1 native thread(s) running after the calls returned")
    done.acquire()


def test_a_block_whose_tracing_was_stopped_before_it_began_fails():
    """The harness started CUPTI's tracing; a warm-up call stopped it before the block's watch
    was made (exploit 36 on the H200): the watch trusts the harness's word, not CUPTI's state.
    On the CPU CUPTI never runs, which is the same state as stopped."""
    assert not integrity.native.kn.cupti_started()
    _fails(lambda: integrity.BlockWatch(tracing=True).check("timed block 0"),
           "timed block 0: CUPTI tracing was stopped during the timed calls")
    integrity.BlockWatch(tracing=False).check("timed block 0")


def test_a_block_with_a_patched_timer_fails(monkeypatch):
    watch = integrity.BlockWatch()
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    _fails(lambda: watch.check("block 1"), "replaced torch.cuda.synchronize")


# ---------------------------------------------------------------- reads through captured callables


def test_outputs_are_saved_and_described_whatever_tensor_methods_now_do(monkeypatch, tmp_path):
    def trap(*args, **kwargs):
        raise AssertionError("the harness called a tensor attribute a candidate can replace")

    for name in ("detach", "to", "cpu", "contiguous", "clone", "view", "numel", "data_ptr",
                 "untyped_storage", "element_size", "size", "is_contiguous", "numpy", "flatten",
                 "narrow", "copy_"):
        monkeypatch.setattr(torch.Tensor, name, trap)
    monkeypatch.setattr(torch.Tensor, "shape", property(trap))
    monkeypatch.setattr(torch.Tensor, "dtype", property(trap))
    outputs = [torch.arange(6.0).reshape(2, 3), torch.tensor(True), torch.empty(0, 2)]
    flat = tensor_io.flatten_outputs((outputs[0], [outputs[1], outputs[2]]), "ModelNew")
    tensor_io.save_outputs(flat, tmp_path / "out.safetensors")
    described = tensor_io.describe(flat)
    monkeypatch.undo()
    from safetensors.torch import load_file

    back = load_file(str(tmp_path / "out.safetensors"))
    assert torch.equal(back["output.0"], torch.arange(6.0).reshape(2, 3))
    assert back["output.1"].item() is True and back["output.2"].shape == (0, 2)
    assert described == [{"shape": [2, 3], "dtype": "float32"}, {"shape": [], "dtype": "bool"},
                         {"shape": [0, 2], "dtype": "float32"}]


def test_captured_names_the_timing_loop_uses():
    t = torch.arange(12.0).reshape(3, 4)
    assert captured.numel(t) == 12 and captured.dtype(t) is torch.float32
    assert tuple(captured.shape(t)) == (3, 4)
    assert torch.equal(captured.take(t, torch.tensor([0, 11])), torch.tensor([0.0, 11.0]))
    assert tuple(captured.shape(captured.flatten(t))) == (12,)
    assert captured.device(captured.cpu(t)).type == "cpu"
    assert captured.equal(captured.reshape(t, (4, 3)), t.reshape(4, 3))


# ---------------------------------------------------------------- last: torch.compile leaves worker threads


def test_torch_compile_and_dynamo_change_nothing_the_check_watches():
    # Last in this file: inductor's compile workers stay behind in this process.
    import torch._dynamo  # wraps torch.manual_seed: accepted as torch's own wrapper

    compiled = torch.compile(lambda x: (x.relu() + 1).clone())
    compiled(torch.randn(16))
    assert integrity.api_problems() == []
