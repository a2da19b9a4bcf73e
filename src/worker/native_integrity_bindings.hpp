#pragma once
// The integrity half of kbench_native: fingerprints of the C function pointers behind Python
// objects, so that the worker's integrity check (python/kbench/worker/api_watch.py) sees a
// torch method whose implementation was swapped in place from C++, not only one replaced by
// setattr.
#include <pybind11/pybind11.h>

namespace kbench::worker {

void bind_integrity_module(pybind11::module_& module);

} // namespace kbench::worker
