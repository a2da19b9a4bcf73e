"""torch's callables as they were before any candidate code ran, for the harness's own reads.

A candidate can replace `torch.Tensor.detach` (or `.to`, `.clone`, ...) from Python or from C++,
so that its work runs only when the harness reads an output. The harness therefore never reads
a tensor through an attribute looked up at the time of the read: it calls these, taken from the
classes' own dictionaries when this module is first imported (integrity.py imports it before
the problem or the candidate is loaded). Replacing the attribute afterwards changes nothing here,
and integrity.py reports the replacement.

Each is called with the tensor first: `detach(t)`, `to(t, "cpu")`, `dtype(t)`, `shape(t)`.
"""

import threading
import time

import torch


def _static(cls, name):
    """`name` as the class defines it (its MRO's dictionaries), bypassing any __getattr__."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    raise AttributeError(f"{cls.__qualname__} has no attribute {name!r}")


Tensor = torch.Tensor
Parameter = torch.nn.Parameter
UntypedStorage = torch.UntypedStorage

# Tensor methods (method descriptors: call with the tensor as the first argument).
detach = _static(Tensor, "detach")
to = _static(Tensor, "to")
cpu = _static(Tensor, "cpu")
contiguous = _static(Tensor, "contiguous")
clone = _static(Tensor, "clone")
copy_ = _static(Tensor, "copy_")
narrow = _static(Tensor, "narrow")
is_contiguous = _static(Tensor, "is_contiguous")
view = _static(Tensor, "view")
reshape = _static(Tensor, "reshape")
flatten = _static(Tensor, "flatten")
take = _static(Tensor, "take")
numel = _static(Tensor, "numel")
element_size = _static(Tensor, "element_size")
is_floating_point = _static(Tensor, "is_floating_point")
size = _static(Tensor, "size")
untyped_storage = _static(Tensor, "untyped_storage")
data_ptr = _static(Tensor, "data_ptr")
tensor_eq = _static(Tensor, "__eq__")
tensor_all = _static(Tensor, "all")
storage_data_ptr = _static(UntypedStorage, "data_ptr")

# Tensor properties, as functions of the tensor.
dtype = _static(Tensor, "dtype").__get__
shape = _static(Tensor, "shape").__get__
device = _static(Tensor, "device").__get__

# torch functions.
equal = torch.equal
empty = torch.empty
randint = torch.randint
Generator = torch.Generator
no_grad = torch.no_grad
uint8 = torch.uint8

# Timers and the GPU's synchronisation and events.
perf_counter_ns = time.perf_counter_ns
perf_counter = time.perf_counter
monotonic_ns = time.monotonic_ns
cuda_synchronize = torch.cuda.synchronize
CudaEvent = torch.cuda.Event
event_record = _static(torch.cuda.Event, "record")
event_synchronize = _static(torch.cuda.Event, "synchronize")
event_elapsed_time = _static(torch.cuda.Event, "elapsed_time")
CudaStream = torch.cuda.Stream
cuda_stream_context = torch.cuda.stream

# What the thread checks read.
enumerate_threads = threading.enumerate
thread_is_alive = _static(threading.Thread, "is_alive")
native_thread_id = threading.get_native_id
