"""CUPTI activity tracing and NVML clocks through kbench_native, on a real GPU. Skips without
one. Run on the GPU machine: PYTHONPATH=build-gpu/python:python pytest -s tests/gpu/python."""

import time

import pytest
import torch

kn = pytest.importorskip("kbench.worker.native").kn
from kbench.worker.tracing import Tracer  # noqa: E402
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no usable GPU: skipped")


@pytest.fixture(scope="module")
def tracing():
    """The engine's Tracer: CUPTI loaded and started, the legacy stream's id found by a probe."""
    tracer = Tracer(torch.device("cuda:0"))
    assert tracer.active, tracer.reason
    print("cupti library:", kn.cupti_library_path(), "notes:", kn.cupti_notes())
    yield tracer
    kn.cupti_stop()


def _traced(fn, caller, legacy_stream_id=None):
    torch.cuda.synchronize()
    kn.cupti_flush()
    start = kn.cupti_timestamp_ns()
    fn()
    torch.cuda.synchronize()
    end = kn.cupti_timestamp_ns()
    return kn.summarize_call(start, end, kn.cupti_stream_id(0, caller.cuda_stream), [], legacy_stream_id=legacy_stream_id)


def test_kernels_on_every_stream_are_seen(tracing):
    x = torch.randn(1 << 22, device="cuda")
    caller = torch.cuda.Stream()
    side = torch.cuda.Stream()

    def call():
        with torch.cuda.stream(caller):
            x.mul(2)
            with torch.cuda.stream(side):
                x.add(1)

    s = _traced(call, caller)
    print(s)
    assert s["kernel_count"] == 2
    assert s["off_caller_stream_work"]
    assert s["device_us"] > 0
    assert len(s["streams"]) == 2


def test_legacy_default_stream_is_named(tracing):
    x = torch.randn(1 << 20, device="cuda")
    caller = torch.cuda.Stream()

    def call():
        with torch.cuda.stream(torch.cuda.default_stream()):
            x.mul(3)

    s = _traced(call, caller, tracing.legacy_stream_id)
    print(s["legacy_default_stream_id"], s["streams"])
    assert s["off_caller_stream_work"]
    assert s["legacy_default_stream"]


def _timed_call(tracer, fn, caller):
    """One call as the timing loop times it: on `caller`, then an event recorded on it right
    after the call returns, waited for, and CUPTI's clock read (caller_done_ns)."""
    torch.cuda.synchronize()
    kn.cupti_flush()
    start = kn.cupti_timestamp_ns()
    with torch.cuda.stream(caller):
        fn()
    done_event = torch.cuda.Event()
    done_event.record(caller)
    done_event.synchronize()
    done = kn.cupti_timestamp_ns()
    torch.cuda.synchronize()
    return tracer.summarize([(start, kn.cupti_timestamp_ns(), done)], tracer.stream_id(caller), [])[0]


def test_work_on_torchs_default_stream_as_the_caller_is_on_the_callers_stream(tracing):
    """Torch's default stream is CUDA's legacy default stream, where `<<<grid, block>>>`
    launches go: with it as the caller, such work is the caller's own."""
    x = torch.randn(1 << 24, device="cuda")
    s = _timed_call(tracing, lambda: x.mul(2).add_(1), torch.cuda.default_stream())
    print(s["caller_stream_id"], s["streams"], s["unjoined_tail_us"])
    assert s["kernel_count"] == 2
    assert s["legacy_default_stream"]
    assert not s["off_caller_stream_work"]
    assert not s["unjoined_stream_work"]


def test_a_joined_side_stream_is_not_unjoined_work(tracing):
    """Fork to a side stream, record an event there, the caller's stream waits on it: the
    side stream's kernel is the call's last work, and still joined."""
    x = torch.randn(1 << 26, device="cuda")
    side = torch.cuda.Stream()
    caller = torch.cuda.default_stream()

    def call():
        side.wait_stream(caller)
        with torch.cuda.stream(side):
            x.mul(2)
        joined = torch.cuda.Event()
        joined.record(side)
        caller.wait_event(joined)

    s = _timed_call(tracing, call, caller)
    print(s["streams"], s["unjoined_tail_us"], s["device_us"])
    assert s["off_caller_stream_work"]
    assert not s["unjoined_stream_work"], s


def test_an_unjoined_side_stream_is_unjoined_work_timed_from_caller_done(tracing):
    """The ReLU of tests/e2e/candidates/cuda_unjoined_side_stream.py, sixteen times over 128 MiB
    (about 1 ms): far longer than the host's time from the side kernel's launch to the clock
    being read. That time is not a few µs under CUPTI: the e2e candidate's 200 µs side kernel
    outlived the caller by at most 43.5 µs (2026-12-01), and a single 65 µs ReLU here ended
    before caller_done_ns and was, rightly, not unjoined."""
    x = torch.randn(4096, 8192, device="cuda")
    side = torch.cuda.Stream()
    caller = torch.cuda.default_stream()

    def call():
        side.wait_stream(caller)
        with torch.cuda.stream(side):
            for _ in range(16):
                torch.clamp(x, min=0.0)

    s = _timed_call(tracing, call, caller)
    print(s["streams"], s["unjoined_tail_us"], s["device_us"])
    assert s["unjoined_stream_work"]
    assert 0 < s["unjoined_tail_us"] <= s["device_us"]


def test_copies_and_allocations_are_counted(tracing):
    host = torch.randn(1 << 20)
    caller = torch.cuda.current_stream()

    def call():
        host.to("cuda")
        torch.empty(256 << 20, dtype=torch.uint8, device="cuda").zero_()

    s = _traced(call, caller)
    print({k: s[k] for k in ("copy_count", "copy_bytes", "copies_by_kind", "set_count", "allocated_bytes", "allocation_count")})
    assert s["copy_bytes"] >= 4 << 20
    assert s["copies_by_kind"].get("HtoD", {}).get("count", 0) >= 1


def test_tracing_overhead_per_call(tracing):
    x = torch.randn(1024, device="cuda")
    caller = torch.cuda.current_stream()
    per_call = []
    for traced in (False, True):
        torch.cuda.synchronize()
        begin = time.perf_counter()
        for _ in range(200):
            if traced:
                _traced(lambda: x.add(1), caller)
            else:
                x.add(1)
                torch.cuda.synchronize()
        per_call.append((time.perf_counter() - begin) / 200 * 1e6)
    print(f"host µs per tiny call: untraced {per_call[0]:.1f}, traced+flushed {per_call[1]:.1f}")


def test_nvml_clocks():
    props = torch.cuda.get_device_properties(0)
    bus = f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    assert kn.nvml_load(bus) == "", kn.nvml_load(bus)
    reading, limits = kn.nvml_read(), kn.nvml_limits()
    print(bus, reading, limits, kn.nvml_energy_mj())
    assert reading["sm_mhz"] > 0
    assert reading["mem_mhz"] > 0
    assert limits["max_sm_mhz"] >= reading["sm_mhz"]
