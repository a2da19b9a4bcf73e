"""The worker's half of the measurement engine (docs/architecture.md, "The measurement
contract"): blocks of timed calls that the orchestrator alternates between processes R and C.

Per call: a fresh input set drawn from the call's seed (timed_inputs.py), torch's generators
seeded again with the call's forward seed (untimed; runtime.seed_forward), an L2-sized buffer
zeroed and then a clean buffer of twice the L2's size read (unless warm; the read evicts the
dirty lines the zeroing and the draw leave, whose write-back otherwise lands in the timed call:
docs/timing-fidelity.md), a device synchronise, then the call on torch's default stream (CUDA's
legacy default stream, where a kernel launched as <<<grid, block>>> runs too), then a device
synchronise; then the call's outputs are sampled at positions drawn after it returned.
`host_us` is that span on the host clock; `device_us` is CUPTI's first-to-last GPU activity of
the call on every stream. Without CUPTI on a GPU, `device_us` falls back to CUDA events on the
caller's stream (and says so); on the CPU only `host_us` exists.

The candidate's process asks the orchestrator for each call's seed when its previous call has
returned (`_tell`, `_answer`), and gets the sample seed of the call that just returned with it; the
reference's process gets the same seeds with its request, after the candidate's block ran."""

import json
import time

import torch

from . import integrity, runtime, tensor_io
from .errors import PhaseError
from .integrity import perf_counter_ns
from .own_kernels import own_kernel_names
from .timed_inputs import InputSource, Sampler, dispatch_overrides, fingerprint, signature
from .tracing import Clocks, Tracer, call_facts

from .native import kn

_Event = torch.cuda.Event
_event_record = torch.cuda.Event.record
_event_synchronize = torch.cuda.Event.synchronize


def _bytes(values):
    return sum(t.numel() * t.element_size() for t in values if isinstance(t, torch.Tensor))


class TimingSession:
    def __init__(self, session, request):
        self.session = session
        self.device = session.device
        self.warm = bool(request.get("warm", False))
        self.cuda = self.device.type == "cuda"
        self.source = InputSource(
            session.problem, session.variant, request.get("shape_seed", 0), self.device, session.dtype,
            getattr(session, "problem_path", "the problem"),
        )
        self.tracer = Tracer(self.device)
        self.clocks = Clocks(self.device)
        self.own = own_kernel_names(getattr(session, "path", None))
        self.compiled = None
        self.compile_s = None
        self.input_bytes = _bytes(session.kept[1])
        self.output_bytes = None
        if self.cuda:
            # torch's default stream is CUDA's legacy default stream: the stream a candidate's
            # <<<grid, block>>> launch uses, ordered with the torch ops around it.
            self.stream = torch.cuda.default_stream(self.device)
            l2 = int(torch.cuda.get_device_properties(self.device).L2_cache_size)
            self.flush = torch.empty(max(l2, 1 << 20), dtype=torch.uint8, device=self.device)
            self.flush_read = torch.ones(max(2 * l2, 1 << 21) // 4, dtype=torch.float32, device=self.device)
            self.flush_sum = torch.empty((), dtype=torch.float32, device=self.device)
            self.tracer.measure_overhead(self.device)
            self.caller_id = None
            if self.tracer.active:
                self.caller_id = self.tracer.legacy_stream_id
                if self.caller_id is None:
                    # CUPTI named no id for the legacy stream: time on a stream of our own,
                    # whose id it resolves.
                    self.stream = torch.cuda.Stream(device=self.device)
                    self.caller_id = self.tracer.stream_id(self.stream)

    def describe(self):
        return {
            "tracing": "cupti" if self.tracer.active else self.tracer.reason,
            "tracing_overhead_us": self.tracer.overhead_us,
            "legacy_stream_id": self.tracer.legacy_stream_id,
            "clock": "nvml" if not self.clocks.reason else self.clocks.reason,
            "default_sm_mhz": self.clocks.default_sm_mhz,
            "own_kernels": self.own,
            "l2_flush_bytes": int(self.flush.numel()) if self.cuda and not self.warm else 0,
            "input_generation": self.source.describe(),
            "input_bytes": self.input_bytes,
            "output_bytes": self.output_bytes,
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
                    self.compiled(*self.session.kept[1])
            runtime.synchronize(self.device)
            self.compile_s = time.perf_counter() - start
        return self.compiled

    def _call(self, model, inputs):
        if self.cuda:
            with torch.cuda.stream(self.stream):
                return model(*inputs)
        return model(*inputs)

    def check_reproducible(self, seed):
        """The reference's first block: the same seed must draw the same inputs, or a timed
        output could never be checked against the reference's."""
        first, again = fingerprint(self.source.draw(seed)), fingerprint(self.source.draw(seed))
        if first != again:
            raise PhaseError(
                "harness_error",
                f"{self.source.where}: get_inputs() drew different inputs under the same torch seed "
                f"(sums {first} then {again}); kbench times every call on inputs drawn from a seed, so "
                "get_inputs() must draw only from torch's (or Python's, or numpy's) seeded RNG",
            )

    def block(self, request):
        model = self.model_for(request.get("target", "eager"))
        calls = int(request.get("calls", 10))
        seeds = request.get("seeds")  # given: process R; absent: ask before each call
        asks = seeds is None
        sample_seeds = request.get("sample_seeds")
        sampler = Sampler(self.device) if asks or sample_seeds is not None else None
        if seeds is not None and len(seeds) != calls:
            raise PhaseError("harness_error", f"time_block: {len(seeds)} seeds for {calls} calls")
        answer = {"ok": True, "host_us": []}
        signatures = {}
        with torch.no_grad():
            for _ in range(int(request.get("warmup", 0))):
                self._call(model, self.session.kept[1])
            runtime.synchronize(self.device)
            if request.get("memory"):
                answer["memory"] = self._memory(model)
            if not asks and request.get("check_inputs"):
                self.check_reproducible(seeds[0])
            # The candidate's process: threads it leaves running, patches, tracing stopped.
            watch = integrity.BlockWatch(tracing=self.cuda and self.tracer.active) if asks else None
            clock_before = self.clocks.read()
            windows, events = [], []
            if asks:
                _tell(0)
            seed = _answer()["seed"] if asks else seeds[0]
            for i in range(calls):
                inputs = self.source.draw(seed)
                if i == 0:
                    answer["input_fingerprint"] = fingerprint(inputs)
                # The call's forward seed: the trials' rule (core/seeding.hpp) over its secret
                # input seed, the same for R's and C's call on these inputs, so a forward that
                # samples noise draws the same numbers in both. Set here, before the flush and
                # the synchronise that open the timed span: seeding costs host time (torch's,
                # Python's and numpy's generators) that neither side's forward should be charged.
                runtime.seed_forward(kn.forward_seed(seed))
                if self.cuda and not self.warm:
                    with torch.cuda.stream(self.stream):
                        self.flush.zero_()
                        torch.sum(self.flush_read, dim=0, out=self.flush_sum)
                runtime.synchronize(self.device)
                traced = self.cuda and self.tracer.active
                start_ns = self.tracer.now_ns() if traced else 0
                if self.cuda:
                    begin, end = _Event(enable_timing=not traced), _Event(enable_timing=not traced)
                    _event_record(begin, self.stream)
                host_start = perf_counter_ns()
                output = self._call(model, inputs)
                if asks:
                    # Said as soon as forward returns, so that the sample seed the answer brings
                    # is drawn after the call, and is already here when the device is idle: the
                    # outputs are read at once, before anything else could change them.
                    _tell(i + 1)
                if self.cuda:
                    _event_record(end, self.stream)
                    _event_synchronize(end)
                    caller_done_ns = self.tracer.now_ns() if traced else 0
                runtime.synchronize(self.device)
                answer["host_us"].append((perf_counter_ns() - host_start) / 1000.0)
                if traced:
                    windows.append((start_ns, self.tracer.now_ns(), caller_done_ns))
                elif self.cuda:
                    events.append((begin, end))
                del inputs
                if asks:
                    reply = _answer()
                    sample_seed, seed = reply["sample_seed"], reply.get("seed")
                else:
                    sample_seed = sample_seeds[i] if sample_seeds is not None else None
                    seed = seeds[i + 1] if i + 1 < calls else None
                if sampler is not None:
                    outputs = _flat(output)
                    signatures.setdefault(signature(outputs), []).append(i)
                    sampler.take(outputs, sample_seed)
                    if self.output_bytes is None:
                        self.output_bytes = _bytes(outputs)
                del output
            if watch is not None:
                watch.check(f"timed block {request.get('block', 0)}")
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
        if asks and (changed := dispatch_overrides()):
            raise PhaseError(
                "incorrect",
                f"integrity check failed: the candidate registered its own kernel for {', '.join(changed[:3])}, "
                "an operator the harness runs between timed calls: its code would run there, untimed",
            )
        if sampler is not None:
            answer["samples"] = self._save_samples(sampler, request)
            answer["signatures"] = signatures
        return answer

    def _save_samples(self, sampler, request):
        tensors = sampler.tensors()
        path = f"{request['outputs_dir']}/timed_{request.get('block', 0)}.samples.safetensors"
        tensor_io.save_tensors(tensors, path)
        return {"file": path, "outputs": len(tensors)}

    def energy(self, request):
        """Energy per call from NVML's energy counter: the eager model called back to back on
        one input set (warm, no flush, one synchronise at the end) for `seconds`. The counter
        covers the whole GPU, idle parts included, and updates every few milliseconds: over a
        second that granularity is well under 1 %."""
        if not self.cuda or self.clocks.reason:
            return {"ok": True, "reason": self.clocks.reason or "unsupported: no GPU energy on the CPU"}
        model = self.model_for("eager")
        seconds = float(request.get("seconds", 1.0))
        inputs = self.session.kept[1]
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
        self._call(model, self.session.kept[1])
        runtime.synchronize(self.device)
        facts = {"allocator_peak_bytes": int(torch.cuda.max_memory_allocated(self.device) - base)}
        if self.tracer.active:
            summary = self.tracer.summarize([(start, self.tracer.now_ns())], self.caller_id, self.own)[0]
            facts["raw_allocated_bytes"] = int(summary["allocated_bytes"])
        return facts

def _tell(returned):
    """Tells the orchestrator that `returned` calls of this block have returned (0: the block is
    about to start); its answer (_answer) brings the next call's seed and the returned call's
    sample seed."""
    kn.interim_send(json.dumps({"interim": True, "returned": returned}))


def _answer():
    reply = json.loads(kn.interim_receive())
    if not isinstance(reply, dict):
        raise PhaseError("harness_error", "the orchestrator's per-call answer is not an object")
    return reply


def _flat(output):
    try:
        return tensor_io.flatten_outputs(output, "ModelNew")
    except TypeError as exc:
        raise PhaseError("incorrect", f"a timed call: {exc}")

