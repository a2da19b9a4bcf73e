"""What each timed call runs on and what is kept of its result (docs/architecture.md, "Timed
inputs and the check of every timed output").

Inputs: every timed call gets a fresh input set, drawn by the problem's own get_inputs() right
before the call, outside the timed span, with torch's RNG seeded by that call's seed. The seeds
come from a secret the orchestrator draws from OS entropy for each evaluation, never from
--seed, and the candidate's process learns a call's seed only after its previous call returned
(measurement.py asks for it), so no input exists in its memory, or in any file, before the call
that uses it. Sizes stay the first trial's (PopcornBench's jitter is seeded with that trial's
seed). Factory calls draw on the evaluation's device (a `torch.device` context): a CPU draw of
the 16M-element inputs of a 4096x4096 matmul takes about 160 ms per call, on the H200 well
under a millisecond. A problem whose get_inputs() cannot run that way (it calls numpy on a
tensor, say) draws on the CPU; both processes decide the same way and report it.

Samples: after a call returns, the orchestrator sends a sample seed, and the call's outputs are
read at positions drawn from it: every element of an output of at most SAMPLE_ELEMENTS
elements, otherwise SAMPLE_ELEMENTS positions drawn uniformly. Process R draws the same
positions from the same seeds, so the orchestrator compares the candidate's values with the
reference's for the same inputs under the full tolerance rule.

Everything here calls torch through references captured when this module is imported, before
any candidate code runs: a candidate that replaces torch.Tensor.detach, torch.take or
torch.randint cannot change what the harness reads (integrity.py reports the replacement)."""

import torch

from . import runtime
from .errors import PhaseError

SAMPLE_ELEMENTS = 1024
_MASK63 = (1 << 63) - 1

_take = torch.take
_randint = torch.randint
_arange = torch.arange
_stack = torch.stack
_to = torch.Tensor.to
_numel = torch.Tensor.numel
_is_floating = torch.Tensor.is_floating_point
_sum = torch.Tensor.sum
_contiguous = torch.Tensor.contiguous
_Generator = torch.Generator
_manual_seed = torch.Generator.manual_seed
_Tensor = torch.Tensor


# The operators the harness runs in the candidate's process between timed calls (drawing and
# casting inputs, the L2 flush, reading samples). A kernel the candidate registers for one of
# them (TORCH_LIBRARY_IMPL(aten, CUDA, m) in its extension) would run its code there, untimed;
# identity checks of Python attributes cannot see that, the dispatcher's table can.
_WATCHED_OPS = (
    "aten::normal_", "aten::uniform_", "aten::random_", "aten::random_.from", "aten::random_.to",
    "aten::randn", "aten::rand", "aten::randint", "aten::randint.low", "aten::randperm",
    "aten::bernoulli_.float", "aten::exponential_", "aten::_to_copy", "aten::copy_", "aten::take",
    "aten::zero_", "aten::fill_.Scalar", "aten::sum.IntList_out", "aten::sum.dim_IntList",
    "aten::sum", "aten::arange.start_out", "aten::stack", "aten::cat", "aten::tril", "aten::triu",
    "aten::empty.memory_format", "aten::empty_strided", "aten::_local_scalar_dense",
)
# Keys a compiled extension would override; Python and Meta registrations come and go with
# what the process imports (torch.compile, Triton) and are left out.
_WATCHED_KEYS = ("CPU:", "CUDA:", "CompositeImplicitAutograd:", "CompositeExplicitAutograd:",
                 "CompositeExplicitAutogradNonFunctional:", "AutogradCPU:", "AutogradCUDA:",
                 "BackendSelect:")


def _dispatch_tables():
    tables = {}
    for op in _WATCHED_OPS:
        try:
            dump = torch._C._dispatch_dump_table(op)
        except RuntimeError:
            continue  # not an operator in this torch
        tables[op] = [line for line in dump.splitlines() if line.startswith(_WATCHED_KEYS)]
    return tables


_DISPATCH_BEFORE = _dispatch_tables()


def dispatch_overrides():
    """Operators in _WATCHED_OPS whose kernels changed since this module was imported."""
    now = _dispatch_tables()
    changed = []
    for op, lines in _DISPATCH_BEFORE.items():
        added = [line for line in now.get(op, []) if line not in lines]
        if added:
            changed.append(f"{op} ({added[0].split(' [')[0]})")
    return changed


def output_seed(sample_seed: int, output: int) -> int:
    """The positions' seed for one output of a call: the same in R and C."""
    return (sample_seed ^ ((output + 1) * 0x9E3779B97F4A7C15)) & _MASK63


class InputSource:
    """Draws the timed calls' inputs from the problem's get_inputs() under a per-call seed."""

    def __init__(self, problem, variant, shape_seed, device, dtype, where):
        self.problem = problem
        self.variant = variant
        self.shape_seed = int(shape_seed)
        self.device = device
        self.dtype = dtype
        self.where = where  # the problem's path, for messages
        self.on_device = device.type == "cuda"

    def draw(self, seed: int):
        from kernelbench import popcorn_random_inputs

        popcorn_random_inputs._begin_trial(self.shape_seed, self.variant)
        runtime.set_seed(int(seed) & _MASK63)
        if self.on_device:
            try:
                with torch.device(self.device):
                    values = self.problem.get_inputs()
            except Exception:
                # Decided once, by the first draw: the same in R and C.
                self.on_device = False
                return self.draw(seed)
        else:
            values = self.problem.get_inputs()
        if isinstance(values, _Tensor):
            values = [values]
        if not isinstance(values, (list, tuple)):
            raise PhaseError("harness_error", f"{self.where}: get_inputs() returned a {type(values).__name__}")
        return cast(values, self.device, self.dtype)

    def describe(self) -> str:
        return "device" if self.on_device else "cpu"


def cast(values, device, dtype):
    """runtime.cast_inputs through the captured Tensor.to."""
    out = []
    for value in values:
        if isinstance(value, _Tensor):
            value = _to(value, device=device, dtype=dtype if _is_floating(value) else None)
        out.append(value)
    return out


def fingerprint(values):
    """A float per input tensor (the sum of its elements in float64), to show that R and C drew
    the same inputs for the same seed."""
    return [
        float(_sum(_to(v, dtype=torch.float64))) if isinstance(v, _Tensor) and not v.is_complex() else None
        for v in values
    ]


def signature(outputs):
    """'float32[128, 10];float32[1]': what a call returned, to compare with the reference's."""
    return ";".join(f"{str(t.dtype).replace('torch.', '')}{list(t.shape)}" for t in outputs)


class Sampler:
    """Reads each timed call's outputs at positions drawn from the call's sample seed."""

    def __init__(self, device):
        self.device = device
        self.generator = _Generator(device=device)
        self.rows = []  # per call: one tensor of sampled values per output
        self.arange = {}

    def positions(self, sample_seed: int, output: int, numel: int):
        if numel <= SAMPLE_ELEMENTS:
            if numel not in self.arange:
                self.arange[numel] = _arange(numel, device=self.device)
            return self.arange[numel]
        _manual_seed(self.generator, output_seed(sample_seed, output))
        return _randint(numel, (SAMPLE_ELEMENTS,), generator=self.generator, device=self.device)

    def take(self, outputs, sample_seed: int):
        row = []
        for j, out in enumerate(outputs):
            row.append(_take(out, self.positions(sample_seed, j, _numel(out))))
        self.rows.append(row)

    def tensors(self):
        """{"output.<j>": [calls, k_j]} on the CPU, for the block's samples file."""
        if not self.rows:
            return {}
        count = len(self.rows[0])
        if any(len(row) != count for row in self.rows):
            raise PhaseError("incorrect", "the number of outputs changed between timed calls")
        out = {}
        for j in range(count):
            column = [row[j] for row in self.rows]
            if any(_numel(c) != _numel(column[0]) for c in column):
                raise PhaseError("incorrect", f"output {j} changed size between timed calls")
            out[f"output.{j}"] = _contiguous(_to(_stack(column), device="cpu"))
        return out
