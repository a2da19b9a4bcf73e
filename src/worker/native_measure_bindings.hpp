#pragma once
// The measurement half of kbench_native: CUPTI activity tracing, the per-call activity summary
// and NVML clocks, for the worker's timing loop.
#include <pybind11/pybind11.h>

namespace kbench::worker {

void bind_measure_module(pybind11::module_& module);

} // namespace kbench::worker
