// kbench_native as an importable extension, for Python tests outside the worker.
#include "worker/native_bindings.hpp"

PYBIND11_MODULE(kbench_native, module) {
  kbench::worker::bind_native_module(module);
}
