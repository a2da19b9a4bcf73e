"""First timing version: each side in its own process, CUDA events around each call after an
L2 flush and a device synchronise (a monotonic clock on the CPU). The measurement engine
(src/measure) replaces this with CUPTI activity tracing."""

import time

import torch

from . import runtime


def time_calls(model, inputs, device, warmup, iterations, flush_l2):
    samples = []
    with torch.no_grad():
        for _ in range(warmup):
            model(*inputs)
        runtime.synchronize(device)
        if device.type == "cuda":
            l2_bytes = torch.cuda.get_device_properties(device).L2_cache_size
            flush = torch.empty(max(int(l2_bytes), 1 << 20), dtype=torch.uint8, device=device)
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            for _ in range(iterations):
                if flush_l2:
                    flush.zero_()
                torch.cuda.synchronize(device)
                start.record()
                model(*inputs)
                end.record()
                torch.cuda.synchronize(device)
                samples.append(start.elapsed_time(end) * 1000.0)  # ms -> µs
            method = "cuda_event"
        else:
            for _ in range(iterations):
                begin = time.perf_counter_ns()
                model(*inputs)
                samples.append((time.perf_counter_ns() - begin) / 1000.0)
            method = "perf_counter"
    return {"ok": True, "samples_us": samples, "method": method, "l2_flush": flush_l2 and device.type == "cuda"}
