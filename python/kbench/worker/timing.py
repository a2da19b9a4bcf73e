"""First timing version: each side in its own process, CUDA events around each call after an
L2 flush and a device synchronise (a monotonic clock on the CPU). The measurement engine
(src/measure) replaces this with CUPTI activity tracing.

With several ranks every sample starts when the rank leaves a barrier and ends when its device
is idle; each rank reports its host stamps (CLOCK_MONOTONIC, shared by the processes of one
host) and the orchestrator takes the span from the first start to the last end."""

import time

import torch

from . import runtime


def time_calls(model, inputs, device, warmup, iterations, flush_l2):
    with torch.no_grad():
        for _ in range(warmup):
            model(*inputs)
        runtime.synchronize(device)
        flush = None
        if device.type == "cuda" and flush_l2:
            l2_bytes = torch.cuda.get_device_properties(device).L2_cache_size
            flush = torch.empty(max(int(l2_bytes), 1 << 20), dtype=torch.uint8, device=device)
        if runtime.world_size() > 1:
            answer = _time_ranks(model, inputs, device, iterations, flush)
        elif device.type == "cuda":
            answer = _time_events(model, inputs, device, iterations, flush)
        else:
            answer = _time_host(model, inputs, iterations)
    answer.update(ok=True, l2_flush=flush is not None)
    return answer


def _time_events(model, inputs, device, iterations, flush):
    from .tracing import Tracer

    tracer = Tracer(device)
    if tracer.active:
        # CUPTI's device time, every stream: events would add the launch gaps of a tiny call.
        windows = []
        for _ in range(iterations):
            if flush is not None:
                flush.zero_()
            torch.cuda.synchronize(device)
            start_ns = tracer.now_ns()
            model(*inputs)
            torch.cuda.synchronize(device)
            windows.append((start_ns, tracer.now_ns()))
        summaries = tracer.summarize(windows, 0xFFFFFFFF, [])
        return {"samples_us": [s["device_us"] for s in summaries], "method": "cupti"}
    samples = []
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    for _ in range(iterations):
        if flush is not None:
            flush.zero_()
        torch.cuda.synchronize(device)
        start.record()
        model(*inputs)
        end.record()
        torch.cuda.synchronize(device)
        samples.append(start.elapsed_time(end) * 1000.0)  # ms -> µs
    return {"samples_us": samples, "method": "cuda_event"}


def _time_host(model, inputs, iterations):
    samples = []
    for _ in range(iterations):
        begin = time.perf_counter_ns()
        model(*inputs)
        samples.append((time.perf_counter_ns() - begin) / 1000.0)
    return {"samples_us": samples, "method": "perf_counter"}


def _time_ranks(model, inputs, device, iterations, flush):
    starts, ends = [], []
    for _ in range(iterations):
        if flush is not None:
            flush.zero_()
        runtime.synchronize(device)
        runtime.barrier(device)
        runtime.synchronize(device)
        starts.append(time.clock_gettime_ns(time.CLOCK_MONOTONIC))
        model(*inputs)
        runtime.synchronize(device)
        ends.append(time.clock_gettime_ns(time.CLOCK_MONOTONIC))
    return {
        "samples_us": [(e - s) / 1000.0 for s, e in zip(starts, ends)],
        "starts_ns": starts,
        "ends_ns": ends,
        "method": "barrier_to_last_rank",
    }
