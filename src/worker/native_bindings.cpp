// kbench_native: the C++ pieces problems and phases reach from Python. The jitter RNG lives
// here (not in Python) so that the orchestrator's unit tests pin the very generator that
// draws shapes.
#include "worker/native_bindings.hpp"

#include "core/seeding.hpp"
#include "worker/native_integrity_bindings.hpp"
#include "worker/native_measure_bindings.hpp"

#include <string>
#include <tuple>

namespace py = pybind11;

namespace kbench::worker {

void bind_native_module(py::module_& module) {
  module.doc() = "kbench's native helpers for the embedded interpreter";
  py::class_<JitterRng>(module, "JitterRng")
      .def(py::init<std::uint64_t>(), py::arg("seed"))
      .def("uniform_int", &JitterRng::uniform_int, py::arg("lo"), py::arg("hi"),
           "Uniform integer in [lo, hi], inclusive")
      .def("uniform01", &JitterRng::uniform01, "Uniform float in [0, 1)")
      .def("next_u64", &JitterRng::next_u64);
  module.def(
      "jitter_bounds",
      [](std::int64_t n, double rel, std::int64_t floor_min) {
        const auto bounds = jitter_bounds(n, rel, floor_min);
        return std::make_tuple(bounds.lo, bounds.hi);
      },
      py::arg("n"), py::arg("rel"), py::arg("floor_min"));
  module.def(
      "derive_seed",
      [](std::uint64_t base, const std::string& stream, std::uint64_t index) {
        return derive_seed(base, stream, index);
      },
      py::arg("base_seed"), py::arg("stream"), py::arg("index"));
  module.def(
      "forward_seed", [](std::uint64_t trial_seed) { return forward_seed(trial_seed); },
      py::arg("trial_seed"));
  bind_measure_module(module);
  bind_integrity_module(module);
}

} // namespace kbench::worker
