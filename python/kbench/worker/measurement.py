"""The worker's half of the measurement engine (docs/architecture.md, "The measurement
contract"): blocks of timed calls that the orchestrator alternates between processes R and C.

Per call: fresh inputs (the next set of the pool process R wrote), an L2-sized buffer zeroed and
then a clean buffer of twice the L2's size read, on the timing stream outside the timed span
(unless warm; the read evicts the dirty lines the zeroing leaves, whose write-back otherwise
lands in the timed call: docs/timing-fidelity.md), a device synchronise, then the call on a
dedicated stream, then a device synchronise. `host_us` is that span on the host clock;
`device_us` is CUPTI's first-to-last GPU activity of the call on every stream. Without CUPTI
on a GPU, `device_us` falls back to CUDA events on the timing stream (and says so); on the CPU
only `host_us` exists."""

import time
from pathlib import Path

import torch

from . import runtime, tensor_io
from .integrity import perf_counter_ns
from .own_kernels import own_kernel_names
from .tracing import Clocks, Tracer, call_facts

import kbench_native as kn

class TimingSession:
    def __init__(self, session, request):
        self.session = session
        self.device = session.device
        self.warm = bool(request.get("warm", False))
        self.pool = [
            tensor_io.load_values(Path(session.inputs_dir) / f"pool_{k}.inputs", self.device)
            for k in range(int(request.get("pool_size", 0)))
        ] or [session.kept[1]]
        self.next_input = 0
        self.cuda = self.device.type == "cuda"
        self.tracer = Tracer(self.device)
        self.clocks = Clocks(self.device)
        self.own = own_kernel_names(getattr(session, "path", None))
        self.compiled = None
        self.compile_s = None
        if self.cuda:
            self.stream = torch.cuda.Stream(device=self.device)
            l2 = int(torch.cuda.get_device_properties(self.device).L2_cache_size)
            self.flush = torch.empty(max(l2, 1 << 20), dtype=torch.uint8, device=self.device)
            self.flush_read = torch.ones(max(2 * l2, 1 << 21) // 4, dtype=torch.float32, device=self.device)
            self.flush_sum = torch.empty((), dtype=torch.float32, device=self.device)
            self.tracer.measure_overhead(self.device)
            self.caller_id = self.tracer.stream_id(self.stream) if self.tracer.active else None

    def describe(self):
        return {
            "tracing": "cupti" if self.tracer.active else self.tracer.reason,
            "tracing_overhead_us": self.tracer.overhead_us,
            "legacy_stream_id": self.tracer.legacy_stream_id,
            "clock": "nvml" if not self.clocks.reason else self.clocks.reason,
            "default_sm_mhz": self.clocks.default_sm_mhz,
            "pool_size": len(self.pool),
            "own_kernels": self.own,
            "l2_flush_bytes": int(self.flush.numel()) if self.cuda and not self.warm else 0,
        }

    def model_for(self, target):
        model = self.session.kept[0]
        if target != "compiled":
            return model
        if self.compiled is None:
            start = time.perf_counter()
            self.compiled = torch.compile(model)  # inductor, default mode
            with torch.no_grad():
                for _ in range(3):
                    self.compiled(*self.pool[0])
            runtime.synchronize(self.device)
            self.compile_s = time.perf_counter() - start
        return self.compiled

    def _call(self, model, inputs):
        if self.cuda:
            with torch.cuda.stream(self.stream):
                return model(*inputs)
        return model(*inputs)

    def block(self, request):
        model = self.model_for(request.get("target", "eager"))
        calls = int(request.get("calls", 10))
        keep = set(request.get("keep_outputs", []))
        answer = {"ok": True, "host_us": [], "pool_indices": []}
        with torch.no_grad():
            for _ in range(int(request.get("warmup", 0))):
                self._call(model, self.pool[0])
            runtime.synchronize(self.device)
            if request.get("memory"):
                answer["memory"] = self._memory(model)
            clock_before = self.clocks.read()
            windows, events, kept = [], [], {}
            for i in range(calls):
                k = self.next_input % len(self.pool)
                self.next_input += 1
                inputs = self.pool[k]
                if self.cuda and not self.warm:
                    with torch.cuda.stream(self.stream):
                        self.flush.zero_()
                        torch.sum(self.flush_read, dim=0, out=self.flush_sum)
                runtime.synchronize(self.device)
                traced = self.cuda and self.tracer.active
                start_ns = self.tracer.now_ns() if traced else 0
                if self.cuda and not traced:
                    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    begin.record(self.stream)
                host_start = perf_counter_ns()
                output = self._call(model, inputs)
                if self.cuda and not traced:
                    end.record(self.stream)
                runtime.synchronize(self.device)
                answer["host_us"].append((perf_counter_ns() - host_start) / 1000.0)
                if traced:
                    windows.append((start_ns, self.tracer.now_ns()))
                elif self.cuda:
                    events.append((begin, end))
                answer["pool_indices"].append(k)
                if i in keep:
                    kept[i] = (k, output)
            clock_after = self.clocks.read()
        readings = [c for c in (clock_before, clock_after) if c]
        answer["sm_mhz"] = [c["sm_mhz"] for c in readings]
        answer["mem_mhz"] = [c["mem_mhz"] for c in readings]
        answer["clock_reasons"] = sorted({r for c in readings for r in c["reasons"]})
        if windows:
            summaries = self.tracer.summarize(windows, self.caller_id, self.own)
            answer["device_us"] = [s["device_us"] for s in summaries]
            answer["method"] = "cupti"
            answer["calls"] = [call_facts(s) for s in summaries]
        elif events:
            answer["device_us"] = [b.elapsed_time(e) * 1000.0 for b, e in events]
            answer["method"] = "cuda_event"
        else:
            answer["method"] = "perf_counter"
        if self.compile_s is not None:
            answer["compile_s"] = self.compile_s
        answer["kept_outputs"] = self._save_kept(kept, request)
        return answer

    def energy(self, request):
        """Energy per call from NVML's energy counter: the eager model called back to back on
        one input set (warm, no flush, one synchronise at the end) for `seconds`. The counter
        covers the whole GPU, idle parts included, and updates every few milliseconds: over a
        second that granularity is well under 1 %."""
        if not self.cuda or self.clocks.reason:
            return {"ok": True, "reason": self.clocks.reason or "unsupported: no GPU energy on the CPU"}
        model = self.model_for("eager")
        seconds = float(request.get("seconds", 1.0))
        inputs = self.pool[0]
        with torch.no_grad():
            for _ in range(3):
                self._call(model, inputs)
            runtime.synchronize(self.device)
            before, start = kn.nvml_energy_mj(), time.perf_counter()
            calls = 0
            while time.perf_counter() - start < seconds:
                self._call(model, inputs)
                calls += 1
            runtime.synchronize(self.device)
            after, elapsed = kn.nvml_energy_mj(), time.perf_counter() - start
        if before is None or after is None:
            return {"ok": True, "reason": "unsupported: NVML reports no energy counter for this GPU"}
        return {"ok": True, "calls": calls, "seconds": elapsed, "energy_mj": after - before}

    def _memory(self, model):
        """Peak device bytes one call adds: the caching allocator's peak above what was
        allocated before, and the raw allocations CUPTI saw (cudaMalloc the allocator or the
        candidate made)."""
        if not self.cuda:
            return None
        runtime.synchronize(self.device)
        torch.cuda.reset_peak_memory_stats(self.device)
        base = torch.cuda.memory_allocated(self.device)
        start = self.tracer.now_ns() if self.tracer.active else 0
        self._call(model, self.pool[0])
        runtime.synchronize(self.device)
        facts = {"allocator_peak_bytes": int(torch.cuda.max_memory_allocated(self.device) - base)}
        if self.tracer.active:
            summary = self.tracer.summarize([(start, self.tracer.now_ns())], self.caller_id, self.own)[0]
            facts["raw_allocated_bytes"] = int(summary["allocated_bytes"])
        return facts

    def _save_kept(self, kept, request):
        saved = []
        for i, (k, output) in sorted(kept.items()):
            path = Path(request["outputs_dir"]) / f"timed_{request.get('block', 0)}_{i}.outputs.safetensors"
            tensor_io.save_outputs(tensor_io.flatten_outputs(output, "the timed call"), path)
            saved.append({"call": i, "pool_index": k, "file": str(path)})
        return saved

