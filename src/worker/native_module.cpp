// kbench_native as a module built into kbench-worker's interpreter.
#include "worker/native_bindings.hpp"

#include <pybind11/embed.h>

PYBIND11_EMBEDDED_MODULE(kbench_native, module) {
  kbench::worker::bind_native_module(module);
}
