// kbench_native as a module built into kbench-worker's interpreter.
#include "worker/native_bindings.hpp"
#include "worker/protocol_loop.hpp"

#include <pybind11/embed.h>

PYBIND11_EMBEDDED_MODULE(kbench_native, module) {
  kbench::worker::bind_native_module(module);
  // Only the worker has a request channel: the timed blocks' per-call exchange.
  module.def(
      "interim_send",
      [](const std::string& message) {
        if (!kbench::worker::send_interim(message)) {
          throw std::runtime_error("the orchestrator closed the request channel");
        }
      },
      pybind11::arg("message"));
  module.def("interim_receive", []() -> std::string {
    const auto answer = kbench::worker::receive_interim();
    if (!answer) {
      throw std::runtime_error("the orchestrator closed the request channel");
    }
    return *answer;
  });
}
