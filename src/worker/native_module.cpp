// kbench_native as a module built into kbench-worker's interpreter.
#include "worker/native_bindings.hpp"
#include "worker/protocol_loop.hpp"

#include <pybind11/embed.h>

PYBIND11_EMBEDDED_MODULE(kbench_native, module) {
  kbench::worker::bind_native_module(module);
  // Only the worker has a request channel: the timed blocks' per-call exchange.
  module.def(
      "converse",
      [](const std::string& message) -> std::string {
        const auto answer = kbench::worker::converse(message);
        if (!answer) {
          throw std::runtime_error("the orchestrator closed the request channel");
        }
        return *answer;
      },
      pybind11::arg("message"));
}
