"""CUPTI activity tracing in the worker, through kbench_native (C++, libcupti loaded at run time).

Every timed call is bracketed by CUPTI timestamps; records are flushed once per block of calls
(a forced flush costs about 0.8 ms on an H200, too much per call) and each call's window is
summarised in C++: device time from the first to the last GPU activity on any stream, kernels
by name, copies, sets, allocations, the streams used, and whether work on another stream was
still running once the caller's stream was done (an event recorded on it after the call
returned: `caller_done_ns`), which event timing on the caller's stream would miss."""

import time

import torch

from . import runtime
from .native import kn


class Tracer:
    def __init__(self, device: torch.device):
        self.reason = ""
        self.legacy_stream_id = None
        self.overhead_us = None
        if device.type != "cuda":
            self.reason = "unsupported: CUPTI traces GPU work, and this evaluation runs on the CPU"
            return
        reason = kn.cupti_load() or kn.cupti_start()
        if reason:
            self.reason = reason if reason.startswith("unsupported") else "unsupported: " + reason
            return
        self.legacy_stream_id = self._legacy_stream_id(device)

    @property
    def active(self) -> bool:
        return not self.reason

    def stream_id(self, stream) -> int:
        """CUPTI's id of a torch stream. Torch's default stream (handle 0) is CUDA's legacy
        default stream, which cuptiGetStreamIdEx does not resolve: the probe's id stands in."""
        if stream.cuda_stream == 0 and self.legacy_stream_id is not None:
            return self.legacy_stream_id
        return kn.cupti_stream_id(0, stream.cuda_stream)

    @staticmethod
    def _legacy_stream_id(device):
        """The id CUPTI gives torch's default stream, which is CUDA's legacy default stream: a
        tiny kernel there shows it (cuptiGetStreamIdEx does not resolve the legacy handle)."""
        probe = torch.zeros(1, device=device)
        runtime.synchronize(device)
        kn.cupti_flush()
        start = kn.cupti_timestamp_ns()
        with torch.cuda.stream(torch.cuda.default_stream(device)):
            probe.add_(1)
        runtime.synchronize(device)
        summary = kn.summarize_call(start, kn.cupti_timestamp_ns(), 0xFFFFFFFF, [], flush=True)
        streams = summary.get("streams") or []
        return streams[0] if len(streams) == 1 else None

    def measure_overhead(self, device, calls=50):
        """Host µs that tracing adds to a call (its records, not the flush): a tiny kernel timed
        with the activity kinds on and off."""
        if not self.active:
            return None
        x = torch.zeros(1, device=device)
        medians = []
        for traced in (True, False):
            if not traced:
                kn.cupti_stop()
            samples = []
            for _ in range(calls):
                runtime.synchronize(device)
                begin = time.perf_counter_ns()
                x.add_(1)
                runtime.synchronize(device)
                samples.append((time.perf_counter_ns() - begin) / 1000.0)
            medians.append(sorted(samples)[len(samples) // 2])
        kn.cupti_start()
        runtime.synchronize(device)
        kn.cupti_flush()
        self.overhead_us = max(0.0, medians[0] - medians[1])
        return self.overhead_us

    def summarize(self, windows, caller_stream_id, own_kernels):
        """One summary per window, after one flush. A window is (start_ns, end_ns) or
        (start_ns, end_ns, caller_done_ns): caller_done_ns is now_ns() read once an event
        recorded on the caller's stream right after the call returned has completed; without
        it, work off the caller's stream is judged against the caller stream's last work,
        which cannot see a join."""
        kn.cupti_flush()
        summaries = []
        for window in windows:
            if len(window) not in (2, 3):
                raise ValueError(f"Tracer.summarize: a window is (start_ns, end_ns[, caller_done_ns]), not {window!r}")
            done = window[2] if len(window) == 3 else None
            summaries.append(kn.summarize_call(window[0], window[1], caller_stream_id, own_kernels, flush=False,
                                               legacy_stream_id=self.legacy_stream_id, caller_done_ns=done))
        return summaries

    @staticmethod
    def now_ns() -> int:
        return kn.cupti_timestamp_ns()


def call_facts(summary):
    """What the orchestrator reads of one call's CUPTI summary (src/pipeline/block_answer.cpp):
    launches, kernel time, copies, sets, allocations, the streams used (a fact: a joined side
    stream is ordinary code), and work left running on another stream once the caller's stream
    was done (the off_stream_work flag)."""
    return {
        "kernel_count": summary["kernel_count"],
        "kernels_by_name": {name: v["count"] for name, v in summary["kernels_by_name"].items()},
        "kernel_us": summary["kernel_us"],
        "own_kernel_us": summary["own_kernel_us"],
        "copy_count": summary["copy_count"],
        "set_count": summary["set_count"],
        "allocated_bytes": summary["allocated_bytes"],
        "streams": len(summary.get("streams") or []),
        "off_caller_stream": summary["off_caller_stream_work"],
        "unjoined_stream_work": summary["unjoined_stream_work"],
        "unjoined_tail_us": summary["unjoined_tail_us"],
    }


class Clocks:
    """The SM and memory clocks around each block (NVML): blocks taken while the GPU throttled
    are dropped, and the clocks and NVML's reasons for lowering them explain a change of speed."""

    def __init__(self, device: torch.device):
        self.reason = ""
        self.default_sm_mhz = None
        if device.type != "cuda":
            self.reason = "unsupported: no GPU clock on the CPU"
            return
        props = torch.cuda.get_device_properties(device)
        bus = f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
        self.reason = kn.nvml_load(bus)
        if not self.reason:
            limits = kn.nvml_limits()
            self.default_sm_mhz = limits.get("default_sm_mhz") or limits.get("max_sm_mhz")

    def read(self):
        """{'sm_mhz', 'mem_mhz', 'reasons'}, or None without NVML. 'gpu_idle' is left out of
        the reasons: between blocks the GPU is idle by design."""
        if self.reason:
            return None
        reading = kn.nvml_read()
        if reading.get("error"):
            return None
        reasons = [r for r in reading.get("throttle_reason_names", []) if r != "gpu_idle"]
        return {"sm_mhz": reading.get("sm_mhz"), "mem_mhz": reading.get("mem_mhz"), "reasons": reasons}
