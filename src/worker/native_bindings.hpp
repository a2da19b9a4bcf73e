#pragma once
// The contents of the kbench_native module, shared by the module embedded in kbench-worker and
// the importable extension that Python tests load (tests/python).
#include <pybind11/pybind11.h>

namespace kbench::worker {

void bind_native_module(pybind11::module_& module);

} // namespace kbench::worker
